"""`-p plane=zk|kraft` on the six lifecycle scenarios: the default plane keeps the
ZooKeeper answers, plane=kraft builds the KRaft model with the scenario's bounds carried
over, misuse is a one-line exit-2 error, and `kmc list --json` shows every plane."""
from __future__ import annotations

import json

import pytest

from kmc import api
from kmc.cli import main
from kmc.model.kafka.kraft.model import KRaftModel
from kmc.model.kafka.kraft.state import Bounds as KRaftBounds
from kmc.model.kafka.kraft.variants import VARIANT_NAMES as KRAFT_VARIANTS
from kmc.model.kafka.planes import kraft_bounds, kraft_only, zk_only
from kmc.model.scenario import Param, Scenario, ScenarioError, VariantSet
from kmc.model.kafka.zk.cluster import Cluster
from kmc.model.kafka.zk.scenarios import PARAM_HELP, SCENARIOS
from kmc.model.kafka.zk.variants import VARIANT_NAMES as ZK_VARIANTS
from kmc.reports.regress.suite import builtin_suite, read_suite
from kmc.reports.summary import write_traces

LIFECYCLE = [sc.name for sc in SCENARIOS]


def test_the_six_lifecycle_scenarios_take_a_plane():
    assert LIFECYCLE == ["stale-read", "stale-state", "offline-delete",
                         "failover-mid-delete", "recreate-race", "lifecycle-large"]
    for sc in SCENARIOS:
        plane = next(p for p in sc.params if p.name == "plane")
        assert plane.default == "zk" and plane.choices == ("zk", "kraft")
        assert sc.variants == ZK_VARIANTS and sc.variant_default == "kip516"


@pytest.mark.parametrize("name", LIFECYCLE)
def test_the_default_plane_builds_the_zookeeper_model_as_before(name):
    sc = next(s for s in SCENARIOS if s.name == name)
    for params in ({}, {"plane": "zk"}):
        model = api.build(name, None, params)
        assert isinstance(model, Cluster) and model.variant == "kip516"
        # every ZooKeeper bound is the scenario's default, the KRaft-only ones unused
        assert model.bounds == type(model.bounds)(**{
            p.name: p.default for p in sc.params if p.name in model.bounds._fields})
    v, params = sc.resolve(None, {})
    assert v == "kip516" and params["plane"] == "zk"
    assert not set(kraft_only(PARAM_HELP)) & set(params)


def test_the_default_plane_gives_the_recorded_answer():
    """offline-delete with and without `-p plane=zk` gives what the suite recorded for
    the scenario's plain kip516 run."""
    suite = read_suite(builtin_suite())
    entry = next(e for e in suite.entries if (e.scenario, e.variant) ==
                 ("offline-delete", "kip516") and not e.params and not e.bounds
                 and e.explorer == "bfs" and e.expect is not None)
    for params in ({}, {"plane": "zk"}):
        r = api.check("offline-delete", params=params)
        assert r.extra["variant"] == "kip516"
        assert r.unique_states == entry.expect.states
        violated = {n for n, v in r.verdicts().items() if v == "violated"}
        assert violated == set(entry.expect.violated)
        found = {n for n, v in r.verdicts().items() if v == "witness_found"}
        assert found == set(entry.expect.witnesses)


@pytest.mark.parametrize("name", LIFECYCLE)
def test_plane_kraft_builds_the_kraft_model_with_the_scenario_bounds(name):
    sc = next(s for s in SCENARIOS if s.name == name)
    zk = api.build(name)
    model = api.build(name, None, {"plane": "kraft"})
    assert isinstance(model, KRaftModel) and model.variant == "kraft"
    for field in KRaftBounds._fields:
        if field in zk.bounds._fields:
            assert getattr(model.bounds, field) == getattr(zk.bounds, field), field
        else:
            assert getattr(model.bounds, field) == getattr(KRaftBounds(), field), field
    assert model.bounds == kraft_bounds(zk.bounds)
    # a shared bound and a KRaft-only one set on the command line reach the model
    model = api.build(name, "compare-by-name", {"plane": "kraft", "brokers": "3",
                                                "fences": "1"})
    assert (model.variant, model.bounds.brokers, model.bounds.fences) == \
        ("compare-by-name", 3, 1)
    v, params = sc.resolve(None, {"plane": "kraft"})
    assert v == "kraft" and not set(zk_only(PARAM_HELP)) & set(params)
    # the resolved parameters resolve again to themselves (trace files, replay)
    assert sc.resolve(v, params) == (v, params)


def test_zookeeper_only_bounds_are_the_ones_kraft_has_no_counterpart_for():
    assert set(zk_only(PARAM_HELP)) == {"reassign", "loss", "reorder", "purge_delay"}
    assert {"fences", "reset", "leader_epoch"} <= set(kraft_only(PARAM_HELP))


def test_stale_read_on_kraft_explores_what_kraft_stray_explores():
    """stale-read's bounds without its reassignment are kraft-stray's: the same states
    and verdicts."""
    a = api.check("stale-read", params={"plane": "kraft"})
    b = api.check("kraft-stray")
    assert (a.unique_states, a.max_depth) == (b.unique_states, b.max_depth)
    assert a.verdicts() == b.verdicts()


