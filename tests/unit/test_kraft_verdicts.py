"""KRaft verdicts, recorded by running the model (kmc check), and the stored
counterexamples of the regression suite replayed through the model."""
import glob
import os

import pytest

from kmc import api
from kmc.reports.replay import replay_document
from kmc.reports.tracefile import load_trace

HERE = os.path.dirname(__file__)
SUITE = os.path.join(HERE, "..", "..", "regressions")

# (scenario, variant) -> (violated properties with their shortest trace length, states)
RECORDED = {
    ("kraft-stray", "kraft"): ({}, 8566),
    ("kraft-stray", "no-stray-detection"): (
        {"StaleReplicasCleaned": 16, "AssignedReplicasHosted": 19, "NoStrayWhileRunning": 10},
        7646),
    ("kraft-stray", "stray-after-replicas"): ({"AssignedReplicasHosted": 19}, 7880),
    ("kraft-stray", "compare-by-name"): (
        {"NoStaleRead": 6, "NoStaleReplication": 6, "StaleReplicasCleaned": 21}, 8414),
    ("kraft-stray", "fenced-keeps-leadership"): ({"NoFencedLeader": 3, "FencedLeaveIsr": 3},
                                                 7388),
    ("kraft-lagging-broker", "kraft"): ({}, 741),
    ("kraft-lagging-broker", "compare-by-name"): ({"NoStaleRead": 7}, 765),
    ("kraft-lagging-broker", "kraft-clients-2.8"): ({"NoStaleRead": 7}, 765),
    ("kraft-stray", "kraft-3.6"): ({"AssignedReplicasHosted": 19}, 11297),
}


@pytest.mark.parametrize("scenario,variant", sorted(RECORDED))
def test_verdicts_and_shortest_traces(scenario, variant):
    violated, states = RECORDED[(scenario, variant)]
    r = api.check(scenario, variant)
    assert r.complete and r.unique_states == states
    got = {name for name, v in r.verdicts().items() if v == "violated"}
    assert got == set(violated)
    for name, length in violated.items():
        r.assert_violated(name, length)
    if not violated:
        assert r.ok  # every witness of the story found too


def test_uncommitted_reads_are_caught_after_a_failover():
    r = api.check("kraft-failover", "uncommitted-reads", max_depth=4)
    r.assert_violated("NoUncommittedEffect", 4)
    assert api.check("kraft-failover", "kraft", max_depth=4).verdict(
        "NoUncommittedEffect") != "violated"


def test_stored_counterexamples_replay():
    paths = sorted(glob.glob(os.path.join(SUITE, "kraft-*", "*.json")))
    assert len(paths) >= 7
    for path in paths:
        doc = load_trace(path)
        model = api.build(doc["scenario"], doc["variant"], doc["params"])
        out = replay_document(model, doc)
        assert out.reproduced, (path, out.message)


def test_produce_by_name_writes_into_the_recreated_topic():
    """Produce carries no topic ID (ProduceRequest v0-11): a producer holding a lagging
    broker's metadata writes into the re-created topic."""
    r = api.check("kraft-lagging-broker", "kraft", {"records": 1})
    assert r.complete and r.unique_states == 9644
    assert {n for n, v in r.verdicts().items() if v == "violated"} == {
        "NoWriteToDeletedTopic", "NoRecordSkipped"}
    r.assert_violated("NoWriteToDeletedTopic", 7)
