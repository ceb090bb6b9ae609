"""Kafka liveness properties (opt-in: -p liveness=true) and the fairness they rely on."""
from kmc.api import build, check
from kmc.model.fairness import FairnessClasses
from kmc.reports.lasso import judge_lasso

ON = {"liveness": True}


def test_liveness_properties_are_opt_in():
    names = [p.name for p in build("offline-delete", "legacy").properties()]
    assert "DeletionEventuallyCompletes" not in names
    names = [p.name for p in build("offline-delete", "legacy", ON).properties()]
    assert {"DeletionEventuallyCompletes", "StaleReplicasEventuallyCleaned"} <= set(names)
    names = [p.name for p in build("expand", "kip253", ON).properties()]
    assert {"ExpansionEventuallyUnblocks", "ConsumerEventuallyProgresses",
            "ProcedureEventuallyCompletes"} <= set(names)


def test_replicas_get_in_sync_and_the_property_is_not_vacuous():
    from kmc.explorers.bfs import bfs
    from kmc.invariants.properties import sometimes
    from kmc.model.kafka.zk.liveness import sync_view

    m = build("stale-read", "kip516", {**ON, "crashes": 0, "reassign": 0})
    assert check(m).verdict("ReplicasEventuallyInSync") == "holds"
    # a state where a follower is out of sync while every broker is up is reachable
    behind = sometimes("Behind", lambda w: bool(sync_view(w)["OutOfSync"])
                       and not sync_view(w)["Down"])
    assert bfs(m, properties=[behind]).verdict("Behind") == "witness_found"


def test_topic_fairness_deliveries_strong_steps_weak_faults_and_inputs_never():
    m = build("stale-state", "kip516", ON)
    fair = FairnessClasses(m)
    strong = {n for n, k in zip(fair.names, fair.kinds) if k == "strong"}
    weak = {n for n, k in zip(fair.names, fair.kinds) if k == "weak"}
    assert strong and all(n.startswith("deliver-") for n in strong)
    assert "retry-stop" in weak
    assert not ({"crash", "restart", "lose-StopReplica", "delete"} & (weak | strong))


def test_a_legacy_deletion_waits_forever_for_an_offline_replica():
    r = check("offline-delete", "legacy", ON)
    d = r.discoveries["DeletionEventuallyCompletes"]
    t = d.trace
    assert r.verdict("DeletionEventuallyCompletes") == "violated"
    assert t.loop_start is not None and len(t) == 5
    ok, _k, words = judge_lasso(r.extra["model"], _prop(r, "DeletionEventuallyCompletes"),
                                t, t.loop_start)
    assert ok, words
    assert check("offline-delete", "kip516", ON).verdict("DeletionEventuallyCompletes") \
        == "holds"


def test_the_no_retry_mutant_leaves_a_deleted_replica_forever():
    r = check("stale-state", "kip516-no-stop-replica-retry", ON)
    t = r.discoveries["StaleReplicasEventuallyCleaned"].trace
    # the lasso stops where no fair action is left: the StopReplica was lost, no retry
    assert t.loop_start == len(t) - 1
    assert any(a[0] == "lose" for a in t.actions)
    assert r.verdict("DeletionEventuallyCompletes") == "holds"


def test_a_new_controller_stuck_in_its_recovery_never_completes_the_procedure(monkeypatch):
    """ProcedureEventuallyCompletes: a recovery that reads the topic znode but never
    leaves ``recover`` (the mutants of ``ctrl-recover`` that drop its phase change) is a
    lasso; the procedure as modelled completes after the failover."""
    from kmc.model.kafka.kip253.procedure import Procedure
    from kmc.model.kafka.kip253.znodes import undeleted

    assert check("expand-failover", "kip253", ON).verdict(
        "ProcedureEventuallyCompletes") == "holds"

    def stuck(m, w, candidate):
        if candidate != w.ctl.active or w.mem.phase != "recover":
            return None
        return w._replace(mem=w.mem._replace(count=undeleted(w.store)))

    monkeypatch.setitem(Procedure.steps, "ctrl-recover", stuck)
    r = check("expand-failover", "kip253", ON)
    assert r.verdict("ProcedureEventuallyCompletes") == "violated"
    t = r.discoveries["ProcedureEventuallyCompletes"].trace
    assert t.loop_start is not None  # the loop: the controller stays in its recovery
    assert all(s.mem.phase == "recover" for s in t.states[t.loop_start:])
    assert r.verdict("ExpansionEventuallyUnblocks") == "holds"


def test_kafka_liveness_agrees_on_bfs_dfs_and_z3():
    b = check("offline-delete", "legacy", ON)
    d = check("offline-delete", "legacy", ON, explorer="dfs")
    z = check("offline-delete", "legacy", ON, z3=True)
    live = ("DeletionEventuallyCompletes", "StaleReplicasEventuallyCleaned")
    assert [b.verdict(n) for n in live] == [d.verdict(n) for n in live] == \
        [z.verdict(n) for n in live] == ["violated", "violated"]
    assert b.discoveries["DeletionEventuallyCompletes"].trace.action_indices == \
        z.discoveries["DeletionEventuallyCompletes"].trace.action_indices


def _prop(r, name):
    return next(p for p in r.extra["model"].properties() if p.name == name)
