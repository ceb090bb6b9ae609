"""`kmc replay --model` on a user model reproduces what `kmc check` found on the unchanged
model: with its parameters as the factory received them, within the model's boundary,
and only for a model `kmc check` would accept. `kmc check --out` writes the report of a
model whose trace is larger or deeper than what kmc reads from a user's file."""
import os
import sys

import pytest

from kmc.cli import main


@pytest.fixture
def models(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the model's folder goes again
    yield tmp_path
    for name in ("tagged_models", "bounded_models", "set_models", "deep_models",
                 "int_models"):
        sys.modules.pop(name, None)


TAGGED = '''
from typing import NamedTuple
from kmc import Model, always

class S(NamedTuple):
    tag: object
    n: int

class Tagged(Model):
    name = "tagged"
    def __init__(self, tag):
        self.tag = tag
    def init_states(self):
        return [S(self.tag, 0)]
    def actions(self, s):
        return ["inc"] if s.n < 3 else []
    def next_state(self, s, a):
        return S(s.tag, s.n + 1)
    def properties(self):
        return [always("Small", lambda s: s.n < 2)]

def make(tag=None):
    return Tagged(tag)
'''


@pytest.mark.parametrize("tag", ['"3"', '"true"', "3"])
def test_a_trace_replays_with_the_parameters_the_factory_received(models, capsys, tag):
    (models / "tagged_models.py").write_text(TAGGED)
    assert main(["check", "tagged_models.py:make", "-p", f"tag={tag}", "--out", "o",
                 "--quiet"]) == 1
    capsys.readouterr()
    code = main(["replay", "o/trace-Small.json", "--model", "tagged_models.py:make"])
    out, err = capsys.readouterr()
    assert code == 0 and "reproduced" in out, out + err


BOUNDED = '''
from kmc import Model, quiescent

class Bounded(Model):
    name = "bounded"
    def init_states(self):
        return [0]
    def actions(self, s):
        return ["inc"]
    def next_state(self, s, a):
        return s + 1
    def within_boundary(self, s):
        return s <= 2
    def properties(self):
        return [quiescent("NeverSettles", lambda s: False)]

def make():
    return Bounded()
'''


@pytest.mark.parametrize("prop", ["NeverSettles", "Deadlock"])
def test_replay_sees_the_successors_the_explorers_see(models, capsys, prop):
    """Past the boundary there is no successor: the last state settles (and deadlocks)
    for the explorers, and so for the replay."""
    (models / "bounded_models.py").write_text(BOUNDED)
    assert main(["check", "bounded_models.py:make", "--deadlock", "--out", "o",
                 "--quiet"]) == 1
    capsys.readouterr()
    code = main(["replay", f"o/trace-{prop}.json", "--model", "bounded_models.py:make"])
    out, err = capsys.readouterr()
    assert code == 0 and f"reproduced: {prop}" in out and "at step 2" in out, out + err


def test_a_step_out_of_the_boundary_is_a_divergence(models, capsys):
    (models / "bounded_models.py").write_text(BOUNDED)
    assert main(["check", "bounded_models.py:make", "--out", "o", "--quiet"]) == 1
    (models / "bounded_models.py").write_text(BOUNDED.replace("s <= 2", "s <= 1"))
    sys.modules.pop("bounded_models", None)
    capsys.readouterr()
    code = main(["replay", "o/trace-NeverSettles.json", "--model", "bounded_models.py:make"])
    out, _ = capsys.readouterr()
    assert code == 1 and "diverged at step 2" in out and "boundary" in out, out


def test_replay_refuses_a_model_check_refuses(models, capsys):
    """actions() answering a set: its order changes from run to run, so a replay would
    pass or fail by chance; `kmc check` refuses such a model, and so does replay."""
    (models / "set_models.py").write_text(BOUNDED)
    assert main(["check", "set_models.py:make", "--out", "o", "--quiet"]) == 1
    (models / "set_models.py").write_text(BOUNDED.replace('return ["inc"]',
                                                          'return {"inc", "dec"}'))
    sys.modules.pop("set_models", None)
    capsys.readouterr()
    code = main(["replay", "o/trace-NeverSettles.json", "--model", "set_models.py:make"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1, err
    assert "actions(state) returned set" in err


def test_a_factory_that_builds_no_model_is_named_whatever_the_trace(models, capsys):
    """The trace is another scenario's (variant legacy), and the factory builds nothing:
    the factory's own error is the one line, not the variant the trace names."""
    assert main(["check", "stale-read", "--variant", "legacy", "--out", "o",
                 "--quiet"]) == 1
    (models / "int_models.py").write_text("def make():\n    return 5\n")
    capsys.readouterr()
    code = main(["replay", "o/trace-NoStaleRead.json", "--model", "int_models.py:make"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1, err
    assert "returned int, not a kmc.Model" in err and "variant" not in err


DEEP = '''
from kmc import Model, always

class Deep(Model):
    """a state nested deeper than kmc reads from a user's file (100 levels)"""
    name = "deep"
    def init_states(self):
        return [0]
    def actions(self, s):
        return ["wrap"] if s == 0 else []
    def next_state(self, s, a):
        for _ in range(120):
            s = (s,)
        return s
    def properties(self):
        return [always("Flat", lambda s: s == 0)]

def make():
    return Deep()
'''


def test_the_report_of_a_deep_state_is_written(models, capsys):
    (models / "deep_models.py").write_text(DEEP)
    code = main(["check", "deep_models.py:make", "--out", "o", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 1 and "Flat" in out and err == "", err
    assert {"trace-Flat.json", "index.html", "summary.json"} <= set(os.listdir("o"))
    code = main(["replay", "o/trace-Flat.json", "--model", "deep_models.py:make"])
    out, err = capsys.readouterr()
    assert code == 0 and "reproduced" in out, out + err
