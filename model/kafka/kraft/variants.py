"""KRaft variants as data: one ``Flags`` value per variant.

``kraft`` is today's behaviour (the 3.9 branch and trunk of 2024-10-25; KAFKA-14616's fix
included: stray logs are detected and moved aside while LogManager starts, before
ReplicaManager creates replicas). Two kinds of other variants:

- mutants (``MUTANTS``): ``kraft`` with exactly one safeguard removed; the regression
  suite shows each one caught by a property;
- release lines (``RELEASE_LINES``): ``kraft`` with the behaviour an older release
  line had where Kafka's history shows it changed, each flag cited:

  - ``kraft-3.6`` (brokers 3.3.0 to 3.6.x): stray logs found at startup were deleted
    only after ReplicaManager had applied the first delta
    (BrokerMetadataPublisher.finishInitializingReplicaManager -> ReplicaManager.
    deleteStrayReplicas, from KAFKA-13127, commit a75997f2794). KAFKA-14616 (commit
    f7feb43af35 on trunk; in 3.7.0) moved the check before replicas are created:
    initializeManagers calls LogManager.deleteStrayKRaftReplicas right after
    LogManager.startup in 3.7.0, and LogManager.loadLog checks isStrayKraftReplica
    from 3.7.1 and 3.8.0 (KAFKA-16814). From 3.7.0 a stray is moved aside (renamed
    to -stray and kept on disk, KAFKA-15605), not deleted.
  - ``kraft-clients-3.0``: today's brokers with 3.0.0 clients. Metadata.
    updateLatestMetadata compares topic IDs only when both the cached and the answered
    one are known (KAFKA-12257, first form; KAFKA-13488, commits b2a9dfd5a0b in 3.0.1
    and 0a51be27ddd in 3.1.0, drops the "cached one known" condition:
    model/kafka/clients.py);
    the consumer's Fetch names topics by name (FetchRequest.json "validVersions":
    "0-12" in 3.0.0; v13 with topic IDs came in 3.1.0).
  - ``kraft-clients-2.8``: today's brokers with 2.8.0 / 2.8.1 clients: the leader epoch
    alone decides (no topic IDs in Metadata.java before 2.8.2), and Fetch by name.

  Neither client line nor brokers before 3.7.0 (``kraft-3.6``) have KIP-951's leader
  hint in Produce answers (``leader_hint``: brokers KAFKA-15661, commit f38b0d886c0;
  clients KAFKA-15627, commit a9565a799f3; both in 3.7.0).

  - ``kraft-3.7.0``: KAFKA-14616's stray check in LogManager's startup
    (LogManager.findStrayReplicas in 3.7.0) throws "does not have a topic ID" for a log
    without partition.metadata; BrokerMetadataPublisher.initializeManagers hands that
    to the fatal fault handler, so the broker exits, and does so at every restart.
    KAFKA-16814 (commit 9aad16e55df in 3.7.1, 04f7ed4c104 in 3.8.0) treats such a log
    as stray (moved aside).
    Brokers 3.3-3.6 (``kraft-3.6``) threw the same error from findStrayPartitions in
    finishInitializingReplicaManager, where metadataPublishingFaultHandler logs it:
    the broker runs on and no stray log is deleted. The window exists since
    partition.metadata is flushed asynchronously (commit 584213ed20d, in 3.1.0).

  Read and found unchanged from 3.3.0 to trunk, so no flag: a deleted replica's log
  renamed to ``-delete`` and removed later, and a ``-delete`` directory found at
  startup queued again, never loaded (LogManager.asyncDelete, deleteLogs, loadLog;
  ``deletion``). Read and left out: 3.3 and 3.4 opened the brokers' ports before the
  first unfencing, 3.5.0 on after it (commit 5d597b0fc81 moved
  SocketServer.enableRequestProcessing after setReadyToUnfence); the model lets a
  running broker answer requests before its first unfencing, which covers both.

  KRaft brokers before 3.3 (early access in 2.8, preview in 3.0) are not modelled:
  their startup and delta handling (RaftReplicaManager, BrokerMetadataListener) differ
  from what the model follows, and reading them was not done.
"""
from __future__ import annotations

from typing import NamedTuple


