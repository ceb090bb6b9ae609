"""The topic-lifecycle model: catalogue, CLI exit codes, options, pictures, symmetry."""
import pytest
from toymodels import reachable

from kmc import api, catalog
from kmc.cli import main
from kmc.errors import UsageError
from kmc.model.contract import validate_model
from kmc.model.encoding import check_canonical
from kmc.model.kafka.symmetry import mappings
from kmc.model.kafka.zk import symmetry as tsym
from kmc.model.kafka.zk.properties import ALWAYS, QUIESCENT
from kmc.model.kafka.zk.variants import MUTANTS, VARIANT_NAMES, VARIANTS

NAMED = ("stale-read", "stale-state", "offline-delete", "failover-mid-delete",
         "recreate-race", "lifecycle-large")


def test_catalogue_lists_every_scenario_with_every_variant():
    table = catalog.scenarios()
    for name in NAMED:
        sc = table[name]
        assert sc.variants == VARIANT_NAMES and sc.default_variant == "kip516"
        assert sc.family == "topics"
    assert {"legacy", "kip516"} <= set(VARIANT_NAMES) and len(MUTANTS) >= 4
    for name in MUTANTS:  # each mutant removes exactly one kip516 guard
        diff = [f for f, a, b in zip(VARIANTS["kip516"][0]._fields, VARIANTS["kip516"][0],
                                     VARIANTS[name][0]) if a != b]
        assert len(diff) == 1, (name, diff)


def test_kmc_list_shows_the_scenarios_and_variants(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in NAMED + tuple(MUTANTS):
        assert name in out


def test_stale_read_exit_codes_legacy_1_with_trace_kip516_0(capsys):
    assert main(["check", "stale-read", "--variant", "legacy", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "NoStaleRead" in out and "counterexample for NoStaleRead" in out
    assert "FetchResponse" in out
    assert main(["check", "stale-read", "--variant", "kip516", "--quiet"]) == 0


@pytest.mark.parametrize("argv,needle", [
    (["check", "stale-read", "--variant", "nope"], "has no variant 'nope'"),
    (["check", "stale-read", "-p", "rf=3"], "rf=3 needs at least 3 brokers"),
    (["check", "stale-read", "-p", "crashes=9"], "crashes=9 is out of range"),
    (["check", "stale-read", "-p", "loss=maybe"], "must be true or false"),
])
def test_bad_input_is_one_line_and_exit_2(argv, needle, capsys):
    assert main(argv + ["--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_models_validate_and_start_canonical():
    for name in NAMED:
        for variant in ("legacy", "kip516"):
            model = api.build(name, variant)
            validate_model(model)
            (s0,) = model.init_states()
            check_canonical(s0)
            for p in ALWAYS + QUIESCENT:
                assert p.check(s0), (name, variant, p.name)


def test_reordering_breaks_kip516_deletion_and_fifo_does_not():
    """With reordering, a FULL LeaderAndIsr overtaken by the StopReplica the same
    controller sent after it resurrects the deleted replica: KIP-516 relies on the
    controller's in-order channel (Kafka sends one request at a time)."""
    r = api.check("failover-mid-delete", "kip516", {"reorder": True})
    assert r.complete and r.unique_states == 10110
    r.assert_violated("StaleReplicasCleaned", 9)
    assert api.check("failover-mid-delete", "kip516").ok


def test_purge_delay_option_adds_the_purge_step():
    r = api.check("offline-delete", "kip516", {"purge_delay": True})
    assert r.ok and r.unique_states == 224 and r.coverage.get("purge", 0) > 0
    assert "purge" not in api.check("offline-delete", "kip516").coverage


def test_every_action_kind_is_drawn_in_a_declared_lane():
    for name, variant in (("stale-read", "legacy"), ("recreate-race", "legacy"),
                          ("failover-mid-delete", "kip516-no-epoch-fencing"),
                          ("stale-state", "kip516-no-stop-replica-retry")):
        r = api.check(name, variant)
        model = r.extra["model"]
        lanes = set(model.lanes())
        seen = set()
        for d in r.discoveries.values():
            t = d.trace
            for s, a in zip(t.states, t.actions):
                seen.add(model.action_name(a))
                assert model.action_actor(a) in lanes, a
                assert isinstance(model.format_action(a), str)
                msg = model.action_message(a, s)
                if msg is not None:
                    src, dst, label = msg
                    assert src in lanes and dst in lanes and label
        assert seen, name


def test_message_labels_carry_type_ids_and_epochs():
    r = api.check("failover-mid-delete", "kip516-failover-incremental")
    model = r.extra["model"]
    t = r.discoveries["StaleReplicasCleaned"].trace
    labels = [model.action_message(a, s) for s, a in zip(t.states, t.actions)]
    texts = [lab[2] for lab in labels if lab]
    assert any("LeaderAndIsr INCREMENTAL ce=2" in x for x in texts)
    assert any("StopReplica delete A-0 id=2 ce=1" in x for x in texts)
    r = api.check("stale-read", "kip516-no-fetch-id")
    model = r.extra["model"]
    t = r.discoveries["NoStaleRead"].trace
    texts = [model.action_message(a, s)[2] for s, a in zip(t.states, t.actions)
             if model.action_message(a, s)]
    assert any(x.startswith("Fetch A-0 no-id") for x in texts)  # the mutant's Fetch


@pytest.mark.parametrize("name,variant,limit", [
    ("failover-mid-delete", "kip516", 10_000), ("stale-read", "legacy", 10_000),
    ("lifecycle-large", "kip516", 300)])
def test_representative_is_constant_on_every_orbit(name, variant, limit):
    model = api.build(name, variant)
    maps = mappings(model.broker_ids)
    for s in reachable(model, limit):
        rep = model.representative(s)
        for mp in maps[1:]:
            renamed = tsym.rename(model, s, mp)
            check_canonical(renamed)
            assert model.representative(renamed) == rep


@pytest.mark.parametrize("name,variant", [("offline-delete", "legacy"),
                                          ("recreate-race", "kip516-no-fetch-id"),
                                          ("failover-mid-delete", "kip516-no-epoch-fencing")])
def test_symmetry_reduction_keeps_every_verdict(name, variant):
    plain = api.check(name, variant)
    reduced = api.check(name, variant, symmetry=True)
    assert reduced.unique_states < plain.unique_states
    assert reduced.verdicts() == plain.verdicts()
    for n, d in plain.discoveries.items():  # BFS: still the shortest
        assert len(reduced.discoveries[n].trace) == len(d.trace), n


def test_dfs_and_simulation_find_the_legacy_stale_read():
    assert api.check("stale-read", "legacy", explorer="dfs").verdict("NoStaleRead") == \
        "violated"
    sim = api.check("stale-read", "kip516-no-fetch-id", explorer="simulate", walks=400,
                    seed=1)
    assert sim.verdict("NoStaleRead") == "violated"


def test_usage_error_from_the_api_for_bad_rf():
    with pytest.raises(UsageError, match="needs at least"):
        api.check("recreate-race", "kip516", {"rf": 3})
