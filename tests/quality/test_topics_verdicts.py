"""The KIP-516 regression table: every named scenario x every variant, exhaustive BFS.

Each row pins what running the model produced: the number of distinct states, and for
each violated property the length of its (BFS-shortest) counterexample. A model change
that flips a verdict, lengthens a trace or moves a count fails here. Every witness the
scenario declares must be found, except where a row says it is missing.

Expected verdicts (docs/model-topic-lifecycle.md): legacy violates NoStaleRead through
the KIP's "Stale reads" and leaves stale state (StaleReplicasCleaned); legacy cannot
finish a deletion while a replica's broker is down (DeletionCompletes in offline-delete,
failover-mid-delete); legacy shows KAFKA-6098 (RecreateAfterDelete in recreate-race);
kip516 holds everything; each mutant is caught by the property its guard protects.
"""
from functools import lru_cache

import pytest

from kmc import api
from kmc.model.topics.variants import VARIANT_NAMES

#: (scenario, variant) -> (distinct states, {violated property: counterexample length})
EXPECTED = {
    ("recreate-race", "legacy"): (114, {"NoStaleRead": 8, "NoWriteToDeletedTopic": 7,
                                        "RecreateAfterDelete": 3}),
    ("recreate-race", "kip516"): (488, {}),
    ("recreate-race", "kip516-no-fetch-id"): (528, {"NoStaleRead": 6}),
    ("recreate-race", "kip516-incremental-ignores-id"): (488, {}),
    ("recreate-race", "kip516-failover-incremental"): (488, {}),
    ("recreate-race", "kip516-no-stop-replica-retry"): (488, {}),
    ("recreate-race", "kip516-no-epoch-fencing"): (488, {}),
    ("offline-delete", "legacy"): (101, {"RecreateAfterDelete": 3, "DeletionCompletes": 3}),
    ("offline-delete", "kip516"): (136, {}),
    ("offline-delete", "kip516-no-fetch-id"): (136, {}),
    ("offline-delete", "kip516-incremental-ignores-id"): (136, {}),
    ("offline-delete", "kip516-failover-incremental"): (136, {}),
    ("offline-delete", "kip516-no-stop-replica-retry"): (115, {}),
    ("offline-delete", "kip516-no-epoch-fencing"): (136, {}),
    ("failover-mid-delete", "legacy"): (10617, {"DeletionCompletes": 5}),
    ("failover-mid-delete", "kip516"): (1941, {}),
    ("failover-mid-delete", "kip516-no-fetch-id"): (1941, {}),
    ("failover-mid-delete", "kip516-incremental-ignores-id"): (1941, {}),
    ("failover-mid-delete", "kip516-failover-incremental"): (2397,
                                                             {"StaleReplicasCleaned": 7}),
    ("failover-mid-delete", "kip516-no-stop-replica-retry"): (1792, {}),
    ("failover-mid-delete", "kip516-no-epoch-fencing"): (4297, {
        "ControllerEpochFencing": 5, "StaleReplicasCleaned": 12}),
    ("stale-state", "legacy"): (1622, {
        "NoStaleRead": 14, "NoStaleReplication": 11, "RecreateAfterDelete": 3,
        "StaleReplicasCleaned": 9, "DeletionCompletes": 5}),
    ("stale-state", "kip516"): (22482, {}),
    ("stale-state", "kip516-no-fetch-id"): (25846, {
        "NoStaleRead": 7, "NoStaleReplication": 7, "StaleReplicasCleaned": 16}),
    ("stale-state", "kip516-incremental-ignores-id"): (51842, {
        "NoStaleRead": 9, "NoStaleReplication": 5, "StaleReplicasCleaned": 13}),
    ("stale-state", "kip516-failover-incremental"): (22482, {}),
    ("stale-state", "kip516-no-stop-replica-retry"): (11192, {"StaleReplicasCleaned": 4}),
    ("stale-state", "kip516-no-epoch-fencing"): (22482, {}),
    ("stale-read", "legacy"): (1298, {
        "NoStaleRead": 14, "NoStaleReplication": 11, "RecreateAfterDelete": 3,
        "StaleReplicasCleaned": 9, "DeletionCompletes": 5}),
    ("stale-read", "kip516"): (10722, {}),
    ("stale-read", "kip516-no-fetch-id"): (12392, {
        "NoStaleRead": 7, "NoStaleReplication": 7, "StaleReplicasCleaned": 16}),
    ("stale-read", "kip516-incremental-ignores-id"): (10722, {}),
    ("stale-read", "kip516-failover-incremental"): (10722, {}),
    ("stale-read", "kip516-no-stop-replica-retry"): (7641, {}),
    ("stale-read", "kip516-no-epoch-fencing"): (10722, {}),
}

