"""Teams check their own models: `FILE.py:factory` and `module:factory` references with
`-p` keyword arguments, scenario files naming them, scenario packages through the
`kmc.scenarios` entry point group, the public API (`from kmc import ...`), and the packed
API's declaration checks — every mistake a one-line exit 2 that names the fix."""
import json
import subprocess
import sys
import textwrap

import pytest

import kmc
from kmc import catalog
from kmc.cli import main
from kmc.errors import UsageError
from kmc.model.contract import ModelError
from kmc.model.packed import Enum, Int, PackedModel

COUNTER = '''
from kmc import Model, always, sometimes

class Counter(Model):
    """Counts to a limit."""
    name = "counter"
    def __init__(self, limit, step=1, wrong=False):
        self.limit, self.step, self.wrong = limit, step, wrong
    def init_states(self):
        return [0]
    def actions(self, s):
        return ["inc"] if s + self.step <= self.limit else []
    def next_state(self, s, a):
        return s + self.step
    def properties(self):
        return [always("Bounded", lambda s: s <= (self.limit - 1 if self.wrong else self.limit)),
                sometimes("ReachesLimit", lambda s: s == self.limit)]

def make(limit=3, step=1, wrong=False, label="x"):
    """A counter that counts to LIMIT."""
    assert isinstance(label, str)
    return Counter(limit, step, wrong)

def not_a_model():
    return 42

def broken():
    return {}["missing"]
'''


@pytest.fixture
def models(tmp_path, monkeypatch):
    d = tmp_path / "proj"
    d.mkdir()
    (d / "counter_models.py").write_text(COUNTER)
    monkeypatch.chdir(d)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the model's folder goes again
    yield d
    for name in ("counter_models", "json_models"):
        sys.modules.pop(name, None)


