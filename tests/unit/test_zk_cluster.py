"""The ZooKeeper-era cluster is one Model class whose features a scenario chooses: the
topic lifecycle and KIP-253's partition procedure run on one World, one network and one
handling of the controller's requests."""
import pytest
from toymodels import reachable

from kmc import api
from kmc.model.kafka.kip253.procedure import Procedure
from kmc.model.kafka.store import NO_COUNT
from kmc.model.kafka.zk.cluster import DELIVER, Cluster
from kmc.model.kafka.zk.lifecycle import Lifecycle
from kmc.model.kafka.zk.state import Bounds
from kmc.model.kafka.zk.variants import flags


@pytest.mark.parametrize("scenario, variant, features, name", [
    ("stale-read", "kip516", ("lifecycle",), "topics"),
    ("recreate-during-expansion", "kip516", ("lifecycle",), "topics"),
    ("shrink-then-expand", "kip253", ("procedure",), "partitions"),
    ("expand-failover", "modulo", ("procedure",), "partitions"),
])
def test_each_zookeeper_scenario_builds_the_cluster_with_its_feature(scenario, variant,
                                                                    features, name):
    params = {"plane": "zk"} if scenario == "recreate-during-expansion" else {}
    m = api.build(scenario, variant, params)
    assert type(m) is Cluster
    assert tuple(f.name for f in m.features) == features and m.name == name
    # the feature's steps and the cluster's failover are the model's, and every delivery
    # goes to its message kind's handler
    assert set(m._steps) == set(m.features[0].steps) | {"failover"}
    assert "failover" not in m.features[0].steps and m._deliver is DELIVER


def test_a_delivery_takes_the_same_handler_in_both_features():
    """On a reachable state of each feature, the successor of a delivery is what the
    cluster's handler of that message kind makes of it."""
    seen = set()
    for scenario, variant in (("stale-read", "kip516"), ("shrink-then-expand", "kip253")):
        m = api.build(scenario, variant, {})
        for w in reachable(m, 400):
            for a, t in m.successors(w):
                if a[0] == "deliver":
                    assert t == DELIVER[a[1].kind](m, w, a[1]) == m.next_state(w, a)
                    seen.add((m.features[0].name, a[1].kind))
    assert {("lifecycle", "LeaderAndIsr"), ("lifecycle", "StopReplica"),
            ("procedure", "LeaderAndIsr"), ("procedure", "UpdateMetadata")} <= seen


def test_two_features_taking_the_same_action_kind_do_not_run_in_one_scenario():
    from kmc.model.kafka.network import Network

    procedure = api.build("shrink-then-expand", "kip253", {}).features[0]
    assert isinstance(procedure, Procedure)
    with pytest.raises(ValueError, match="features lifecycle and procedure both take"):
        Cluster((Lifecycle("kip516", Bounds()), procedure), flags=flags("kip516"),
                net=Network(ordered=True), purge_delay=False, failovers=0)
    with pytest.raises(ValueError, match="at least one feature"):
        Cluster((), flags=flags("kip516"), net=Network(ordered=True), purge_delay=False,
                failovers=0)


@pytest.mark.parametrize("scenario, variant, params", [
    ("failover-mid-delete", "kip516", {}),
    ("expand-failover", "kip253", {}),
])
def test_one_failover_step_for_both_features(scenario, variant, params):
    """A failover is the cluster's step whichever feature runs: the winner takes the next
    epoch with an empty memory, the answers to the dead controller are dropped, and the
    feature's new controller takes over (the lifecycle resyncs every live broker at once,
    the procedure starts its recovery); the run allows ``failovers`` of them."""
    from kmc.model.kafka.messages import controller_endpoint

    m = api.build(scenario, variant, params)
    w = m.init_states()[0]
    while True:  # a state where an answer to controller-1 is in flight, or the first
        acts = [a for a in m.actions(w) if a[0] == "failover"]
        assert acts == [("failover", 2)]
        if any(x.dst == controller_endpoint(1) for x in m.net.messages(w.net)):
            break
        a = next(a for a in m.actions(w) if a[0] != "failover"
                 and m.next_state(w, a) is not None)
        w = m.next_state(w, a)
    t = m.next_state(w, ("failover", 2))
    assert (t.ctl.active, t.ctl.epoch) == (2, w.ctl.epoch + 1)
    assert not any(x.dst == controller_endpoint(1) for x in m.net.messages(t.net))
    if m.features[0].name == "lifecycle":
        assert t.mem.phase == "idle" and t.budget.failovers == w.budget.failovers - 1
        assert {x.dst for x in m.net.messages(t.net) if x.src == -2} == {1, 2}
    else:
        assert (t.mem.phase, t.mem.count) == ("recover", NO_COUNT)  # read at recovery
        assert not any(x.src == -2 for x in m.net.messages(t.net))
    assert [a for a in m.actions(t) if a[0] == "failover"] == []  # one allowed
    assert m.next_state(t, ("failover", 1)) is None
