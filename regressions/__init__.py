"""kmc's own regression suite, shipped as package data: ``regressions.toml`` (the expected
verdict of every scenario x variant) and, beside it, one folder of stored counterexamples
per entry that expects a violation. ``kmc regress`` runs it when given no suite path."""
