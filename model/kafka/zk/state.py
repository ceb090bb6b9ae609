"""State types of the ZooKeeper-era cluster. All immutable NamedTuples of ints/strs/tuples.

``World`` is the one state of the ZooKeeper-era cluster, whichever feature a scenario runs:
the topic lifecycle (this package) and KIP-253's partition procedure
(``model.kafka.kip253``) read and write the same store, controller memory, brokers and
network in it. Each feature's clients and history have fields of their own, which the
other feature's scenarios leave at their initial values: the lifecycle's admin script,
producer, consumer, budgets and CreatePartitions requests; the procedure's AlterTopic
script (``Admin.alters``), keyed producers and consumer group (``producers``, ``group``)
and its history (``Ghost.delivered``, ``removed``, ``failover_in``).

One topic name (``TOPIC``) is modelled; its successive creations are *incarnations*
1, 2, ... (ghost numbers that every record, replica and client belief carries, so the
invariants can say "another incarnation"). In kip516 the topic ID of incarnation i is
``FIRST_ID + i - 1``; in legacy it is ``ZERO_ID`` (no ID).

The messages in flight are the catalogue's (``model.kafka.messages``); the brokers and
their replicas are the cluster's ZooKeeper-era broker records (``model.kafka.broker``).

Every state type uses the plain tuple ``repr`` (a C function): the canonical encoding
(``model.encoding``) is ``repr``, and the generated NamedTuple ``repr`` is Python code
that dominated fingerprinting. The encoding stays canonical: a field's type is fixed by
its position, and message types differ in their first field (the kind).
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.model.kafka.controller import ControllerState, Memory
from kmc.model.kafka.store import Store
from kmc.model.records import fast_replace_all

TOPIC = "A"


class Bounds(NamedTuple):
    """A scenario's bounds and options (the ``-p`` parameters)."""
    brokers: int = 2
    partitions: int = 1
    rf: int = 2               # replication factor of every incarnation
    incarnations: int = 2     # creations of the name, the initial topic included
    deletes: int = 1          # DeleteTopics the admin issues
    records: int = 0          # records the producer may write (0: no producer)
    consumer: bool = False    # a consumer reads the topic
    initial_records: int = 1  # records already in incarnation 1's log
    crashes: int = 0          # broker crashes (each may be followed by a restart)
    failovers: int = 0        # controller failovers
    reassign: int = 0         # reassignments away from a down broker
    loss: bool = False        # StopReplica requests may be lost
    reorder: bool = False     # messages between two endpoints may be reordered
    purge_delay: bool = False  # deleting/ is purged by a later step (else at once)
    liveness: bool = False    # also check the liveness properties (model.kafka.zk.liveness)
    adds: int = 0             # CreatePartitions requests the admin sends (0: none)
    target: int = 2           # the partition count a CreatePartitions request asks for


class Admin(NamedTuple):
    next_op: str     # "delete" | "create" | "done": create after a successful delete
    creates: int     # CreateTopics left
    deletes: int     # DeleteTopics left
    known_id: int    # topic ID from the last CreateTopics response (kip516)
    outcome: tuple   # (op, error) of the last response; () before any
    #: the KIP-253 procedure's admin (``kip253.clients``): the index of the next scripted
    #: AlterTopic, and the error codes returned so far
    alters: int = 0
    alter_errors: tuple = ()
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


class Meta(NamedTuple):
    """A client's metadata for the topic."""
    topic_id: int
    inc: int       # ghost: the incarnation the client believes it uses
    leaders: tuple  # per partition: (leader, leader_epoch)
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


class Client(NamedTuple):
    meta: object      # Meta, or None before the first refresh / after the topic vanished
    left: int         # producer: records it may still write
    positions: tuple  # consumer: next offset per partition
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


