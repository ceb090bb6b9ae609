"""The KRaft model's state types and bounds.

A ``World`` is the whole cluster: the controller quorum and its metadata log, the
brokers, the next topic ID to hand out, the consumer, the fault budget, and ghost
variables (what clients and followers read, which the properties look at).

Incarnations: the n-th topic created with the name ``A`` is incarnation n; topic IDs are
handed out once each (Uuid.randomUuid in ReplicationControlManager.createTopic) and are
``incarnation + 1``, so ID 2 is the first (0 and 1 are the ZERO and sentinel IDs).
Records in partition logs are the incarnation that was written, so a stale record is
visible as an incarnation that differs from the replica's.
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.model.kafka.broker import Hosted, Log  # noqa: F401 (the planes' shared records)
from kmc.model.records import fast_replace_all

TOPIC = "A"

# broker statuses, in the order of BrokerServer.startup and the first metadata publish
DOWN = "down"                # crashed: memory gone, logs and the local metadata log on disk
CATCHING_UP = "catching-up"  # registered; the metadata loader replays up to the HWM
LOGS_LOADED = "logs-loaded"  # first publish: image set, LogManager started
RUNNING = "running"          # ReplicaManager applied the initial delta; serving requests
HALTED = "halted"            # startup failed fatally (the process exited, and will again)


def inc_of(topic_id: int) -> int:
    return topic_id - 1


def id_of(inc: int) -> int:
    return inc + 1


class Broker(NamedTuple):
    status: str
    fetched: tuple   # epochs of the metadata batches in its local copy of the log (disk)
    image: object    # Image once published, None before the first publish
    logs: tuple      # model.kafka.broker.Log, sorted (on disk: survives a crash)
    hosted: tuple    # model.kafka.broker.Hosted, sorted (in memory)
    #: ``(partition, topic_id)`` of the ``<topic>-<partition>.<uniqueId>-delete``
    #: directories on disk, sorted: renamed by LogManager.asyncDelete, not yet removed
    #: by the kafka-delete-logs task (on disk: survives a crash; never served, never
    #: loaded). Only scenarios with a crash keep them (``logmanager``, "deletion").
    deleting: tuple = ()
    #: its registration was lost in a controller failover (written, never committed):
    #: BrokerLifecycleManager sends it again before any heartbeat (``startup``)
    reregister: bool = False
    #: ghost: the Raft epoch of the failover that lost this process's registration (0:
    #: none), until the process registers again or ends; UnfencedRegistered reads it
    lost_in: int = 0

    def __repr__(self):
        """The canonical encoding (``model.encoding``): the five-field form while no
        ``-delete`` directory is on disk and no registration was lost, so such a state
        encodes, and fingerprints, the same in every scenario; each of the other fields
        is printed, labelled, when set (still one encoding per value)."""
        head = (f"Broker(status={self.status!r}, fetched={self.fetched!r}, "
                f"image={self.image!r}, logs={self.logs!r}, hosted={self.hosted!r}")
        if self.deleting:
            head += f", deleting={self.deleting!r}"
        if self.reregister:
            head += ", reregister=True"
        return head + (f", lost_in={self.lost_in!r})" if self.lost_in else ")")


class Consumer(NamedTuple):
    """The consumer of partition 0: its metadata cache (``model.kafka.clients.ClientMeta``: the
    accepted ``(topic_id, leader, leader_epoch)`` or (), the topic ID known for the
    name, the last seen leader epoch), its fetch position (SubscriptionState; -1: none
    yet, to be set by ``auto.offset.reset``), and whether an error stopped it (reset
    policy ``none``: NoOffsetForPartitionException / OffsetOutOfRangeException raised to
    the application)."""
    meta: tuple
    known_id: int
    last_epoch: int
    pos: int
    failed: bool
    pos_leader: tuple  # (leader, leader_epoch) the position was last validated against
    pos_epoch: int     # leader epoch of the last record received (-1: none)


class Producer(NamedTuple):
    """The producer's metadata cache of partition 0 (as the consumer's, Metadata.java)
    and how many records it may still write."""
    meta: tuple
    known_id: int
    last_epoch: int
    left: int


class Budget(NamedTuple):
    crashes: int
    failovers: int
    fences: int  # missed-heartbeat faults of running brokers


class Ghost(NamedTuple):
    reads: tuple       # (reader, asked_inc, record_inc): consumer is reader 0
    wrote: tuple       # (believed_inc, landed_inc) of records the producer wrote
    attempts: tuple    # (asked_inc, served_inc) of fetches reaching a replica
    served: tuple      # (asked_leader_epoch, serving_leader_epoch) of fetches answered
    high: tuple        # highest image offset each broker ever published
    stale_meta: tuple  # (answering broker, topic_id) of Metadata answers naming a topic
                       # the controller had already removed
    failovers: tuple   # (new_epoch, a RemoveTopicRecord was uncommitted)
    strays: tuple      # (broker, topic_id) of stray logs found at startup
    consumed: tuple    # (inc, offset) of records the consumer received
    skipped: tuple     # (inc, offset) of records the consumer's position passed unread


class World(NamedTuple):
    quorum: object
    brokers: tuple
    next_id: int
    consumer: Consumer
    producer: Producer
    budget: Budget
    ghost: Ghost


class Member(NamedTuple):
    """A member of the consumer group (``group``): its metadata for the topic (``()``
    when the name is unknown, else ``(topic_id, ((leader, leader_epoch), ...))`` per
    partition), its assigned partitions with their positions ``(p, pos, leader,
    leader_epoch)`` (SubscriptionState; pos -1: none yet, -2: stopped by reset
    ``none``; leader and epoch the position was last validated against), and the
    highest incarnation any of its assignments was computed from."""
    meta: tuple
    pos: tuple
    newest: int


class Group(NamedTuple):
    """The consumer group and its coordinator on ``group.COORDINATOR``: whether it
    has joined (1) or not (0; the generation's number is not kept: nothing here reads
    it, and it would make the state space infinite), the
    partition count the leader's assignment was computed from (assignmentSnapshot; -1
    none yet), the members, the committed offsets per partition name ``(p, offset)``
    (__consumer_offsets is keyed by group, topic name and partition), and ghosts:
    ``consumed``/``skipped`` ``(inc, p, offset)`` records the group received / the
    offsets a position passed unread, ``stale`` ``(member, newest_inc, read_inc)``
    fetches answered from an incarnation older than one the member was assigned."""
    gen: int
    snapshot: int
    members: tuple
    committed: tuple
    consumed: tuple
    skipped: tuple
    stale: tuple
    #: the leader epoch committed with each offset ``(p, epoch)`` (OffsetAndMetadata.
    #: leaderEpoch: the position's epoch, SubscriptionState.allConsumed), none for an
    #: offset committed without one
    committed_epochs: tuple = ()


class FeatureWorld(NamedTuple):
    """``World`` with the in-flight CreatePartitions requests ``(target, sent_inc)``
    (``sent_inc``: the incarnation live in the committed metadata when the admin sent
    it, 0 none), the CreatePartitions requests the admin may still send, the consumer
    group (None without one) and the outcomes of handled requests ``(sent_inc,
    resolved_inc or 0, error or "")``. Only scenarios with CreatePartitions or a group
    use it, so every other scenario's states keep their encoding."""
    quorum: object
    brokers: tuple
    next_id: int
    consumer: Consumer
    producer: Producer
    budget: Budget
    ghost: Ghost
    requests: tuple
    adds_left: int
    group: object
    expansions: tuple


class Bounds(NamedTuple):
    brokers: int = 2
    rf: int = 2
    partitions: int = 1
    incarnations: int = 2
    deletes: int = 1
    initial_records: int = 1
    crashes: int = 0
    failovers: int = 0
    fences: int = 0
    consumer: bool = False
    records: int = 0
    reset: str = "earliest"
    leader_epoch: int = 0
    liveness: bool = False
    adds: int = 0
    target: int = 2
    members: int = 0
    recreate_partitions: int = 0
    fence_delay: bool = False


fast_replace_all(globals())  # generated _replace: cheaper successor construction
