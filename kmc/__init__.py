"""kmc: the Kafka topic-lifecycle model checker. Public API: ``kmc.api.check``/``build``."""