class Ghost(NamedTuple):
    reads: tuple = ()      # sorted (reader, asked_inc, record_inc); reader 0 = consumer
    attempts: tuple = ()   # sorted (asked_inc, served_inc) of fetches that reached a broker
    wrote: tuple = ()      # sorted (believed_inc, landed_inc) of appended producer records
    failovers: tuple = ()  # (new controller epoch, 1 if a deletion was pending else 0)
    leaders: tuple = ()    # sorted (inc, partition, leader epoch, leader) the store ever named
    appends: tuple = ()    # sorted (partition, epoch fetched at, follower's epoch) of appends
    acked: tuple = ()      # sorted (inc, partition, offset) acknowledged (acks=all: every
                           # in-sync replica held it); incarnation 1's initial records included
    consumed: tuple = ()   # sorted (inc, partition, offset) the consumer read
    expansions: tuple = ()  # sorted (sent_inc, resolved_inc, error) of answered
                            # CreatePartitions: the live incarnation when the admin sent
                            # it, the one whose znode it read (an error) or rewrote (0:
                            # none)
    reassigned: int = 0     # reassignments done (BudgetsAccounted counts them)
    # the KIP-253 procedure's history (``kip253``):
    delivered: tuple = ()   # per producer, per key class: ((seq, partition), ...) in
                            # delivery order
    removed: tuple = ()     # sorted: partitions removed after being marked for deletion
    failover_in: tuple = ()  # sorted: procedure kinds ("expand", "shrink", "idle") a
                             # failover hit
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


class Budget(NamedTuple):
    crashes: int
    failovers: int
    reassign: int
    adds: int = 0  # CreatePartitions the admin may still send
    #: what the scenario gives, constant: ((budget, amount), ...) for the budgets whose
    #: steps the state also counts another way (BudgetsAccounted)
    given: tuple = ()
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


class World(NamedTuple):
    store: Store
    ctl: ControllerState
    mem: Memory
    brokers: tuple  # Broker (model.kafka.broker), index = broker id - 1
    net: tuple      # model.kafka.network value
    admin: Admin
    producer: Client
    consumer: Client
    budget: Budget
    ghost: Ghost
    #: CreatePartitions requests in flight, sorted (target, sent_inc, read, reader):
    #: ``read`` is () until a controller's broker read the znode, then the (existing,
    #: new) assignments; ``reader`` the controller whose broker read it (0 before)
    requests: tuple = ()
    #: the KIP-253 procedure's clients (``kip253.state``): its keyed producers (of
    #: ``Producer``) and its consumer group (a ``Group``; None without the procedure)
    producers: tuple = ()
    group: object = None
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


#: the fields of ``World`` (key "") and of its parts that belong to the KIP-253 procedure;
#: the rest belong to the topic lifecycle. A scenario of one feature leaves the other's at
#: their initial values, and its traces leave them out (``format_without``)
PROCEDURE_FIELDS = {"": ("producers", "group"), "admin": ("alters", "alter_errors"),
                    "ghost": ("delivered", "removed", "failover_in")}
#: the World's fields both features read and write
SHARED_FIELDS = ("store", "ctl", "mem", "brokers", "net", "admin", "ghost")


def _rest(cls, taken) -> tuple:
    return tuple(f for f in cls._fields if f not in taken)


LIFECYCLE_FIELDS = {"": _rest(World, SHARED_FIELDS + PROCEDURE_FIELDS[""]),
                    "admin": _rest(Admin, PROCEDURE_FIELDS["admin"]),
                    "ghost": _rest(Ghost, PROCEDURE_FIELDS["ghost"])}
FEATURE_FIELDS = {"lifecycle": LIFECYCLE_FIELDS, "procedure": PROCEDURE_FIELDS}


def format_without(js: dict, feature: str) -> dict:
    """The JSON view ``js`` of a World (``Model.state_to_json``) without the fields of
    ``feature`` ("lifecycle" or "procedure"). Display code: it never makes a state."""
    for part, fields in FEATURE_FIELDS[feature].items():
        target = js[part] if part else js
        for f in fields:
            del target[f]
    return js


fast_replace_all(globals())  # generated _replace: cheaper successor construction