def check_json(capsys, *argv):
    code = main(["check", *argv, "--quiet", "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_a_model_file_with_typed_parameters(models, capsys):
    code, out, _ = check_json(capsys, "counter_models.py:make", "-p", "limit=4", "-p",
                              "label=plain words")
    assert code == 0 and out["unique_states"] == 5
    assert out["params"] == {"limit": 4, "label": "plain words"}
    code, out, _ = check_json(capsys, "counter_models.py:make", "-p", "wrong=true")
    assert code == 1 and out["properties"]["Bounded"]["verdict"] == "violated"
    assert out["properties"]["Bounded"]["trace_length"] == 4


def test_a_module_reference_and_the_python_api(models, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(models))
    code, out, _ = check_json(capsys, "counter_models:make", "-p", "step=2", "-p", "limit=4")
    assert code == 0 and out["unique_states"] == 3
    from counter_models import Counter
    r = kmc.check(Counter(3, wrong=True), explorer="dfs")
    assert isinstance(r, kmc.CheckResult) and r.verdict("Bounded") == "violated"
    with pytest.raises(UsageError, match="no initial states"):
        kmc.check(type("Empty", (Counter,), {"init_states": lambda self: []})(3))


@pytest.mark.parametrize("ref,words", [
    ("counter_models.py:mak", "did you mean 'make'"),
    ("missing.py:make", "does not exist"),
    ("counter_models.py:not_a_model", "returned int, not a kmc.Model"),
    ("counter_models.py:broken", "raised KeyError"),
    ("no_such_module_xyz:make", "no module named"),
])
def test_bad_references_are_one_line_exit_2(models, capsys, ref, words):
    code = main(["check", ref, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.count("\n") == 1


def test_an_unknown_factory_parameter_names_the_signature(models, capsys):
    assert main(["check", "counter_models.py:make", "-p", "limt=3", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "limt" in err and "make(limit=3, step=1, wrong=False, label='x')" in err


def test_a_scenario_file_names_a_model_beside_it(models, capsys, tmp_path):
    (models / "run.toml").write_text('scenario = "counter_models.py:make"\n'
                                     '[params]\nwrong = true\nlimit = 5\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    import os
    os.chdir(elsewhere)
    code, out, _ = check_json(capsys, str(models / "run.toml"))
    assert code == 1 and out["properties"]["Bounded"]["trace_length"] == 6


def test_scenarios_from_an_entry_point(tmp_path, monkeypatch, capsys):
    pkg = tmp_path / "site"
    (pkg / "team_scen").mkdir(parents=True)
    (pkg / "team_scen" / "__init__.py").write_text(COUNTER + textwrap.dedent('''
        from kmc import Scenario, Param
        SCENARIOS = [Scenario(name="team-counter", description="the team's counter",
                              build=lambda v, p: Counter(p["limit"], wrong=(v == "bug")),
                              params=(Param("limit", 3, "how far"),),
                              variants=("ok", "bug"), default_variant="ok")]
    '''))
    info = pkg / "team_scen-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: team-scen\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[kmc.scenarios]\nteam = team_scen:SCENARIOS\n")
    monkeypatch.syspath_prepend(str(pkg))
    sc = catalog.scenarios()["team-counter"]
    assert sc.source == "entry point team (team_scen:SCENARIOS)"
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "team-counter" in listing and "[entry point team" in listing
    code, out, _ = check_json(capsys, "team-counter", "--variant", "bug")
    assert code == 1 and out["variant"] == "bug"
    (info / "entry_points.txt").write_text("[kmc.scenarios]\nteam = team_scen:NOPE\n")
    assert main(["list"]) == 0  # a broken plugin is skipped, with a warning
    out, err = capsys.readouterr()
    assert "team-counter" not in out and "twophase" in out
    assert err.startswith("kmc: warning: entry point 'team'") and "skipped" in err
    assert main(["check", "twophase", "--quiet"]) == 0  # built-ins never load plugins
    (info / "entry_points.txt").write_text("[kmc.scenarios]\nteam = team_scen:BROKEN\n")
    (pkg / "team_scen" / "__init__.py").write_text(textwrap.dedent('''
        from kmc import Scenario
        def fails(v, p):
            raise RuntimeError("no model today")
        BROKEN = [Scenario(name="team-broken", description="a model that cannot be built",
                           build=fails)]
    '''))
    sys.modules.pop("team_scen", None)
    assert main(["list"]) == 0  # a plugin scenario whose model cannot be built: skipped
    out, err = capsys.readouterr()
    assert "team-broken" not in out and "twophase" in out
    assert "'team-broken'" in err and "no model today" in err and "skipped" in err
    (pkg / "team_scen" / "__init__.py").write_text(COUNTER + textwrap.dedent('''
        from kmc import Scenario
        BROKEN = [Scenario(name="team-loud", description="clears\\x1b[2Jthe\\nscreen",
                           build=lambda v, p: Counter(3))]
    '''))
    sys.modules.pop("team_scen", None)
    assert main(["list"]) == 0  # a plugin's control characters are shown escaped
    out = capsys.readouterr().out
    assert "clears\\x1b[2Jthe\\nscreen" in out and "\x1b" not in out


@pytest.mark.parametrize("argv,words", [
    (["check", "stale-reed"], "did you mean 'stale-read'"),
    (["check", "stale-read", "--variant", "kip561"], "did you mean 'kip516'"),
    (["check", "stale-read", "--variant", ""], "has no variant ''"),
    (["check", "twophase", "-p", "rn=3"], "did you mean 'rm'"),
])
def test_did_you_mean(capsys, argv, words):
    assert main(argv + ["--quiet"]) == 2
    assert words in capsys.readouterr().err


def test_a_name_far_from_every_choice_gets_no_suggestion(capsys):
    assert main(["check", "nope", "--quiet"]) == 2
    assert "did you mean" not in capsys.readouterr().err


def test_list_marks_the_default_variant_and_quotes_the_suite(capsys):
    assert main(["list", "--json"]) == 0
    table = {s["name"]: s for s in json.loads(capsys.readouterr().out)["scenarios"]}
    sr = table["stale-read"]
    assert sr["default_variant"] == "kip516"
    assert sr["expectations"]["legacy"].startswith("violates ")
    assert "NoStaleRead (14)" in sr["expectations"]["legacy"]
    assert sr["expectations"]["kip516"].startswith("holds")
    assert sr["property_descriptions"]["NoStaleRead"]
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    assert "* kip516: holds" in text and "  legacy: violates" in text


class Toggle(PackedModel):
    name = "toggle"

    def __init__(self, then=None, over=None, extra=None):
        self._then, self._over, self._extra = then, over, extra
        super().__init__()

    def declare(self, spec):
        spec.var("on", Enum(False, True), size=2)
        spec.var("mode", Enum("a", "b"))
        spec.index("P", range(2))
        spec.rule("Flip", over=self._over or {"p": "P"}, when="True",
                  then=self._then or {"on[p]": "not on[p]"})
        spec.init(on=[False, False], mode="a")
        if self._extra:
            self._extra(spec)


@pytest.mark.parametrize("kwargs,words", [
    ({"then": {"off[p]": "True"}}, "rule 'Flip' assigns to 'off', which is not a declared"),
    ({"then": {"on": "True"}}, "assigns to the whole array 'on'"),
    ({"then": {"mode[p]": "'b'"}}, "'mode' is not an array"),
    ({"then": {"on[2]": "True"}}, "index 2, outside on[0..1]"),
    ({"over": {"p": "Q"}}, "names no declared index set"),
    ({"over": {"p": range(3)}}, "index 2, outside on[0..1]"),
    ({"over": {"mode": "P"}, "then": {"on[0]": "True"}}, "hides the variable"),
    ({"extra": lambda s: s.rule("Flip")}, "rule 'Flip' is declared twice"),
    ({"extra": lambda s: (s.always("X", "True"), s.sometimes("X", "True"))},
     "two properties are named 'X'"),
    ({"extra": lambda s: s.var("all", Enum(0, 1))}, "variable 'all' is not a usable name"),
    ({"extra": lambda s: s.rule("G", when="ready", then={"mode": "'b'"})},
     "packed model 'toggle': rule 'G': 'ready' is not a declared variable"),
    ({"extra": lambda s: s.always("Safe", "on[0] or limit")},
     "always property 'Safe': 'limit' is not a declared"),
    ({"extra": lambda s: s.always("Two", "len(P) == 2")}, "index set 'P' is read outside all"),
    ({"extra": lambda s: s.symmetric("Q", ["on"])}, "spec.symmetric('Q', ...) names no"),
    ({"extra": lambda s: s.symmetric("P", ["mode"])}, "'mode' is not an array of 2 elements"),
    ({"extra": lambda s: s.var("z", Enum(0, 1), size="3")}, "'z' has size '3'"),
    ({"extra": lambda s: s.var("z", Int(3, 0))}, "Int(3, 0) is empty"),
    ({"extra": lambda s: s.var("z", range(3))}, "give a non-empty Enum(...), Int(lo, hi)"),
    ({"extra": lambda s: s.init(on=[True], mode="a")}, "on[2] needs 2 values"),
])
def test_the_packed_api_checks_declarations(kwargs, words):
    with pytest.raises(ModelError, match=None) as e:
        Toggle(**kwargs)
    assert words in str(e.value)
    assert len(Toggle().successors(Toggle().init_states()[0])) == 2


def test_parameters_take_the_type_of_the_factory_default(models, capsys):
    code, out, _ = check_json(capsys, "counter_models.py:make", "-p", "wrong=False", "-p",
                              "limit=4")
    assert code == 0 and out["unique_states"] == 5  # False is false, not a truthy string
    code, out, _ = check_json(capsys, "counter_models.py:make", "-p", "wrong=yes")
    assert code == 1
    assert main(["check", "counter_models.py:make", "-p", "limit=two", "--quiet"]) == 2
    assert "parameter limit takes a whole number, got 'two'" in capsys.readouterr().err


def test_a_string_default_that_spells_a_type_name_still_takes_strings():
    import inspect

    from kmc.user_models import coerce

    def make(kind="bool", size: "int" = 1, mode: "str" = None):  # noqa: F821
        pass
    p = inspect.signature(make).parameters
    assert coerce("m.py:make", p["kind"], "none") == "none"  # the default is a str
    assert coerce("m.py:make", p["size"], "3") == 3  # an annotation named as a string
    assert coerce("m.py:make", p["mode"], "fast") == "fast"


def test_the_models_neighbours_do_not_shadow_what_kmc_imports(models, capsys):
    (models / "difflib.py").write_text("raise SystemExit('the neighbour ran')\n")
    assert main(["check", "counter_models.py:mak", "--quiet"]) == 2
    assert "did you mean 'make'" in capsys.readouterr().err
    (models / "json.py").write_text("")
    (models / "json_models.py").write_text(COUNTER)
    assert main(["check", "json.py:make", "--quiet"]) == 2
    assert "a module named 'json' is already" in capsys.readouterr().err


def test_a_trace_file_never_chooses_code_to_run(models, capsys, tmp_path):
    out_dir = tmp_path / "out"
    assert main(["check", "counter_models.py:make", "-p", "wrong=true", "--out",
                 str(out_dir), "--quiet"]) == 1
    capsys.readouterr()
    trace = out_dir / "trace-Bounded.json"
    assert main(["replay", str(trace)]) == 2
    assert "--model counter_models.py:make" in capsys.readouterr().err
    assert main(["replay", str(trace), "--model", "counter_models.py:make"]) == 0
    doc = json.loads(trace.read_text())
    doc.update(scenario="os:system", params={"command": f"touch {tmp_path}/ran"})
    trace.write_text(json.dumps(doc))
    assert main(["replay", str(trace)]) == 2
    assert not (tmp_path / "ran").exists()


def test_a_user_model_failing_while_explored_is_named(models, capsys):
    (models / "bad_models.py").write_text(
        "from kmc import Model, always\n"
        "class Bad(Model):\n"
        "    def init_states(self): return [0]\n"
        "    def actions(self, s): return [1]\n"
        "    def next_state(self, s, a): return s + 1 if s < 100 else {}['boom']\n"
        "    def properties(self): return [always('P', lambda s: True)]\n"
        "def make(): return Bad()\n")
    try:
        assert main(["check", "bad_models.py:make", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "bad_models.py:make raised KeyError" in err
    finally:
        sys.modules.pop("bad_models", None)


@pytest.mark.parametrize("kwargs, words", [
    (dict(scenario="twophase", max_states="10"), "max_states must be a whole number"),
    (dict(scenario="twophase", max_states=2.5), "max_states must be a whole number"),
    (dict(scenario="twophase", max_depth=-3), "max_depth must be a whole number > 0"),
    (dict(scenario="twophase", time_limit=-5), "time_limit must be a number of seconds"),
    (dict(scenario="twophase", time_limit=float("nan")), "time_limit must be"),
    (dict(scenario="twophase", explorer="simulate", walks="10"), "walks must be a whole number"),
    (dict(scenario="twophase", explorer="simulate", seed=-1), "seed must be a whole number >= 0"),
    (dict(scenario="twophase", explorer=["bfs"]), "unknown explorer"),
    (dict(scenario="twophase", bogus=1), "the bfs explorer takes no option 'bogus'"),
    (dict(scenario="twophase", properties=[]), "properties is check's own to set"),
    (dict(scenario="twophase", core=1), "core is check's own to set"),
    (dict(scenario=42), "scenario must be a name"),
    (dict(scenario="twophase", params="rm=3"), "params must be a dict"),
    (dict(scenario="twophase", explorer="spark", partitions=0), "partitions must be a whole"),
    (dict(scenario="twophase", explorer="spark", master=5), "master must be a non-empty str"),
    (dict(scenario="twophase", explorer="spark", checkpoint_dir=123), "checkpoint_dir must"),
    (dict(scenario="twophase", explorer="spark", executors=1.5), "executors must be a whole"),
    (dict(scenario="twophase", explorer="spark", checkpoint_dir="/tmp/x", resume="no"),
     "resume must be True or False"),
])
def test_the_api_names_a_mistyped_argument(kwargs, words):
    with pytest.raises(UsageError, match=words):
        kmc.check(**kwargs)


def test_a_verdict_of_an_unchecked_property_names_those_checked():
    result = kmc.check("diehard")
    with pytest.raises(KeyError, match="no property 'Nope' was checked: this result has "):
        result.verdict("Nope")


def test_a_user_models_counterexample_replays_and_shows_as_printed(models, capsys, tmp_path):
    out, pics = tmp_path / "out", tmp_path / "pics"
    code = main(["check", "counter_models.py:make", "-p", "wrong=true", "--quiet",
                 "--out", str(out)])
    text = capsys.readouterr().out
    trace = out / "trace-Bounded.json"
    assert code == 1 and f"kmc replay {trace} --model counter_models.py:make" in text
    assert f"kmc replay {trace} --model counter_models.py:make" in \
        (out / "index.html").read_text()
    assert main(["replay", str(trace), "--model", "counter_models.py:make"]) == 0
    # the program check writes rebuilds the model from any directory
    program = out / "replay-Bounded.py"
    assert f"{models / 'counter_models.py'}:make" in program.read_text()
    subprocess.run([sys.executable, str(program)], cwd=tmp_path, check=True,
                   capture_output=True)
    capsys.readouterr()
    # a model show cannot load is exit 2 before anything is printed
    assert main(["show", str(trace), "--pictures", str(pics), "--state-graph"]) == 2
    printed, err = capsys.readouterr()
    assert printed == "" and "--model counter_models.py:make" in err
    # another model whose states differ: no state graph, and show says why
    (models / "shifted.py").write_text(COUNTER.replace("return [0]", "return [10]").replace(
        '["inc"] if s + self.step', '["inc"] if s - 10 + self.step'))
    assert main(["show", str(trace), "--pictures", str(pics), "--state-graph",
                 "--model", "shifted.py:make"]) == 0
    assert "no state graph: the trace no longer replays" in capsys.readouterr().out
    assert not list(pics.glob("states-*"))
    sys.modules.pop("shifted", None)



def test_what_a_model_prints_never_spoils_the_json(models, capsys):
    """--json's standard output is the one JSON object: a model that prints while it
    loads and while it runs has its words on standard error."""
    (models / "chatty_models.py").write_text(
        COUNTER.replace("class ", "print('loading')\n\nclass ", 1)
        .replace("    def init_states(self):",
                 "    def init_states(self):\n        print('starting')", 1))
    try:
        code, d, err = check_json(capsys, "chatty_models.py:make", "-p", "limit=3")
    finally:
        sys.modules.pop("chatty_models", None)
    assert d is not None and d["exit_code"] == code
    assert "loading" in err and "starting" in err
