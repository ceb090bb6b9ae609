"""The KRaft scenarios' ``-p`` parameters: help text and range of every bound
(``state.Bounds``), and the choices of the string-valued ones."""
from __future__ import annotations

PARAM_HELP = {
    "brokers": ("brokers", 1, 3),
    "rf": ("replication factor", 1, 3),
    "partitions": ("partitions of the topic", 1, 2),
    "incarnations": ("creations of the name, the initial topic included", 1, 3),
    "deletes": ("DeleteTopics requests the admin issues", 0, 2),
    "initial_records": ("records already in the first incarnation", 0, 2),
    "crashes": ("broker crashes (each may be followed by a restart)", 0, 2),
    "failovers": ("controller failovers", 0, 2),
    "fences": ("times a running broker misses its heartbeats", 0, 2),
    "consumer": ("a consumer reads the topic", None, None),
    "records": ("records a producer may write (0: no producer)", 0, 2),
    "reset": ("the consumer's auto.offset.reset", None, None),
    "leader_epoch": ("leader epoch of the first incarnation when the story starts "
                     "(leader elections it went through before)", 0, 2),
    "liveness": ("also check the liveness property BrokerFinishesStartup, under fairness",
                 None, None),
    "adds": ("CreatePartitions requests the admin sends (0: none)", 0, 2),
    "target": ("the partition count a CreatePartitions request asks for", 1, 3),
    "members": ("members of a consumer group reading the topic (0: no group)", 0, 2),
    "recreate_partitions": ("partitions of a re-created topic (0: as partitions)", 0, 2),
    "fence_delay": ("a lease running out and the controller fencing the broker are two "
                    "steps (else one)", None, None),
}
CHOICES = {"reset": ("earliest", "latest", "none")}