def _error(capsys, argv) -> str:
    assert main(argv + ["--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("kmc: error: ")
    return err


@pytest.mark.parametrize("argv,words", [
    (["-p", "plane=kraft", "-p", "loss=true"], ["parameter loss", "plane=kraft",
                                                 "-p plane=zk"]),
    (["-p", "plane=kraft", "-p", "reassign=0"], ["parameter reassign", "-p plane=zk"]),
    (["-p", "fences=1"], ["parameter fences", "plane=zk", "-p plane=kraft"]),
    (["--variant", "kraft"], ["variant 'kraft'", "runs with plane=kraft",
                              "add -p plane=kraft"]),
    (["-p", "plane=kraft", "--variant", "kip516"], ["variant 'kip516'",
                                                    "runs with plane=zk",
                                                    "add -p plane=zk"]),
    (["-p", "plane=kraft", "-p", "brokers=4"], ["brokers=4", "1..3", "plane=kraft"]),
    (["-p", "plane=etcd"], ["plane='etcd'", "zk, kraft"]),
])
def test_misuse_is_a_one_line_exit_2_error(capsys, argv, words):
    err = _error(capsys, ["check", "offline-delete"] + argv)
    for w in words:
        assert w in err, (w, err)


def test_a_kraft_plane_counterexample_replays(tmp_path, capsys):
    """A trace file records the resolved parameters (plane included, the ZooKeeper-only
    ones left out), and `kmc replay` rebuilds the KRaft model from them."""
    r = api.check("offline-delete", "compare-by-name", {"plane": "kraft"},
                  stop_on_violation=True)
    assert r.verdict("NoStaleReplication") == "violated"
    path = write_traces(r, str(tmp_path))["NoStaleReplication"]
    doc = json.loads(open(path).read())
    assert doc["params"]["plane"] == "kraft" and "loss" not in doc["params"]
    assert main(["replay", path]) == 0
    assert "reproduced: NoStaleReplication violated" in capsys.readouterr().out


def test_list_json_shows_the_plane_of_every_scenario(capsys):
    assert main(["list", "--json"]) == 0
    table = {s["name"]: s for s in json.loads(capsys.readouterr().out)["scenarios"]}
    for name in LIFECYCLE:
        d = table[name]
        assert d["plane"] == "zk" and list(d["planes"]) == ["zk", "kraft"]
        assert d["planes"]["zk"]["variants"] == list(ZK_VARIANTS) == d["variants"]
        assert d["planes"]["kraft"]["variants"] == list(KRAFT_VARIANTS)
        assert (d["planes"]["zk"]["default_variant"],
                d["planes"]["kraft"]["default_variant"]) == ("kip516", "kraft")
        assert set(d["planes"]["kraft"]["unused"]) == set(zk_only(PARAM_HELP))
        assert "MetadataMonotonic" in d["planes"]["kraft"]["properties"]
        assert "MetadataMonotonic" not in d["planes"]["zk"]["properties"]
        assert "plane zk only" in d["params"]["loss"]["help"]
    both = table["recreate-during-expansion"]
    assert both["plane"] == "kraft" and list(both["planes"]) == ["kraft", "zk"]
    assert both["planes"]["zk"]["variants"] == list(ZK_VARIANTS)
    assert both["variants"] == list(KRAFT_VARIANTS)
    for d in table.values():
        single = {"kraft": "kraft", "partitions": "zk", "validation": None}
        if d["family"] in single and d is not both:
            assert d["plane"] == single[d["family"]]
            assert list(d["planes"]) == ([d["plane"]] if d["plane"] else [])
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    assert "planes: zk (default), kraft (-p plane=kraft)" in text
    assert "variants with -p plane=kraft (* default):" in text
    assert "planes: kraft (default), zk (-p plane=zk)" in text
    assert "variants with -p plane=zk (* default):" in text


def _toy(**kw) -> Scenario:
    sets = {"a": VariantSet(("x", "y"), "y", unused=("n",)),
            "b": VariantSet(("z",), "z", params=(Param("k", 1, "", 1, 2),))}
    args = dict(name="toy", description="", build=lambda v, p: (v, p),
                params=(Param("mode", "a", choices=("a", "b")), Param("k", 1, "", 1, 9),
                        Param("n", 0, "", 0, 3)),
                variants=("x", "y"), default_variant="y", selector="mode",
                variant_sets=sets)
    return Scenario(**{**args, **kw})


def test_a_selector_chooses_variants_parameters_and_ranges():
    sc = _toy()
    assert sc.every_variant == ("x", "y", "z")
    assert sc.resolve(None, {}) == ("y", {"mode": "a", "k": 1})
    assert sc.resolve(None, {"mode": "b"}) == ("z", {"mode": "b", "k": 1, "n": 0})
    assert sc.resolve("x", {"k": "9"}) == ("x", {"mode": "a", "k": 9})
    with pytest.raises(ScenarioError, match=r"1\.\.2 with mode=b"):
        sc.resolve(None, {"mode": "b", "k": "3"})
    with pytest.raises(ScenarioError, match="parameter n does not apply with mode=a: "
                                            "drop -p n, or use -p mode=b"):
        sc.resolve(None, {"n": "0"})
    with pytest.raises(ScenarioError, match="runs with mode=a, not mode=b"):
        sc.resolve("x", {"mode": "b"})
    with pytest.raises(ScenarioError, match=r"has no variant 'w': use one of x, y "
                                            r"\(with mode=a\); z \(with mode=b\)"):
        sc.resolve("w", {})
    with pytest.raises(ValueError, match="selector's default"):
        _toy(variants=("z",), default_variant="z")


def test_a_suite_entry_without_variant_covers_its_plane_default(tmp_path):
    from kmc.commands.regress import missing
    from kmc.reports.regress.suite import parse_suite

    path = tmp_path / "suite.toml"
    text = '[[entry]]\nscenario = "stale-read"\nparams = { plane = "kraft" }\n'
    todo = {(m["scenario"], m["variant"]) for m in missing(parse_suite(text, str(path)))}
    assert ("stale-read", "kip516") in todo  # the entry runs kraft, not kip516
