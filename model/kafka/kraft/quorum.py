"""The controller quorum: three voters replicating the metadata log with Raft (KIP-595,
"Kafka Raft" in Kafka's raft/ module), the active controller being the log's leader
(KIP-500, KIP-631 "The Quorum-based Kafka Controller").

State: the leader, its epoch, the leader's log (batches ``Entry(epoch, records)``), the
high watermark (how many batches are committed) and, per voter, how many of the leader's
batches it holds. Followers only ever hold a prefix of the leader's log, so a length per
voter is the whole of their log.

- ``append``: the active controller writes a batch (QuorumController's write events
  append a ControllerResult's records as one batch; ControllerResult.atomicOf keeps a
  CreateTopics batch whole). The active controller applies its own records at once, so
  its state includes the uncommitted ones (QuorumController replays into timeline data
  structures and reverts to the last committed offset when it resigns).
- ``replicate``: a follower fetches the leader's log to its end (KafkaRaftClient
  handleFetchRequest / handleFetchResponse; the model fetches everything in one step).
- the high watermark advances to the largest length a majority holds, and only once a
  batch of the current epoch is in it (LeaderState.maybeUpdateHighWatermark: the update
  offset must exceed epochStartOffset).
- ``failover``: a follower wins an election in a higher epoch when a majority grants its
  vote; a voter grants it only to a log at least as long as its own (QuorumState.
  canGrantVote with isLogUpToDate; all logs here are prefixes of one log, so "as long"
  is "as up to date"). The new leader keeps its own log, loses whatever the old leader
  appended beyond it (the uncommitted tail), and appends a LeaderChangeMessage
  (KafkaRaftClient.onBecomeLeader). The others truncate to the common prefix when they
  next fetch (handleFetchResponse with a diverging epoch); the model truncates them at
  once. The new active controller's state is its log replayed (QuorumController
  becomes active once the listener has replayed up to the epoch start offset:
  KafkaRaftClient.maybeFireLeaderChange).
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.model.kafka.canon import replace_at
from kmc.model.kafka.kraft import records as rc
from kmc.model.records import fast_replace_all

VOTERS = (1, 2, 3)


class Entry(NamedTuple):
    """One batch of the metadata log."""
    epoch: int
    records: tuple


class Quorum(NamedTuple):
    leader: int
    epoch: int
    log: tuple
    hwm: int
    repl: tuple  # batches held, per voter (index = voter - 1)
    #: the active controller's memory, not Raft's: the brokers (sorted ids) whose
    #: heartbeat lease has run out while its records count them unfenced, the fence
    #: event not run yet (``heartbeat``, with the scenario's ``fence_delay``). A new
    #: active controller starts with none (``failover``)
    expired: tuple = ()

    def __repr__(self):
        """The canonical encoding (``model.encoding``): the five-field form while no
        lease has run out, so such a state encodes, and fingerprints, the same in
        every scenario; ``expired`` is printed, labelled, when set."""
        head = (f"Quorum(leader={self.leader!r}, epoch={self.epoch!r}, log={self.log!r}, "
                f"hwm={self.hwm!r}, repl={self.repl!r}")
        return head + (f", expired={self.expired!r})" if self.expired else ")")


def lease_ended(q: Quorum, broker: int) -> Quorum:
    """``q`` without ``broker``'s run-out lease (the fence ended it, or a new
    registration removed it)."""
    if broker not in q.expired:
        return q
    return q._replace(expired=tuple(x for x in q.expired if x != broker))


def initial(first_batch: tuple) -> Quorum:
    """controller-1 leads epoch 1; the first batch is committed on every voter."""
    log = (Entry(1, first_batch),)
    return Quorum(1, 1, log, 1, (1,) * len(VOTERS))


def majority() -> int:
    return len(VOTERS) // 2 + 1


def _advance_hwm(q: Quorum) -> Quorum:
    held = sorted(q.repl, reverse=True)[majority() - 1]
    if held > q.hwm and q.log[held - 1].epoch == q.epoch:
        return q._replace(hwm=held)
    return q


def append(q: Quorum, records: tuple, replicated: bool = False) -> Quorum:
    """The leader appends one batch in its epoch. ``replicated``: every voter fetches
    it at once, so it commits as it is appended (used when no failover can happen: then
    nothing is ever lost, and a commit that comes later is, for the brokers, the same
    as their own fetch coming later)."""
    log = q.log + (Entry(q.epoch, tuple(records)),)
    if replicated:
        return q._replace(log=log, repl=(len(log),) * len(q.repl), hwm=len(log))
    return q._replace(log=log, repl=replace_at(q.repl, q.leader - 1, len(log)))


def can_replicate(q: Quorum, voter: int) -> bool:
    return voter != q.leader and q.repl[voter - 1] < len(q.log)


def replicate(q: Quorum, voter: int) -> Quorum:
    return _advance_hwm(q._replace(repl=replace_at(q.repl, voter - 1, len(q.log))))


def electable(q: Quorum) -> tuple:
    """Followers that can win an election now: a majority, the candidate included,
    holds logs no longer than the candidate's."""
    out = []
    for c in VOTERS:
        if c == q.leader:
            continue
        mine = q.repl[c - 1]
        votes = sum(1 for v in VOTERS if q.repl[v - 1] <= mine)
        if votes >= majority():
            out.append(c)
    return tuple(out)


def failover(q: Quorum, new_leader: int) -> Quorum:
    """``new_leader`` wins the election (module docstring). Its controller starts with
    a fresh heartbeat lease for every registered broker (ClusterControlManager.
    activate: BrokerHeartbeatManager.register, contact time now), so no lease has run
    out (``expired`` empty)."""
    keep = q.repl[new_leader - 1]
    epoch = q.epoch + 1
    log = q.log[:keep] + (Entry(epoch, (rc.leader_change(new_leader, epoch),)),)
    repl = tuple(min(n, keep) for n in q.repl)
    repl = replace_at(repl, new_leader - 1, len(log))
    return Quorum(new_leader, epoch, log, q.hwm, repl)


def uncommitted(q: Quorum) -> tuple:
    """The batches beyond the high watermark."""
    return q.log[q.hwm:]


def lane(c: int) -> str:
    return f"controller-{c}"


fast_replace_all(globals())  # generated _replace: cheaper successor construction