class Flags(NamedTuple):
    #: brokers replay only committed metadata (MetadataLoader gets handleCommit batches)
    committed_only: bool
    #: LogManager.startup moves stray logs aside (LogManager.isStrayKraftReplica)
    stray_detection: bool
    #: stray detection runs before ReplicaManager applies the first delta (KAFKA-14616)
    strays_before_replicas: bool
    #: brokers compare partitions by topic ID (getOrCreateLog, stray check, Fetch)
    topic_ids: bool
    #: fencing a broker moves its leaderships away (handleBrokerFenced)
    fence_moves_leaders: bool
    #: the clients' rule for replacing cached partition metadata (model.kafka.clients.RULES)
    client_rule: str = "ids"
    #: the consumer's Fetch carries topic IDs (FetchRequest v13, clients 3.1 and later)
    client_fetch_ids: bool = True
    #: a log without partition.metadata at startup: "stray" (deleted, KAFKA-16814),
    #: "halt" (the stray check throws in LogManager's startup: fatal), "abort-strays"
    #: (the stray check throws after replicas are created: no stray is deleted)
    missing_id: str = "stray"
    #: the group coordinator deletes a removed topic's committed offsets
    #: (BrokerMetadataPublisher.onMetadataUpdate -> groupCoordinator.onPartitionsDeleted)
    group_offsets_deleted: bool = True
    #: a consumer's Fetch reads below the high watermark only (FetchIsolation.of)
    consumer_reads_committed: bool = True
    #: KIP-951 (3.7.0: brokers f38b0d886c0, clients a9565a799f3): a Produce answered
    #: NOT_LEADER_OR_FOLLOWER carries the broker's CurrentLeader, which the producer
    #: takes when its leader epoch is newer (Metadata.updatePartitionLeadership)
    leader_hint: bool = True
    #: a registration a controller failover left unanswered is sent again before the
    #: broker is unfenced (NodeToControllerRequestThread.handleResponse requeues a request
    #: answered NOT_CONTROLLER; ``startup.register_again``)
    registration_resent: bool = True


KRAFT = Flags(committed_only=True, stray_detection=True, strays_before_replicas=True,
              topic_ids=True, fence_moves_leaders=True)

#: variant name -> (flags, one-line description)
VARIANTS: dict[str, tuple[Flags, str]] = {
    "kraft": (KRAFT, "Kafka 3.9 and trunk: committed metadata only, stray logs moved aside "
                     "before replicas are created, topic IDs compared"),
    "uncommitted-reads": (KRAFT._replace(committed_only=False),
                          "mutant: brokers act on metadata records not yet committed"),
    "no-stray-detection": (KRAFT._replace(stray_detection=False),
                           "mutant: no stray-log detection at startup"),
    "stray-after-replicas": (KRAFT._replace(strays_before_replicas=False),
                             "mutant: stray logs are removed after replicas are created "
                             "(before KAFKA-14616)"),
    "compare-by-name": (KRAFT._replace(topic_ids=False),
                        "mutant: brokers compare topics by name, not ID"),
    "fenced-keeps-leadership": (KRAFT._replace(fence_moves_leaders=False),
                                "mutant: a fenced broker keeps serving as leader"),
    "consumer-reads-log-end": (KRAFT._replace(consumer_reads_committed=False),
                               "mutant: a consumer's Fetch reads up to the leader's log "
                               "end, past the high watermark"),
    "no-registration-resend": (KRAFT._replace(registration_resent=False),
                               "mutant: a registration a controller failover left "
                               "unanswered is not sent again; the broker is unfenced under "
                               "its previous one"),
}

#: release-line variants: name -> (flags, one-line description)
RELEASE: dict[str, tuple[Flags, str]] = {
    "kraft-3.6": (KRAFT._replace(strays_before_replicas=False, missing_id="abort-strays",
                                 leader_hint=False),
                  "brokers 3.3-3.6: stray logs removed after replicas are created "
                  "(fixed by KAFKA-14616 in 3.7.0); a log without partition.metadata "
                  "aborts the stray cleanup"),
    "kraft-3.7.0": (KRAFT._replace(missing_id="halt"),
                    "brokers 3.7.0: a log without partition.metadata makes startup fail "
                    "(fixed by KAFKA-16814 in 3.7.1)"),
    "kraft-clients-3.0": (KRAFT._replace(client_rule="ids-both", client_fetch_ids=False,
                                         leader_hint=False),
                          "today's brokers, 3.0.0 clients: topic IDs compared only when "
                          "both are known (KAFKA-13488, fixed in 3.0.1), Fetch by name"),
    "kraft-clients-2.8": (KRAFT._replace(client_rule="epoch", client_fetch_ids=False,
                                         leader_hint=False),
                          "today's brokers, 2.8.0/2.8.1 clients: the leader epoch alone "
                          "decides (KAFKA-12257, fixed in 2.8.2), Fetch by name"),
}

MUTANTS = tuple(VARIANTS)[1:]
RELEASE_LINES = tuple(RELEASE)
VARIANTS.update(RELEASE)
VARIANT_NAMES = tuple(VARIANTS)


def flags(variant: str) -> Flags:
    return VARIANTS[variant][0]
