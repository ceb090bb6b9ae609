"""ReplicaLeaderNamed, MetadataFlushedFirst, StopReplicaOfDeletedOnly, ReplicasFollowController
and StopReplicasAnswered on the ZooKeeper-era topic model: each holds on kip516, each is
violated where its rule is broken (a variant of the model, or a state with exactly that
fault), and z3 mode decides it as the compiled evaluator does. Lengths and state counts are
the ones the runs gave (regressions/regressions.toml records the same runs)."""
from functools import lru_cache

import pytest

from kmc import api
from kmc.invariants.z3mode import z3_properties
from kmc.model.kafka.broker import Hosted, Log
from kmc.model.kafka.canon import replace_at
from kmc.model.kafka.zk.cluster import Cluster
from kmc.model.kafka.zk.lifecycle import Lifecycle

NEW = ("ReplicaLeaderNamed", "MetadataFlushedFirst", "StopReplicaOfDeletedOnly",
       "ReplicasFollowController", "StopReplicasAnswered")


@lru_cache(maxsize=None)
def run(scenario, variant, z3=False, stop=False):
    return api.check(scenario, variant, z3=z3, stop_on_violation=stop)


def props(model):
    return {p.name: p for p in model.properties()}


@lru_cache(maxsize=None)
def start():
    """offline-delete on kip516 and its initial state: broker-1 leads partition 0 of
    incarnation 1 at leader epoch 0 and holds its initial record."""
    m = api.build("offline-delete", "kip516")
    return m, m.init_states()[0]


def with_partition(w, **fields):
    """``w`` with broker-1's partition changed: ``fields`` of its log (``records``,
    ``flushed``) and of the partition it hosts on it (``leader``, ``leader_epoch``)."""
    assert set(fields) <= set(Log._fields) | set(Hosted._fields)
    br = w.brokers[0]
    log = br.logs[0]._replace(**{k: v for k, v in fields.items() if k in Log._fields})
    h = br.hosted[0]._replace(**{k: v for k, v in fields.items() if k in Hosted._fields})
    return w._replace(brokers=replace_at(w.brokers, 0, br._replace(logs=(log,), hosted=(h,))))


def unhosted(w):
    """``w`` with broker-1 holding its log but hosting no partition on it (after a
    restart, before the first LeaderAndIsr)."""
    br = w.brokers[0]
    return w._replace(brokers=replace_at(w.brokers, 0, br._replace(hosted=())))


@pytest.mark.parametrize("scenario", ["offline-delete", "recreate-race"])
def test_all_four_hold_on_kip516(scenario):
    r = run(scenario, "kip516")
    assert r.complete
    for name in NEW:
        assert name in props(r.extra["model"])
        assert name not in r.discoveries


def test_replica_leader_named_sees_an_epoch_the_controller_never_wrote():
    m, w = start()
    p = props(m)["ReplicaLeaderNamed"]
    assert p.check(w)
    bad = with_partition(w, leader_epoch=w.brokers[0].hosted[0].leader_epoch + 1)
    assert not p.check(bad)
    assert "which the controller never named" in p.explain_sentence(p.explain(bad))
    # a replica that knows no leader yet (after a restart) is not a claim
    assert p.check(unhosted(w))


def test_metadata_flushed_first_sees_records_under_an_unflushed_topic_id():
    m, w = start()
    p = props(m)["MetadataFlushedFirst"]
    assert p.check(w) and p.check(with_partition(w, flushed=False, records=()))
    bad = with_partition(w, flushed=False)
    assert not p.check(bad)
    assert "never flushed" in p.explain_sentence(p.explain(bad))


def test_metadata_flushed_first_violated_when_an_incremental_request_renames_a_stale_log():
    r = run("stale-state", "kip516-incremental-ignores-id", stop=True)
    r.assert_violated("MetadataFlushedFirst", 5)


def test_stop_replica_of_deleted_only_sees_a_live_incarnation_awaited():
    m, w = start()
    p = props(m)["StopReplicaOfDeletedOnly"]
    assert p.check(w)
    bad = w._replace(mem=w.mem._replace(pending=((1, 0, w.store.topics[0].topic_id, 1),)))
    assert not p.check(bad)
    assert "incarnation 1 is live" in p.explain_sentence(p.explain(bad))


@pytest.mark.parametrize("name,variant,length,states,words", [
    # a StopReplica nobody retries stays awaited
    ("StopReplicasAnswered", "kip516-no-stop-replica-retry", 5, 115,
     "awaits broker-1's answer to StopReplica of partition 0 (incarnation 1)"),
    # a late StopReplica deletes the re-created topic's replica
    ("ReplicasFollowController", "kip516-stop-replica-by-name", 9, 139,
     "(incarnation 2) disagrees"),
    # 2.8 creates the log without the request's topic ID
    ("ReplicasFollowController", "zk-2.8", 6, 101, "(incarnation 2) disagrees"),
])
def test_settled_properties_violated(name, variant, length, states, words):
    r = run("offline-delete", variant)
    assert r.complete and r.unique_states == states
    r.assert_violated(name, length)
    model = r.extra["model"]
    prop = props(model)[name]
    d = r.discoveries[name]
    assert not prop.check(d.trace.last)
    assert all(model.is_fault(a) for a, _t in model.successors(d.trace.last))
    assert words in prop.explain_sentence(d.detail)


