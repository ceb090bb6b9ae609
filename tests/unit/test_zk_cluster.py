"""The ZooKeeper-era cluster is one Model class whose features a scenario chooses: the
topic lifecycle and KIP-253's partition procedure run on one World, one network and one
handling of the controller's requests."""
import pytest

from kmc import api
from kmc.model.kafka.kip253.procedure import Procedure
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
    # the feature's steps are the model's, and every delivery its message kind's handler
    assert set(m.features[0].steps) == set(m._steps)
    assert m._deliver is DELIVER


def test_a_delivery_takes_the_same_handler_in_both_features():
    """On a reachable state of each feature, the successor of a delivery is what the
    cluster's handler of that message kind makes of it."""
    seen = set()
    for scenario, variant in (("stale-read", "kip516"), ("shrink-then-expand", "kip253")):
        m = api.build(scenario, variant, {})
        frontier, visited = list(m.init_states()), set()
        while frontier and len(visited) < 400:
            w = frontier.pop()
            if w in visited:
                continue
            visited.add(w)
            for a, t in m.successors(w):
                if a[0] == "deliver":
                    assert t == DELIVER[a[1].kind](m, w, a[1]) == m.next_state(w, a)
                    seen.add((m.features[0].name, a[1].kind))
                frontier.append(t)
    assert {("lifecycle", "LeaderAndIsr"), ("lifecycle", "StopReplica"),
            ("procedure", "LeaderAndIsr"), ("procedure", "UpdateMetadata")} <= seen


def test_two_features_taking_the_same_action_kind_do_not_run_in_one_scenario():
    from kmc.model.kafka.network import Network

    procedure = api.build("shrink-then-expand", "kip253", {}).features[0]
    assert isinstance(procedure, Procedure)
    with pytest.raises(ValueError, match="features lifecycle and procedure both take"):
        Cluster((Lifecycle("kip516", Bounds()), procedure), flags=flags("kip516"),
                net=Network(ordered=True))
    with pytest.raises(ValueError, match="at least one feature"):
        Cluster((), flags=flags("kip516"), net=Network(ordered=True))
