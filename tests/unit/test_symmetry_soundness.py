"""A symmetry reduction is only as sound as the model's symmetry. ``--check-symmetry``
also checks that every property has the same value on a state and its images, that a
representative lies in its state's orbit and that ``symmetric_images`` answers for every
state; plain ``--symmetry`` never reports a trace that, rebuilt through the model's steps,
does not show its finding, and a lasso found on representatives is rebuilt as a concrete
lasso that closes on its own first state."""
import importlib
import json
import sys
from pathlib import Path

import pytest

from kmc import api
from kmc.cli import main
from kmc.explorers.liveness_lasso import close
from kmc.explorers.symcheck import SymmetryError
from kmc.model.lasso import Lasso
from kmc.model.trace import ReplayError

MODELS = '''
from itertools import permutations

from kmc import Model, always, eventually, sometimes


class Mutex(Model):
    """Two processes, idle or in the critical section; the property names process 1."""
    name = "mutex2"
    has_symmetry = True

    def __init__(self, rep="sort", images="all"):
        self.rep, self.images = rep, images

    def init_states(self):
        return [("idle", "idle")]

    def actions(self, s):
        return [("Enter", i) for i in range(2) if s[i] == "idle"] + \\
            [("Exit", i) for i in range(2) if s[i] == "cs"]

    def next_state(self, s, a):
        v = "cs" if a[0] == "Enter" else "idle"
        return tuple(v if j == a[1] else x for j, x in enumerate(s))

    def representative(self, s):
        if self.rep == "collapse":  # maps ("idle", "cs") to ("cs", "cs"): another orbit
            return ("idle", "idle") if "cs" not in s else ("cs", "cs")
        return tuple(sorted(s, reverse=self.rep == "reverse"))

    def symmetric_images(self, s):
        if self.images == "init" and s != ("idle", "idle"):
            return None
        return [(s[1], s[0])]

    def properties(self):
        return [always("P1NotAloneInCS", lambda s: s != ("idle", "cs")),
                sometimes("BothInCS", lambda s: s == ("cs", "cs"))]


class Sync(Model):
    """Its representative (max, max) is no state of the orbit: Sync is enabled on the
    representative of (1, 0) and not on (1, 0) itself."""
    name = "sync"
    has_symmetry = True

    def init_states(self):
        return [(0, 0)]

    def actions(self, s):
        return (["Up"] if s[0] < 1 else []) + (["Sync"] if s[0] == s[1] > 0 else [])

    def next_state(self, s, a):
        return (s[0] + 1, s[1]) if a == "Up" else (5, 5)

    def representative(self, s):
        return (max(s), max(s))

    def symmetric_images(self, s):
        return [(s[1], s[0])]

    def properties(self):
        return [sometimes("Five", lambda s: 5 in s)]


class Ring(Model):
    """n distinct values that Rot rotates (weakly fair): every state is symmetric to
    every other, so the reduced graph is one state with a self-loop."""
    name = "ring"
    has_symmetry = True
    weakly_fair = ("Rot",)

    def __init__(self, n=3):
        self.n = n

    def init_states(self):
        return [tuple(range(self.n))]

    def actions(self, s):
        return ["Rot"]

    def next_state(self, s, a):
        return s[1:] + s[:1]

    def representative(self, s):
        return tuple(sorted(s))

    def symmetric_images(self, s):
        return [tuple(p) for p in permutations(s) if p != s]

    def properties(self):
        return [eventually("Never", lambda s: len(s) > self.n)]


class Pair(Model):
    """Two processes idle -> done; ``fair`` names the weakly fair steps: one class for
    both ("Step"), or only process 0's ("Step-0"), which the swap does not preserve."""
    name = "pair"
    has_symmetry = True

    def __init__(self, fair="Step-0"):
        self.weakly_fair = (fair,)
        self.per_process = fair != "Step"

    def init_states(self):
        return [("idle", "idle")]

    def actions(self, s):
        return [("Step", i) for i in range(2) if s[i] == "idle"]

    def next_state(self, s, a):
        return tuple("done" if j == a[1] else x for j, x in enumerate(s))

    def action_name(self, a):
        return f"Step-{a[1]}" if self.per_process else "Step"

    def representative(self, s):
        return tuple(sorted(s, reverse=True))

    def symmetric_images(self, s):
        return [(s[1], s[0])]

    def properties(self):
        return [eventually("BothDone", lambda s: s == ("done", "done"))]


def pair(fair: str = "Step-0"):
    return Pair(fair)


def mutex(rep: str = "sort", images: str = "all"):
    return Mutex(rep, images)


def sync():
    return Sync()


def ring(n: int = 3):
    return Ring(n)
'''


