"""A mutant stuck in a loop inside one expansion ends as out of time at the stall limit
(``kmc.mutate.stall``), not after the mutant's whole time limit."""
import threading
import time

import pytest

from kmc.mutate.runner import make_plan, mutate
from kmc.mutate.stall import STALL_FACTOR, STALL_SLACK, Stalled, Watch, stall_limit
from kmc.reports.regress.suite import Entry

#: a walk whose step counts up to the state in a ``while`` loop: dropping ``n += 1``
#: (or adding 0 instead of 1) never leaves the loop once the walk is past 0
WALK = '''from kmc import Model, always


class Walk(Model):
    name = "walk"

    def init_states(self):
        return [0]

    def actions(self, s):
        return ["step"] if s < 3 else []

    def next_state(self, s, a):
        n = 0
        while n < s:
            n += 1
        return n + 1

    def properties(self):
        return [always("Bounded", lambda s: s <= 3)]


def make():
    return Walk()
'''


def test_a_loop_inside_an_expansion_raises_at_the_limit():
    with Watch(0.2) as w:
        w.begin()
        with pytest.raises(Stalled):
            while True:
                pass
        w.end()


def test_nothing_is_raised_outside_an_expansion_or_without_a_limit():
    with Watch(0.2) as w:
        w.begin()
        w.end()
        time.sleep(0.8)  # a timer tick with no expansion in progress
    with Watch(None) as w:
        w.begin()
        time.sleep(0.6)
        w.end()
    assert stall_limit(None) is None
    assert stall_limit(0.01) == STALL_FACTOR * 0.01 + STALL_SLACK


def test_outside_the_main_thread_nothing_is_watched():
    seen = []

    def run():
        with Watch(0.2) as w:  # no signal handler can be set here: no error either
            w.begin()
            time.sleep(0.6)
            w.end()
        seen.append("done")
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert seen == ["done"]


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    path = tmp_path_factory.mktemp("walk") / "mutate_walk_model.py"
    path.write_text(WALK)
    return path


@pytest.mark.parametrize("replay", [True, False])
def test_a_mutant_that_never_leaves_a_loop_ends_at_the_stall_limit(walk, replay,
                                                                    monkeypatch):
    """Its run ends inside the loop, named by the loop's line, as out of time; the
    mutant's own time limit (here 10 minutes) never comes into play. Stuck in the
    replay of the baseline's states or in an explored run alike."""
    from kmc.mutate import stall

    monkeypatch.setattr(stall, "STALL_SLACK", 1.0)  # read by the parent, not the worker
    plan = make_plan([Entry(id="walk", scenario=f"{walk}:make")])
    plan.mutants = [m for m in plan.mutants if m.operator == "drop-stmt"
                    and m.line == WALK.splitlines().index("            n += 1") + 1]
    (row,) = mutate(plan, jobs=1, timeout=600, replay=replay)["mutants"]
    assert (row["outcome"], row["killed_by"]) == ("crash", ["timeout"]), row
    (line,) = row["evidence"]
    assert line.startswith("walk: timeout: one expansion ran over ")
    assert line.endswith(" at mutate_walk_model.py:15"), line  # the `while`
