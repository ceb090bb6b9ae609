"""A user model's display hooks and list answers are checked before a run: one answering
with the wrong type (or a set, whose order changes from run to run) is named with the
method, and a hook that fails only on a state the report shows is the model's mistake,
with nothing of the run left in --out."""
import sys

import pytest

from kmc.cli import main


@pytest.fixture
def models(tmp_path, monkeypatch):
    d = tmp_path / "proj"
    d.mkdir()
    monkeypatch.chdir(d)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the model's folder goes again
    yield d


HOOKED = '''
from kmc import Model, always

class Hooked(Model):
    name = "hooked"
    def init_states(self):
        return [(0, 0)]
    def actions(self, s):
        return [("Inc", 0), ("Inc", 1)]
    def next_state(self, s, a):
        return tuple((v + 1) % 3 if i == a[1] else v for i, v in enumerate(s))
    def properties(self):
        return [always("Small", lambda s: s[0] < 2)]

def make(hook="", late=False):  # one method replaced (late: raising from s[0] == 2 on)
    wrong = {"format_state": lambda s: None, "actions": lambda s: {("Inc", 0), ("Inc", 1)},
             "init_states": lambda: None, "action_name": lambda a: a,
             "action_actor": lambda a: 5, "lanes": lambda: None,
             "state_to_json": lambda s: {(1, 2): 3}, "format_action": lambda a: 7}
    def raising(s):
        if s[0] == 2:
            raise RuntimeError("no picture of this one")
        return repr(s)
    m = Hooked()
    if hook:
        setattr(m, hook, raising if late else wrong[hook])
    return m
'''


@pytest.mark.parametrize("hook,out,words", [
    ("format_state", False, "format_state(state) returned NoneType None: return a str"),
    ("format_action", True, "format_action(action) returned int 7: return a str"),
    ("action_name", True, "action_name(action) returned tuple ('Inc', 0): return a str"),
    ("action_actor", True, "action_actor(action) returned int 5: return a lane name"),
    ("lanes", True, "lanes() returned NoneType None: return a list of lane names"),
    ("state_to_json", True, "state_to_json(state) returned a value JSON cannot hold"),
    ("actions", False, "actions(state) returned set: return a list of actions, in a "
                       "deterministic order"),
    ("init_states", False, "init_states() returned None: return a list of states"),
    ("late", True, "raised RuntimeError at hooked_models.py:"),
    ("late", False, "in raising: no picture of this one"),
])
def test_a_models_wrong_answer_is_its_mistake_named(models, capsys, tmp_path, hook, out,
                                                    words):
    """A method answering with the wrong type, or a display hook failing on a state that
    only the report shows: exit 2, one line naming the model and the method, and no file
    of the run in --out (not an internal error half-way through the report)."""
    (models / "hooked_models.py").write_text(HOOKED)
    params = ["-p", "hook=format_state", "-p", "late=true"] if hook == "late" else \
        ["-p", f"hook={hook}"]
    out_dir = tmp_path / "out"
    try:
        code = main(["check", "hooked_models.py:make", *params, "--quiet"]
                    + (["--out", str(out_dir)] if out else []))
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, err
        assert err.startswith("kmc: error: hooked_models.py:make") and words in err
        assert not out_dir.exists() or not list(out_dir.iterdir())
        assert main(["check", "hooked_models.py:make", "--quiet"]) == 1  # fine: holds on
    finally:
        sys.modules.pop("hooked_models", None)


ANSWERS = '''
import numpy as np
from kmc import Model, always, eventually, sometimes

class Answers(Model):
    name = "answers"
    def __init__(self, answer):
        self.answer = answer
    def init_states(self):
        return [0]
    def actions(self, s):
        return ["Inc"] if s < 2 else []
    def next_state(self, s, a):
        return s + 1
    def properties(self):
        answer = {"none": lambda s: None if s == 0 else True,  # a missing return, once
                  "list": lambda s: [s], "str": lambda s: "no",
                  "numpy": lambda s: np.bool_(s < 5), "bool": lambda s: s < 5}[self.answer]
        return [always("Fine", lambda s: True), sometimes("Two", lambda s: s == 2),
                eventually("Done", answer) if self.answer == "str" else
                always("Answered", answer)]

def make(answer="bool"):
    return Answers(answer)
'''


@pytest.mark.parametrize("answer,words", [
    ("none", "property 'Answered' answered NoneType None for a state: return True or "
             "False (a missing `return` answers None)"),
    ("list", "property 'Answered' answered list [0] for a state"),
    ("str", "property 'Done' answered str 'no' for a state"),
])
def test_a_predicate_answering_neither_true_nor_false_is_named(models, capsys, answer,
                                                               words):
    """Read by its truth, None would be a violation in every state it answers, and a list
    or a str would hold or fail by its length: exit 2, one line, before the run."""
    (models / "answer_models.py").write_text(ANSWERS)
    try:
        code = main(["check", "answer_models.py:make", "-p", f"answer={answer}", "--quiet"])
        out, err = capsys.readouterr()
        assert code == 2 and err.count("\n") == 1 and out == "", err
        assert err.startswith("kmc: error: answer_models.py:make: model 'answers': ")
        assert words in err
        for fine in ("bool", "numpy"):  # numpy's bool is a bool
            assert main(["check", "answer_models.py:make", "-p", f"answer={fine}",
                         "--quiet"]) == 0
    finally:
        sys.modules.pop("answer_models", None)