@pytest.mark.parametrize("variant", ["kip516", "zk-2.8", "kip516-no-stop-replica-retry"])
def test_z3_mode_decides_them_as_the_evaluator_does(variant):
    fast, z3 = run("offline-delete", variant), run("offline-delete", variant, z3=True)
    for name in NEW:
        assert (name in fast.discoveries) == (name in z3.discoveries)
    assert fast.unique_states == z3.unique_states


def test_z3_decides_the_built_states():
    m, w = start()
    bad = with_partition(w, flushed=False, leader_epoch=7)
    for p in z3_properties([props(m)[n] for n in NEW[:2]]):
        assert p.check(w) and not p.check(bad)


PURGE = {"purge_delay": True, "liveness": True}


def test_deleting_eventually_purged_is_declared_with_the_delayed_purge_only():
    names = {p.name for p in api.build("offline-delete", "kip516",
                                       {"liveness": True}).properties()}
    assert "DeletingEventuallyPurged" not in names
    assert "ReplicasEventuallyInSync" in names
    names = {p.name for p in api.build("offline-delete", "kip516", PURGE).properties()}
    assert "DeletingEventuallyPurged" in names


def test_deleting_eventually_purged_holds_on_kip516_and_fails_without_the_purge_step():
    r = api.check("offline-delete", "kip516", params=PURGE)
    assert r.complete and r.unique_states == 224
    assert r.verdict("DeletingEventuallyPurged") == "holds"
    m = api.build("offline-delete", "kip516", PURGE)

    class NeverPurges(Lifecycle):
        def candidates(self, m, w):
            return [a for a in super().candidates(m, w) if a[0] != "purge"]
        actions = candidates

    broken = Cluster((NeverPurges(m.variant, m.bounds),), flags=m.flags, net=m.net,
                     purge_delay=m.purge_delay, failovers=m.failovers)
    r = api.check(broken)
    assert r.verdict("DeletingEventuallyPurged") == "violated"
    assert r.verdict("StaleReplicasCleaned") == "holds"  # staged logs are not stale ones


def test_budgets_respected_is_shared_and_fails_once_a_budget_is_overspent():
    """BudgetsRespected, declared once for both planes, holds on kip516 and on z3 mode,
    and fails on a state that spent one DeleteTopics, crash or record too many."""
    m, w = start()
    assert run("offline-delete", "kip516").verdict("BudgetsRespected") == "holds"
    assert run("offline-delete", "kip516", z3=True).verdict("BudgetsRespected") == "holds"
    budgets = props(m)["BudgetsRespected"]
    assert budgets.check(w)
    assert not budgets.check(w._replace(admin=w.admin._replace(deletes=-1)))
    assert not budgets.check(w._replace(budget=w.budget._replace(crashes=-1)))
    assert not budgets.check(w._replace(producer=w.producer._replace(left=-1)))
    kraft = {p.name: p for p in api.build("kraft-stray", "kraft").properties()}
    assert repr(kraft["BudgetsRespected"].formula) == repr(budgets.formula)


def test_budgets_accounted_fails_once_a_counter_and_its_steps_disagree():
    """BudgetsAccounted holds on kip516 and on z3 mode, and fails on a state whose budget
    counter was not spent for a step the store or the ghost shows (a creation, a
    deletion, a failover, a reassignment), or was spent without one."""
    m, w = start()
    assert run("offline-delete", "kip516").verdict("BudgetsAccounted") == "holds"
    assert run("offline-delete", "kip516", z3=True).verdict("BudgetsAccounted") == "holds"
    accounted = props(m)["BudgetsAccounted"]
    assert accounted.check(w)
    created = w.store._replace(incarnations=w.store.incarnations + 1)
    assert not accounted.check(w._replace(store=created))  # a creation not spent
    assert not accounted.check(w._replace(admin=w.admin._replace(deletes=0)))  # no deletion
    g = w.ghost
    assert not accounted.check(w._replace(ghost=g._replace(failovers=((2, 0),))))
    assert not accounted.check(w._replace(ghost=g._replace(reassigned=1)))
    both = w._replace(ghost=g._replace(reassigned=1),
                      budget=w.budget._replace(reassign=w.budget.reassign - 1))
    assert accounted.check(both)  # taken and spent: only BudgetsRespected objects
    assert not props(m)["BudgetsRespected"].check(both)
