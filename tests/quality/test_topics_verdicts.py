"""The KIP-516 verdicts, run here with checks `kmc regress` does not make: every
scenario x variant's complete BFS run matches what the regression suite records
(regressions/regressions.toml, the one source of expected verdicts: states, violated
properties with their shortest counterexample lengths, witnesses), and every
counterexample violates its property only at its last state.

What the KIP and Kafka's history say, checked on the recorded verdicts: legacy violates
NoStaleRead through the KIP's "Stale reads" and leaves stale state (StaleReplicasCleaned);
legacy cannot finish a deletion while a replica's broker is down (DeletionCompletes in
offline-delete, failover-mid-delete); legacy shows KAFKA-6098 (RecreateAfterDelete in
recreate-race); kip516 holds everything; each mutant is caught by the property its guard
protects.
"""
from functools import lru_cache

import pytest

from kmc import api
from kmc.model.kafka.zk.variants import VARIANT_NAMES
from kmc.reports.regress.expect import compare, observe
from suite_rows import complete_rows, in_smoke, row_params

ROWS = complete_rows("topics")
#: the large scenario's complete runs (~30 s) are checked by `kmc regress --tier full`
LARGE = {"lifecycle-large"}

#: mutant -> (scenario, the property its removed guard protects)
MUTANT_CAUGHT = {
    "kip516-no-fetch-id": ("stale-read", "NoStaleRead"),
    "kip516-incremental-ignores-id": ("stale-state", "NoStaleReplication"),
    "kip516-failover-incremental": ("failover-mid-delete", "StaleReplicasCleaned"),
    "kip516-no-stop-replica-retry": ("stale-state", "StaleReplicasCleaned"),
    "kip516-no-epoch-fencing": ("failover-mid-delete", "ControllerEpochFencing"),
}


@lru_cache(maxsize=None)
def run(scenario, variant):
    return api.check(scenario, variant)


def assert_row(scenario, variant):
    r = run(scenario, variant)
    assert r.complete
    assert compare(ROWS[scenario, variant], observe(r)) == []
    model = r.extra["model"]
    props = {p.name: p for p in model.properties()}
    for name, v in r.verdicts().items():  # each trace violates only at its last state
        if v != "violated":
            continue
        d = r.discoveries[name]
        p = props[name]
        if p.kind == "always":
            assert [p.check(s) for s in d.trace.states] == \
                [True] * (len(d.trace) - 1) + [False]
        else:
            assert not p.check(d.trace.last)
            assert all(model.is_fault(a) for a, _t in model.successors(d.trace.last))


def test_the_suite_covers_every_named_scenario_and_variant():
    scenarios = {sc for sc, _v in ROWS}
    assert len(scenarios) == 6
    for sc in scenarios - LARGE:
        assert {v for s, v in ROWS if s == sc} == set(VARIANT_NAMES)


@pytest.mark.parametrize("scenario,variant", row_params(
    {k for k in ROWS if k[0] not in LARGE}, in_smoke("topics")))
def test_verdicts_counts_and_shortest_traces(scenario, variant):
    assert_row(scenario, variant)


@pytest.mark.parametrize("scenario", sorted({sc for sc, _v in ROWS} - LARGE))
def test_kip516_holds_with_every_witness(scenario):
    r = run(scenario, "kip516")
    r.assert_properties()
    assert {n for n, k in r.properties.items() if k == "sometimes"}


def violated(scenario, variant):
    return set(ROWS[scenario, variant].violated)


def test_legacy_shows_the_kip516_motivating_failures():
    assert "NoStaleRead" in violated("stale-read", "legacy")
    assert "StaleReplicasCleaned" in violated("stale-state", "legacy")
    assert "DeletionCompletes" in violated("offline-delete", "legacy")
    assert "DeletionCompletes" in violated("failover-mid-delete", "legacy")
    assert "RecreateAfterDelete" in violated("recreate-race", "legacy")
    run("stale-read", "legacy").assert_violated(
        "NoStaleRead", ROWS["stale-read", "legacy"].violated["NoStaleRead"])


@pytest.mark.parametrize("mutant", sorted(MUTANT_CAUGHT))
def test_each_mutant_is_caught_by_the_property_its_guard_protects(mutant):
    scenario, prop = MUTANT_CAUGHT[mutant]
    assert prop in violated(scenario, mutant) and not violated(scenario, "kip516")
    run(scenario, mutant).assert_violated(prop, ROWS[scenario, mutant].violated[prop])
    run(scenario, "kip516").assert_properties()  # the guard is what makes the difference
