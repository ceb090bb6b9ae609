"""The partition model's bookkeeping invariants (model/kafka/kip253/bookkeeping_properties.py):
each decides hand-made variations of reachable states, is on only with -p bookkeeping=true,
and each mutant variant that breaks one guard differs from kip253 in that guard alone."""
import dataclasses

import pytest

from kmc.api import build
from kmc.model.kafka.kip253 import znodes
from kmc.model.kafka.kip253 import bookkeeping_properties as B
from kmc.model.kafka.broker import Hosted, Log, hosted_of
from kmc.model.kafka.canon import keyed_put
from kmc.model.kafka.kip253.broker import log_at, put, put_log, the_broker
from kmc.model.kafka.kip253.state import Part
from kmc.model.kafka.kip253.variants import MUTANTS, VARIANTS


@pytest.fixture(scope="module")
def shrink():
    return build("shrink", "kip253", {"bookkeeping": True})


def with_broker(w, **fields):
    """``w`` with the one broker's record changed in ``fields``."""
    return put(w, the_broker(w)._replace(**fields))


def with_log(w, p, **fields):
    """``w`` with the broker's partition ``p`` changed in ``fields``: of its log
    (``records``, ``start``) and of the partition hosted on it (``leader_epoch``)."""
    assert set(fields) <= set(Log._fields) | set(Hosted._fields)
    w = put_log(w, log_at(w, p)._replace(
        **{k: v for k, v in fields.items() if k in Log._fields}))
    br = the_broker(w)
    h = hosted_of(br, p)._replace(**{k: v for k, v in fields.items() if k in Hosted._fields})
    return put(w, br._replace(hosted=keyed_put(br.hosted, h)))


def props(m):
    return {p.name: p for p in m.properties()}


def test_on_only_when_asked_and_declared_once():
    plain = props(build("expand", "kip253"))
    assert not set(B.NAMES) & set(plain)
    on = props(build("expand", "kip253", {"bookkeeping": True}))
    assert set(B.NAMES) <= set(on)
    assert len(B.NAMES) == len(set(B.NAMES)) == len(B.DECLARATIONS)
    for name in B.NAMES:
        assert on[name].formula is B.DECLARATIONS[name][1]
        assert on[name].kind == B.DECLARATIONS[name][0]


def test_every_invariant_holds_in_the_settled_initial_state(shrink):
    w = shrink.init_states()[0]
    for name in B.NAMES:
        assert props(shrink)[name].check(w), name


def test_metadata_propagated(shrink):
    p = props(shrink)["MetadataPropagated"]
    w = shrink.init_states()[0]
    assert not p.check(with_broker(w, meta=(2, 3)))  # stale cache
    assert not p.check(with_broker(w, count=2))  # LeaderAndIsr's
    assert not p.check(w._replace(group=w.group._replace(basis=(2, 3))))
    assert not p.check(w._replace(mem=w.mem._replace(phase="shrink-um")))


def test_replicas_match_store(shrink):
    p = props(shrink)["ReplicasMatchStore"]
    w = shrink.init_states()[0]
    zn = znodes.znodes(w.store)
    marked = zn[:2] + (zn[2]._replace(before=((0, 1), (1, 1))),)
    assert not p.check(w._replace(store=znodes.written(w.store, undeleted_=2, parts=marked)))
    orphan = w._replace(store=znodes.written(w.store, total_=2, undeleted_=2))  # znode 2 left
    assert not p.check(orphan)
    behind = with_log(w, 0, leader_epoch=0)
    assert not p.check(behind)
    b = the_broker(w)
    unhosted = put(w, b._replace(logs=b.logs[:2], hosted=b.hosted[:2]))
    assert not p.check(unhosted)


def test_position_within_log(shrink):
    p = props(shrink)["PositionWithinLog"]
    w = shrink.init_states()[0]
    g = w.group
    assert not p.check(w._replace(group=g._replace(committed=(1, 0, 0))))  # empty log
    read = with_log(w, 0, records=((2, 0, 0, 1),))._replace(group=g._replace(committed=(1, 0, 0)))
    assert p.check(read)
    assert not p.check(read._replace(group=read.group._replace(reported=(1, 1, 0))))
    trimmed = with_log(read, 0, start=1)._replace(group=g)
    assert not p.check(trimmed)  # position 0 below the log start 1