#: the large scenario (slow): 3 brokers, 2 incarnations, a crash and a failover
EXPECTED_LARGE = {
    ("lifecycle-large", "legacy"): (76513, {"RecreateAfterDelete": 3,
                                            "DeletionCompletes": 5}),
    ("lifecycle-large", "kip516"): (325289, {}),
}
#: witnesses a row does not reach (legacy never fetches stale data without reassignment)
MISSING = {("lifecycle-large", "legacy"): {"StaleFetchAttempted"}}

#: mutant -> (scenario, the property its removed guard protects, shortest trace)
MUTANT_CAUGHT = {
    "kip516-no-fetch-id": ("stale-read", "NoStaleRead", 7),
    "kip516-incremental-ignores-id": ("stale-state", "NoStaleReplication", 5),
    "kip516-failover-incremental": ("failover-mid-delete", "StaleReplicasCleaned", 7),
    "kip516-no-stop-replica-retry": ("stale-state", "StaleReplicasCleaned", 4),
    "kip516-no-epoch-fencing": ("failover-mid-delete", "ControllerEpochFencing", 5),
}


@lru_cache(maxsize=None)
def run(scenario, variant):
    return api.check(scenario, variant)


def assert_row(scenario, variant, states, violated):
    r = run(scenario, variant)
    assert r.complete
    got = {n: len(d.trace) for n, d in r.discoveries.items()
           if r.verdict(n) == "violated"}
    assert got == violated
    missing = {n for n, v in r.verdicts().items() if v == "witness_missing"}
    assert missing == MISSING.get((scenario, variant), set())
    assert r.unique_states == states
    model = r.extra["model"]
    props = {p.name: p for p in model.properties()}
    for name in violated:  # the trace replays and violates only at its last state
        d = r.discoveries[name]
        p = props[name]
        if p.kind == "always":
            assert [p.check(s) for s in d.trace.states] == \
                [True] * (len(d.trace) - 1) + [False]
        else:
            assert not p.check(d.trace.last)
            assert all(model.is_fault(a) for a, _t in model.successors(d.trace.last))


def test_the_table_covers_every_named_scenario_and_variant():
    scenarios = {sc for sc, _v in EXPECTED} | {sc for sc, _v in EXPECTED_LARGE}
    assert len(scenarios) == 6
    for sc in scenarios - {"lifecycle-large"}:
        assert {v for s, v in EXPECTED if s == sc} == set(VARIANT_NAMES)


@pytest.mark.parametrize("scenario,variant", sorted(EXPECTED))
def test_verdicts_counts_and_shortest_traces(scenario, variant):
    assert_row(scenario, variant, *EXPECTED[scenario, variant])


@pytest.mark.slow
@pytest.mark.parametrize("scenario,variant", sorted(EXPECTED_LARGE))
def test_large_scenario(scenario, variant):
    assert_row(scenario, variant, *EXPECTED_LARGE[scenario, variant])


@pytest.mark.parametrize("scenario", sorted({sc for sc, _v in EXPECTED}))
def test_kip516_holds_with_every_witness(scenario):
    r = run(scenario, "kip516")
    r.assert_properties()
    assert {n for n, k in r.properties.items() if k == "sometimes"}


def test_legacy_shows_the_kip516_motivating_failures():
    run("stale-read", "legacy").assert_violated("NoStaleRead", 14)
    run("stale-state", "legacy").assert_violated("StaleReplicasCleaned", 9)
    run("offline-delete", "legacy").assert_violated("DeletionCompletes", 3)
    run("failover-mid-delete", "legacy").assert_violated("DeletionCompletes", 5)
    run("recreate-race", "legacy").assert_violated("RecreateAfterDelete", 3)


@pytest.mark.parametrize("mutant", sorted(MUTANT_CAUGHT))
def test_each_mutant_is_caught_by_the_property_its_guard_protects(mutant):
    scenario, prop, length = MUTANT_CAUGHT[mutant]
    run(scenario, mutant).assert_violated(prop, length)
    run(scenario, "kip516").assert_properties()  # the guard is what makes the difference
