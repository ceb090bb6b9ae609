"""LeaderEpochUnique, FollowerFencing, NoAcknowledgedLoss, ConsumerReadsAll, ProducerFinishes
and AssignedReplicasHosted: each is violated by the mutant that removes the guard it watches
(a shortest counterexample, violated only at its last state, told as a sentence) and holds,
in the same scenario, on the protocol with the guard. Lengths and state counts are the ones
the runs gave (regressions/regressions.toml records the same runs)."""
from functools import lru_cache

import pytest

from kmc import api

#: rf 3, a producer, a follower reassigned away while down (no deletion, no failover)
RF3 = {"rf": 3, "reassign": 1, "records": 1, "incarnations": 1, "deletes": 0, "failovers": 0}

#: property -> (scenario, params, fixed variant, mutant, counterexample length, states of
#: the fixed run, states of the mutant's run, words the sentence must contain)
KILLS = {
    "LeaderEpochUnique": ("failover-mid-delete", None, "kip516", "kip516-epoch-reuse", 2,
                          1941, 1941, "leader epoch 0 of partition 0"),
    "FollowerFencing": ("lifecycle-large", RF3, "kip516", "kip516-follower-ignores-epoch", 7,
                        6369, 6889, "appended records it had fetched at leader epoch 0"),
    "NoAcknowledgedLoss": ("offline-delete", None, "kip516", "kip516-lair-wipes-replica", 4,
                           136, 136, "was acknowledged, yet no replica holds it"),
    "ConsumerReadsAll": ("recreate-race", {"initial_records": 1}, "kip516",
                         "kip516-consumer-keeps-position", 11, 434, 479,
                         "the consumer never read the record at offset 0"),
    "ProducerFinishes": ("expand", None, "kip253", "kip253-no-retry", 16, 2344, 2805,
                         "producer1 has sent 0 of the 2 messages"),
    "AssignedReplicasHosted": ("offline-delete", None, "kip516", "kip516-stop-replica-by-name",
                               9, 136, 139, "assigned partition 0 of incarnation 2, holds no"),
    "ProducerFinishes@topics": ("recreate-race", {"loss": True}, "kip516",
                                "kip516-stop-replica-by-name", 9, 815, 1019,
                                "the producer still has 1 record(s) to send to a live topic"),
    "ConsumerReadsAll@partitions": ("shrink-then-expand", None, "kip253",
                                    "kip253-keeps-offsets", 29, 7003, 9224,
                                    "the group never delivered it from there"),
    "NoAcknowledgedLoss@partitions": ("shrink-then-expand", None, "kip253",
                                      "linear-no-fencing", 11, 7003, 11474,
                                      "no log holds it and the group never delivered it"),
}


@lru_cache(maxsize=None)
def run(scenario, variant, params):
    return api.check(scenario, variant, params=dict(params) if params else None)


def _run(scenario, params, variant):
    return run(scenario, variant, tuple(sorted(params.items())) if params else None)


@pytest.mark.parametrize("case", sorted(KILLS))
def test_the_mutant_violates_it_with_a_shortest_trace(case):
    name = case.split("@")[0]
    scenario, params, _fixed, mutant, length, _n, states, words = KILLS[case]
    r = _run(scenario, params, mutant)
    assert r.complete and r.unique_states == states
    r.assert_violated(name, length)
    d = r.discoveries[name]
    model = r.extra["model"]
    prop = {p.name: p for p in model.properties()}[name]
    if prop.kind == "always":  # violated at the last state only
        assert [prop.check(s) for s in d.trace.states] == [True] * (length - 1) + [False]
    else:  # settled: only faults and inputs are left
        assert not prop.check(d.trace.last)
        assert all(model.is_fault(a) for a, _t in model.successors(d.trace.last))
    assert words in prop.explain_sentence(d.detail)


@pytest.mark.parametrize("case", sorted(KILLS))
def test_it_holds_where_the_guard_is_in_place(case):
    name = case.split("@")[0]
    scenario, params, fixed, _mutant, _len, states, _m, _words = KILLS[case]
    r = _run(scenario, params, fixed)
    assert r.complete and r.unique_states == states
    assert r.verdict(name) == "holds"
    r.assert_properties()


def test_the_client_properties_ask_the_model_whether_a_client_can_still_act():
    """A quiescent state of the topic model may still let the consumer fetch (its steps are
    the environment's): ConsumerReadsAll judges only states where it has nothing to do."""
    r = _run("recreate-race", {"initial_records": 1}, "kip516-consumer-keeps-position")
    last = r.discoveries["ConsumerReadsAll"].trace.last
    model = r.extra["model"]
    assert last.consumer.positions == (1,)  # the position the deleted topic left
    assert [a for a, _t in model.successors(last) if a[0].startswith("consumer")] == []
    first = r.discoveries["ConsumerReadsAll"].trace.states[0]
    assert first.consumer.positions == (0,)


def test_the_ghost_history_is_the_live_incarnations():
    """Deleting the topic forgets its leaders, appends, acknowledgements and reads (a
    deleted incarnation never gets any again), so the history adds no states."""
    r = _run("failover-mid-delete", None, "kip516")
    model = r.extra["model"]
    (w,) = model.init_states()
    assert w.ghost.leaders == ((1, 0, 0, 1),) and w.ghost.acked == ((1, 0, 0),)
    after = model.next_state(w, ("delete", "name"))
    assert (after.ghost.leaders, after.ghost.acked) == ((), ())