def test_epoch_bumped_at_split():
    m = build("shrink-then-expand", "kip253", {"bookkeeping": True})
    p = props(m)["EpochBumpedAtSplit"]
    w = m.init_states()[0]  # partition 2 split from 0 at epoch 0; 0 is at epoch 1 now
    assert znodes.znode(w.store, 2).after == ((0, 0), (1, 0)) and p.check(w)
    zn = znodes.znodes(w.store)
    unbumped = w._replace(store=znodes.written(
        w.store, parts=(zn[0]._replace(leader_epoch=0),) + zn[1:]))
    assert not p.check(unbumped)
    assert p.explain(unbumped) == {"c": 2, "p": 0, "e1": 0, "e2": 0}


def _marked(w, maps, phase):
    """``w`` with partition p's leaderEpochBeforeDeletion set to ``maps[p]`` and the
    controller in ``phase``."""
    zn = list(znodes.znodes(w.store))
    for p, before in maps.items():
        zn[p] = zn[p]._replace(before=before)
    return w._replace(store=znodes.written(w.store, parts=tuple(zn)),
                      mem=w.mem._replace(phase=phase))


def test_marks_agree():
    m = build("shrink-two", "kip253", {"bookkeeping": True})
    p = props(m)["MarksAgree"]
    w = m.init_states()[0]  # partitions 0 and 1 at epoch 1; a 4 -> 2 deletion marks 2, 3
    one = ((0, 1), (1, 1))
    assert p.check(_marked(w, {2: one, 3: one}, "shrink-bump"))
    split = _marked(w, {2: one, 3: ((0, 2), (1, 2))}, "idle")  # 3 marked after the bump
    assert not p.check(split)
    assert p.explain(split)["p"] in (0, 1) and {p.explain(split)["q1"],
                                                p.explain(split)["q2"]} == {2, 3}
    # marks of two deletions name different partitions: their epochs may differ
    assert p.check(_marked(w, {2: ((0, 2), (1, 2)), 3: one + ((2, 0),)}, "idle"))


def test_epoch_bumped_at_mark(shrink):
    p = props(shrink)["EpochBumpedAtMark"]
    w = shrink.init_states()[0]  # partitions 0 and 1 at epoch 1 (2 split from 0 earlier)
    recorded = ((0, 1), (1, 1))
    unbumped = _marked(w, {2: recorded}, "idle")
    assert not p.check(unbumped)
    assert p.explain(unbumped) == {"q1": 2, "n": 2, "p": 0, "e1": 1, "e2": 1}
    assert p.check(_marked(w, {2: recorded}, "shrink-bump"))  # before its bump
    assert p.check(_marked(w, {2: recorded}, "recover"))  # a new controller's
    zn = znodes.znodes(w.store)
    bumped = w._replace(store=znodes.written(w.store, parts=tuple(
        z._replace(leader_epoch=2) for z in zn[:2]) + zn[2:]))
    assert p.check(_marked(bumped, {2: recorded}, "idle"))


def test_responses_awaited():
    from kmc.model.kafka.kip253.channels import NET
    from kmc.model.kafka.kip253.controller import _lair
    from kmc.model.kafka.messages import lair_response as response

    m = build("expand", "kip253", {"bookkeeping": True})
    p = props(m)["ResponsesAwaited"]
    w = m.init_states()[0]
    (req,) = _lair(w, 3, (0,), True)
    answered = w._replace(net=NET.send(w.net, response(req)))
    assert not p.check(answered)  # the controller is idle: nobody waits
    waiting = answered._replace(mem=w.mem._replace(phase="expand-create"))
    assert p.check(waiting)
    stale = req._replace(epoch=0)
    assert not p.check(waiting._replace(net=NET.send(waiting.net, response(stale))))


