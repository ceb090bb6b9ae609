"""Protocol variants as data: one ``Flags`` value per variant, chosen in one place.

``legacy`` is ZooKeeper-era Kafka before KIP-516 (names only, deletion finishes when every
replica acknowledged StopReplica). ``kip516`` is the accepted KIP. Each mutant is
``kip516`` with exactly one guard removed; the regression suite proves each is caught.
"""
from __future__ import annotations

from typing import NamedTuple


class Flags(NamedTuple):
    #: topic IDs in the znode, LeaderAndIsr, StopReplica, Produce; partition.metadata file
    topic_ids: bool
    #: KIP-516 "DeleteTopics": the znode is removed at once and the request answered;
    #: otherwise the legacy /admin/delete_topics marker waits for every replica
    immediate_delete: bool
    #: brokers reconcile a FULL LeaderAndIsr: stage partitions absent or with another ID
    full_reconcile: bool
    #: the new controller's first LeaderAndIsr after a failover is FULL
    failover_sends_full: bool
    #: an INCREMENTAL LeaderAndIsr with a topic-ID mismatch stages the local partition
    incremental_id_check: bool
    #: follower and consumer Fetch carry the topic ID; the leader and the follower check it
    fetch_topic_id: bool
    #: unsuccessful StopReplica requests are retried
    retry_stop_replica: bool
    #: brokers reject requests from an older controller epoch
    epoch_fencing: bool
    #: a leader election writes the next leader epoch (KIP-101/KIP-320 rely on it)
    bump_leader_epoch: bool = True
    #: a follower applies a FetchResponse only at the leader epoch it fetched at (KIP-320)
    follower_epoch_check: bool = True
    #: a consumer that sees a new topic ID reads the new topic from its start
    reset_position_on_new_id: bool = True
    #: a LeaderAndIsr for a partition the broker already holds keeps its log
    lair_keeps_log: bool = True
    #: StopReplica deletes a partition only when its topic ID matches the request's
    stop_replica_checks_id: bool = True


KIP516 = Flags(topic_ids=True, immediate_delete=True, full_reconcile=True,
               failover_sends_full=True, incremental_id_check=True, fetch_topic_id=True,
               retry_stop_replica=True, epoch_fencing=True)

LEGACY = Flags(topic_ids=False, immediate_delete=False, full_reconcile=False,
               failover_sends_full=False, incremental_id_check=False, fetch_topic_id=False,
               retry_stop_replica=True, epoch_fencing=True)

#: variant name -> (flags, one-line description)
VARIANTS: dict[str, tuple[Flags, str]] = {
    "legacy": (LEGACY, "names only; deletion waits for every replica's StopReplica"),
    "kip516": (KIP516, "topic IDs, immediate deletion, FULL/INCREMENTAL reconciliation"),
    "kip516-no-fetch-id": (KIP516._replace(fetch_topic_id=False),
                           "mutant: Fetch carries no topic ID"),
    "kip516-incremental-ignores-id": (KIP516._replace(incremental_id_check=False),
                                      "mutant: INCREMENTAL LeaderAndIsr ignores a topic-ID "
                                      "mismatch"),
    "kip516-failover-incremental": (KIP516._replace(failover_sends_full=False),
                                    "mutant: the new controller sends INCREMENTAL, not FULL"),
    "kip516-no-stop-replica-retry": (KIP516._replace(retry_stop_replica=False),
                                     "mutant: a failed StopReplica is never retried"),
    "kip516-no-epoch-fencing": (KIP516._replace(epoch_fencing=False),
                                "mutant: brokers accept requests from an older controller "
                                "epoch"),
    "kip516-epoch-reuse": (KIP516._replace(bump_leader_epoch=False),
                           "mutant: a leader election keeps the old leader epoch"),
    "kip516-follower-ignores-epoch": (KIP516._replace(follower_epoch_check=False),
                                      "mutant: a follower applies a FetchResponse fetched "
                                      "at an older leader epoch"),
    "kip516-consumer-keeps-position": (KIP516._replace(reset_position_on_new_id=False),
                                       "mutant: a consumer keeps its position when the "
                                       "topic ID changes"),
    "kip516-lair-wipes-replica": (KIP516._replace(lair_keeps_log=False),
                                  "mutant: a LeaderAndIsr with a newer leader epoch "
                                  "replaces the local replica with an empty one"),
    "kip516-stop-replica-by-name": (KIP516._replace(stop_replica_checks_id=False),
                                    "mutant: StopReplica deletes the partition of that name "
                                    "whatever its topic ID"),
}

VARIANT_NAMES = tuple(VARIANTS)
MUTANTS = tuple(n for n in VARIANTS if n.startswith("kip516-"))


def flags(variant: str) -> Flags:
    return VARIANTS[variant][0]
