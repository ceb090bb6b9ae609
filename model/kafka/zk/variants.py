"""Protocol variants as data: one ``Flags`` value per variant, chosen in one place.

``legacy`` is ZooKeeper-era Kafka before KIP-516 (names only, deletion finishes when every
replica acknowledged StopReplica): the 2.7 line and earlier. ``kip516`` is the accepted
KIP. Each mutant is ``kip516`` with exactly one guard removed; the regression suite proves
each is caught.

Release lines (``RELEASE_LINES``) are the ZooKeeper-mode controller and brokers as
shipped, each at its own inter.broker.protocol.version. Read in apache/kafka (tags 2.7.0
to 3.8.0 and the 3.9 branch; ZooKeeper mode ends with 3.9):

- every line deletes through /admin/delete_topics (TopicDeletionManager: no behaviour
  change from 2.7.0 to 3.9) and never sends a FULL LeaderAndIsr
  (ControllerChannelManager.sendLeaderAndIsrRequest sets no Type before 3.7; from
  3.7 on only MigrationPropagator, the KRaft migration, sets one: KAFKA-15605);
- StopReplicaRequest.json and ProduceRequest.json have no topic ID in any version up
  to 3.9: both name the topic;
- ``zk-2.8`` (2.8.1, 2.8.2): topic IDs in the znode and in LeaderAndIsr v5 (KAFKA-10545,
  commit 1dd1e7f945d). ReplicaManager.becomeLeaderOrFollower calls
  Partition.checkOrSetTopicId (KAFKA-12332, commit 0b4aa2b2dfd on 2.8), which compares
  the request's ID with the Partition's own log only: a log loaded from disk at restart
  is attached after the check (makeLeader/makeFollower -> createLogIfNotExists), and a
  new log is created without an ID; an attached log without an ID takes the request's,
  flushed asynchronously since 2.8.1 (KAFKA-13092, commit fb47f6a9b7d; 2.8.0 wrote it
  at once). A mismatch is answered INCONSISTENT_TOPIC_ID and the partition is left as
  it is.
- ``zk-3.0``: KAFKA-12426 (commit 40f001cc537, in 3.0.0) passes the topic ID to
  LogManager.getOrCreateLog, so a new log has it at once, and Partition.topicId falls
  back to logManager.getLog, so a log loaded at restart is checked too.
- ``zk-3.9`` (3.1 to 3.9): Fetch by topic ID (KAFKA-10580, commit 2b8aff58b57, in
  3.1.0: FetchRequest v13; ReplicaFetcherThread uses it from IBP 3.1), the leader
  answers INCONSISTENT_TOPIC_ID / UNKNOWN_TOPIC_ID (ReplicaManager.readFromLocalLog,
  renamed readFromLog in 3.6).
  No later change of these paths was found up to the 3.9 branch.
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
    #: the leader answers a consumer's Fetch below its high watermark only
    #: (FetchIsolation.HIGH_WATERMARK); otherwise up to its log end
    consumer_reads_committed: bool = True
    #: a LeaderAndIsr for a partition the broker already holds keeps its log
    lair_keeps_log: bool = True
    #: StopReplica deletes a partition only when its topic ID matches the request's
    stop_replica_checks_id: bool = True
    # ---- where ZooKeeper-mode Kafka as shipped differs from the KIP (see above) ----------
    #: the controller marks LeaderAndIsr FULL / INCREMENTAL (ZooKeeper controllers never
    #: set the Type field: ControllerChannelManager.sendLeaderAndIsrRequest)
    lair_type: bool = True
    #: a LeaderAndIsr partition whose topic ID differs from the local log's replaces the
    #: log (KIP-516); otherwise it is answered INCONSISTENT_TOPIC_ID and left as it is
    #: (ReplicaManager.becomeLeaderOrFollower, 2.8.0 to 3.9)
    id_mismatch_stages: bool = True
    #: a log created by LeaderAndIsr gets the request's topic ID at once
    #: (LogManager.getOrCreateLog(topicId), KAFKA-12426, 3.0.0); otherwise only a later
    #: LeaderAndIsr assigns it (Partition.checkOrSetTopicId, 2.8)
    id_at_creation: bool = True
    #: the topic-ID check also sees a log loaded from disk that no LeaderAndIsr attached
    #: since the restart (Partition.topicId falls back to LogManager.getLog, KAFKA-12426,
    #: 3.0.0); otherwise such a log is attached unchecked (2.8: checkOrSetTopicId reads
    #: the Partition's own log, None until makeLeader/makeFollower)
    id_check_on_disk: bool = True
    #: StopReplica names the topic ID (KIP-516 "StopReplica"); otherwise the name only
    #: (StopReplicaRequest.json: no topic ID up to 3.9)
    stop_replica_ids: bool = True
    #: Produce names the topic ID (KIP-516 "Produce"); otherwise the name only
    #: (ProduceRequest.json: no topic ID up to 3.9)
    produce_topic_id: bool = True


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
    "kip516-consumer-reads-log-end": (KIP516._replace(consumer_reads_committed=False),
                                      "mutant: the leader answers a consumer's Fetch up "
                                      "to its log end, past the high watermark"),
    "kip516-lair-wipes-replica": (KIP516._replace(lair_keeps_log=False),
                                  "mutant: a LeaderAndIsr with a newer leader epoch "
                                  "replaces the local replica with an empty one"),
    "kip516-stop-replica-by-name": (KIP516._replace(stop_replica_checks_id=False),
                                    "mutant: StopReplica deletes the partition of that name "
                                    "whatever its topic ID"),
}

MUTANTS = tuple(n for n in VARIANTS if n.startswith("kip516-"))

#: ZooKeeper mode as shipped from 2.8 on: topic IDs in the znode and in LeaderAndIsr v5,
#: deletion through /admin/delete_topics, no FULL LeaderAndIsr, a topic-ID mismatch
#: refused, StopReplica, Produce and (before 3.1) Fetch by name. The follower applies a
#: fetch response while the partition's fetch state is ready and at the offset it asked
#: for, whatever the leader epoch (AbstractFetcherThread.processFetchRequest); a
#: LeaderAndIsr that bumps the epoch and keeps the leader restarts the fetch state at the
#: same offset (ReplicaManager.makeFollowers; AbstractFetcherThread.partitionFetchState:
#: Fetching with truncation on fetch, from inter-broker protocol 2.7), so a response
#: fetched at the older epoch is still applied
ZK_2_8 = LEGACY._replace(topic_ids=True, incremental_id_check=True, lair_type=False,
                         id_mismatch_stages=False,
                         id_at_creation=False, id_check_on_disk=False,
                         stop_replica_ids=False, produce_topic_id=False,
                         follower_epoch_check=False)
ZK_3_0 = ZK_2_8._replace(id_at_creation=True, id_check_on_disk=True)
ZK_3_9 = ZK_3_0._replace(fetch_topic_id=True)

#: release-line variants: name -> (flags, one-line description)
RELEASE: dict[str, tuple[Flags, str]] = {
    "zk-2.8": (ZK_2_8, "ZooKeeper mode 2.8.1-2.8.2: topic IDs in LeaderAndIsr; a new log "
                       "gets its ID only from a later LeaderAndIsr, a log loaded at "
                       "restart is not checked (fixed by KAFKA-12426 in 3.0.0)"),
    "zk-3.0": (ZK_3_0, "ZooKeeper mode 3.0.x: topic ID at log creation and checked "
                       "against logs on disk; a mismatch is refused "
                       "(INCONSISTENT_TOPIC_ID); Fetch by name"),
    "zk-3.9": (ZK_3_9, "ZooKeeper mode 3.1-3.9: as 3.0, and Fetch by topic ID "
                       "(KAFKA-10580, FetchRequest v13)"),
}
RELEASE_LINES = tuple(RELEASE)
VARIANTS.update(RELEASE)
VARIANT_NAMES = tuple(VARIANTS)


def flags(variant: str) -> Flags:
    return VARIANTS[variant][0]