def test_fenced_group_rejoins():
    m = build("expand", "kip253", {"bookkeeping": True})
    p = props(m)["FencedGroupRejoins"]
    w = m.init_states()[0]
    moved = with_broker(w, count=3)
    assert not p.check(moved)
    assert p.check(moved._replace(group=w.group._replace(rejoin=True)))
    legacy = build("expand", "modulo", {"bookkeeping": True})  # no Fetch fencing
    assert props(legacy)["FencedGroupRejoins"].check(moved)


def _members(w, *parts):
    return w._replace(group=w.group._replace(members=tuple(
        tuple(Part(q, (), (), True) for q in ps) for ps in parts)))


def test_assignment_is_range(shrink):
    p = props(shrink)["AssignmentIsRange"]
    w = shrink.init_states()[0]  # 3 partitions, 2 members
    assert p.check(_members(w, (0, 1), (2,)))
    assert not p.check(_members(w, (0, 1), ()))        # partition 2 unowned
    assert not p.check(_members(w, (0, 1, 2), (2,)))   # two owners
    assert not p.check(_members(w, (0, 1, 2), ()))     # shares differ by three
    marked = w._replace(group=w.group._replace(basis=(2, 3)))
    assert p.check(_members(marked, (0, 2), (1,)))     # one of each list, one extra
    assert not p.check(_members(marked, (0, 1), (2,)))  # both undeleted to one member


def test_blocked_only_before_start(shrink):
    p = props(shrink)["BlockedOnlyBeforeStart"]
    w = shrink.init_states()[0]  # partition 2 (>= N = 2) is consumer0's second
    waiting = _members(w, (0, 1), (2,))
    waiting = waiting._replace(group=waiting.group._replace(members=(
        waiting.group.members[0], (Part(2, ((0, 0),), (), False),))))
    assert p.check(waiting)  # position 0 = the earliest offset
    read = with_log(waiting, 2, records=((2, 0, 0, 0),))._replace(
        group=waiting.group._replace(committed=(0, 0, 1)))
    assert not p.check(read)  # the group already read partition 2
    old = waiting._replace(group=waiting.group._replace(members=(
        (Part(0, ((1, 0),), (), False),), waiting.group.members[1])))
    assert not p.check(old)  # partition 0 < N is never held back


def test_each_bookkeeping_mutant_switches_one_guard_of_kip253():
    base = dataclasses.asdict(VARIANTS["kip253"])
    for name in ("kip253-no-split-bump", "kip253-silent-removal", "kip253-orphan-znode",
                 "kip253-one-list", "kip253-unawaited-ack", "kip253-unfenced-park",
                 "kip253-early-bump"):
        diff = {k for k, v in dataclasses.asdict(VARIANTS[name]).items() if base[k] != v}
        assert diff == {"name", MUTANTS[name]}


#: shrink, kip253: the drained partition 2's StopReplica is still on the wire when the
#: controller fails over; the broker rejects it for its old controller epoch.
#: ("deliver", c): the broker takes the oldest request from controller endpoint c
STRANDED = [("admin-alter",), ("ctrl-shrink-record", 1), ("ctrl-shrink-bump", 1),
            ("ctrl-shrink-leader-and-isr", 1), ("deliver", -1),
            ("ctrl-shrink-update-metadata", 1), ("ctrl-check-drained", 1),
            ("ctrl-remove-assignment", 1), ("failover", 2), ("ctrl-recover", 2),
            ("ctrl-remove-znode", 2), ("deliver", -2), ("producer-refresh", 0),
            ("produce", 0), ("group-rebalance",), ("produce", 0), ("member-deliver", 0, 0),
            ("member-deliver", 0, 0), ("deliver", -1), ("deliver", -1)]


def test_a_failover_can_strand_a_removed_partitions_replica(shrink):
    w = shrink.init_states()[0]
    for a in STRANDED:
        if a[0] == "deliver":
            a = next(x for x in shrink.actions(w) if x[0] == "deliver" and x[1].src == a[1])
        assert a in shrink.actions(w), a
        w = shrink.next_state(w, a)
    assert shrink.actions(w) == []  # settled
    assert znodes.total(w.store) == 2 and znodes.znode(w.store, 2) is None
    assert log_at(w, 2) is not None  # the replica of the removed partition stays
    assert props(shrink)["ReplicasMatchStore"].check(w)  # which it does not forbid
