"""Fairness by action name for models whose actions are plain strings, and a declared fair
class that no action of the run is named by."""
import json

import pytest

from kmc import Model, eventually
from kmc.api import check
from kmc.errors import UsageError


class Steps(Model):
    """0 -A-> 1 -A-> 2 (awaited); ``loop``: 0 -A-> 1 -B-> 0, the awaited 2 never comes."""
    name = "steps"

    def __init__(self, fair=("A",), loop=False, names=None):
        self.weakly_fair, self.loop, self.names = tuple(fair), loop, names

    def init_states(self):
        return [0]

    def actions(self, s):
        if self.loop:
            return ["A"] if s == 0 else ["B"]
        return ["A"] if s < 2 else []

    def next_state(self, s, a):
        return 0 if a == "B" else s + 1

    def action_names(self):
        return self.names

    def properties(self):
        return [eventually("ReachesTwo", lambda s: s == 2)]


def test_a_string_action_is_named_by_the_string_itself():
    m = Steps()
    assert m.action_name("A") == "A" and m.format_action("A") == "'A'"
    assert m.action_name(("Deliver", 1)) == "Deliver" and m.action_name(3) == "3"


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_a_fair_string_action_is_taken(explorer):
    r = check(Steps(), explorer=explorer)
    assert r.verdict("ReachesTwo") == "holds"
    assert r.coverage == {"A": 2}
    assert "warnings" not in r.extra
    # without fairness the behaviour may stop at once
    unfair = check(Steps(fair=()), explorer=explorer)
    assert unfair.verdict("ReachesTwo") == "violated"
    assert len(unfair.discoveries["ReachesTwo"].trace) == 1


def test_a_fair_loop_of_string_actions_is_written_and_replayed(tmp_path):
    from kmc.reports.replay import replay_document
    from kmc.reports.summary import write_traces
    from kmc.reports.tracefile import load_trace

    m = Steps(fair=("A", "B"), loop=True)
    r = check(m)
    d = r.discoveries["ReachesTwo"]
    assert d.trace.states == [0, 1, 0] and d.trace.loop_start == 0
    assert d.detail["fair_taken"] == ["A", "B"]
    doc = load_trace(write_traces(r, str(tmp_path))["ReachesTwo"])
    assert [s["action"] for s in doc["steps"][1:]] == ["'A'", "'B'"]  # format_action
    out = replay_document(Steps(fair=("A", "B"), loop=True), doc)
    assert out.reproduced and out.step == 0


def test_a_fair_name_no_action_has_is_a_warning_naming_the_names_seen():
    r = check(Steps(fair=("A", "Typo")))
    assert r.verdict("ReachesTwo") == "holds"  # A alone is enough here
    (w,) = r.extra["warnings"]
    assert "'Typo'" in w and "action_name gave 'A'" in w and "\n" not in w
    assert "'A' fair" not in w  # only the unmatched class is named


def test_no_warning_when_the_model_lists_its_actions_or_checks_no_liveness():
    from kmc import always

    class Safe(Steps):
        def properties(self):
            return [always("Small", lambda s: s < 3)]
    assert "warnings" not in check(Safe(fair=("Typo",))).extra
    # a model listing its action names has the declaration checked before the run
    with pytest.raises(UsageError, match="unknown action 'Typo'"):
        check(Steps(fair=("Typo",), names=("A",)))


def test_the_command_prints_the_warning_on_one_stderr_line(tmp_path, capsys):
    from kmc.cli import main

    path = tmp_path / "typo_model.py"
    path.write_text(
        "from kmc import Model, eventually\n\n\n"
        "class T(Model):\n"
        "    name = 'typo'\n"
        "    weakly_fair = ('Inc', 'Incr')\n\n"
        "    def init_states(self):\n        return [0]\n\n"
        "    def actions(self, s):\n        return ['Inc', 'Reset'] if s < 2 else []\n\n"
        "    def next_state(self, s, a):\n        return s + 1 if a == 'Inc' else 0\n\n"
        "    def properties(self):\n"
        "        return [eventually('Two', lambda s: s == 2)]\n\n\n"
        "def make():\n    return T()\n")
    assert main(["check", f"{path}:make", "--quiet", "--json"]) == 1
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.startswith("kmc: warning:")]
    assert len(lines) == 1 and "'Incr'" in lines[0] and "'Inc', 'Reset'" in lines[0]
    assert json.loads(out)["warnings"] == [lines[0][len("kmc: warning: "):]]