@pytest.fixture
def models(tmp_path, monkeypatch):
    (tmp_path / "sym_soundness_models.py").write_text(MODELS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    yield importlib.import_module("sym_soundness_models")
    sys.modules.pop("sym_soundness_models", None)


def models_dir(module) -> Path:
    return Path(module.__file__).parent


def _one_line_error(capsys, argv) -> str:
    code = main(argv + ["--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    assert err.startswith("kmc: error: ") and len(err.strip().splitlines()) == 1, err
    assert "raised" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_a_property_that_tells_symmetric_states_apart_is_named(models, explorer):
    assert api.check(models.mutex(), explorer=explorer).verdict("P1NotAloneInCS") == \
        "violated"
    with pytest.raises(SymmetryError, match="property P1NotAloneInCS is not symmetric"):
        api.check(models.mutex(), explorer=explorer, check_symmetry=True)


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_a_representative_outside_the_orbit_is_named(models, explorer):
    with pytest.raises(SymmetryError, match="outside its orbit") as e:
        api.check(models.mutex("collapse"), explorer=explorer, check_symmetry=True)
    assert "('cs', 'cs')" in str(e.value)


def test_images_must_be_listed_for_every_state(models, capsys):
    with pytest.raises(SymmetryError, match="symmetric_images answered None") as e:
        api.check(models.mutex("collapse", "init"), check_symmetry=True)
    assert "('idle', 'idle')" not in str(e.value)  # the state it did not answer for
    err = _one_line_error(capsys, ["check", "sym_soundness_models.py:mutex", "-p",
                                   "images=init", "--check-symmetry"])
    assert "sym_soundness_models.py:mutex: symmetric_images answered None" in err


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_a_counterexample_that_does_not_violate_is_not_reported(models, capsys, explorer):
    # the run keeps ("idle", "cs"), which violates; its path rebuilt through the model's
    # steps takes Enter 0 first and ends in ("cs", "idle"), which does not
    with pytest.raises(SymmetryError, match="unsound for P1NotAloneInCS") as e:
        api.check(models.mutex("reverse"), explorer=explorer, symmetry=True)
    assert "ends in a state where it holds" in str(e.value)
    assert "--check-symmetry" in str(e.value)
    err = _one_line_error(capsys, ["check", "sym_soundness_models.py:mutex", "-p",
                                   "rep=reverse", "--symmetry", "--explorer", explorer])
    assert "symmetry is unsound for P1NotAloneInCS" in err


def test_a_trace_that_cannot_be_rebuilt_is_not_blamed_on_the_model(models, capsys):
    with pytest.raises(ReplayError, match="the witness of Five could not be rebuilt"):
        api.check(models.sync(), symmetry=True)
    err = _one_line_error(capsys, ["check", "sym_soundness_models.py:sync", "--symmetry"])
    assert "sym_soundness_models.py:sync: the witness of Five could not be rebuilt" in err
    assert "symmetry is likely unsound" in err and "--check-symmetry" in err
    with pytest.raises(SymmetryError, match="outside its orbit"):
        api.check(models.sync(), check_symmetry=True)


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
@pytest.mark.parametrize("n", [2, 3])
def test_a_lasso_found_on_representatives_closes_on_its_own_state(models, explorer, n):
    r = api.check(models.ring(n), explorer=explorer, symmetry=True)
    assert r.unique_states == 1
    d = r.discoveries["Never"]
    t = d.trace
    assert t.last == t.states[t.loop_start] and len(t) == n + 1, t.states
    assert d.detail["loop_start"] == t.loop_start and d.detail["loop_end"] == n
    # the same lasso as the unreduced run's
    plain = api.check(models.ring(n), explorer=explorer).discoveries["Never"].trace
    assert (t.states, t.loop_start) == (plain.states, plain.loop_start)


def test_a_lasso_written_under_symmetry_replays(models, capsys):
    assert main(["check", "sym_soundness_models.py:ring", "--symmetry", "--out", "o",
                 "--quiet"]) == 1
    capsys.readouterr()
    doc = json.loads((models_dir(models) / "o" / "trace-Never.json").read_text())
    steps, loop = doc["steps"], doc["loop_start"]
    assert steps[-1]["state"] == steps[loop]["state"] and len(steps) == 4
    code = main(["replay", "o/trace-Never.json", "--model", "sym_soundness_models.py:ring"])
    out, err = capsys.readouterr()
    assert code == 0 and "reproduced: Never violated" in out, out + err


def test_a_loop_that_comes_back_elsewhere_starts_where_it_does():
    # rounds of the loop from a end at b, c, then b again: the loop is b .. b
    t = Lasso(0, [0], ["a", "b"], ["go"], loop_start=0)
    ends = iter("cb")

    def again():
        t.states.append(next(ends))
        t.actions.append("go")
        t.action_indices.append(0)
    close(t, again)
    assert t.states == ["a", "b", "c", "b"] and t.loop_start == 1
    assert t.last == t.states[t.loop_start]


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_fairness_classes_the_symmetry_does_not_preserve_are_named(models, explorer):
    # only process 0's step is fair: without symmetry BothDone is violated (process 1
    # may stay idle); --symmetry alone would say it holds
    plain = api.check(models.pair(), explorer=explorer)
    assert plain.verdict("BothDone") == "violated"
    with pytest.raises(SymmetryError, match="fairness class 'Step-0' is enabled in a state"):
        api.check(models.pair(), explorer=explorer, check_symmetry=True)
    # one class for both processes' steps: the symmetry maps it onto itself
    fair = api.check(models.pair("Step"), explorer=explorer, check_symmetry=True)
    assert fair.verdict("BothDone") == "holds" == \
        api.check(models.pair("Step"), explorer=explorer).verdict("BothDone")
