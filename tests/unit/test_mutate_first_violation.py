"""A mutant's run stops at its first violation where the baseline's run violated no
property: that violation already kills the mutant. Where the baseline's run violates a
property, the mutant's run goes on to the end (a violation there may be the expected
one), and ``--every-run`` explores every run in full."""
import os

import pytest

from kmc.mutate.runner import make_plan, run_baseline, run_mutants
from kmc.reports.regress.suite import Entry

SOURCE = '''from typing import NamedTuple

from kmc import Model, always, sometimes


class S(NamedTuple):
    x: int
    jump: int


class Walk(Model):
    """A counter that walks to ``top`` one step at a time."""
    name = "walk"

    def __init__(self, top=20):
        self.top = top

    def init_states(self):
        return [S(0, 0)]

    def actions(self, s):
        return ["inc"] if s.x < self.top else []

    def next_state(self, s, a):
        return s._replace(x=s.x + 1, jump=0)

    def properties(self):
        return [always("NoJump", lambda s: s.jump == 0),
                always("Short", lambda s: s.x < 15),
                sometimes("Far", lambda s: s.x == self.top)]


def make(top: int = 20):
    return Walk(top)
'''

LINE = SOURCE.splitlines().index("        return s._replace(x=s.x + 1, jump=0)") + 1


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    path = os.path.join(tmp_path_factory.mktemp("first-violation"), "mutate_jump_model.py")
    with open(path, "w") as f:
        f.write(SOURCE)
    return path


def _runs(path, top, every_run=False):
    """The worker's run of the mutant ``jump=0`` -> ``jump=1``, and its report row."""
    entries = [Entry(id="walk", scenario=f"{path}:make", params={"top": top})]
    plan = make_plan(entries, only=[f":{LINE}:"])
    col = SOURCE.splitlines()[LINE - 1].index("jump=0") + len("jump=")
    plan.mutants = [m for m in plan.mutants if m.operator == "const" and m.n == 0
                    and m.col == col]
    assert len(plan.mutants) == 1
    base = run_baseline(plan, 1)
    got = {}
    (row,), _ = run_mutants(plan, base, 1, every_run=every_run,
                            on_result=lambda m, r: got.update(r["runs"]))
    return base["runs"]["walk"], got["walk"], row


def test_a_run_whose_baseline_violated_nothing_stops_at_its_first_violation(walk):
    base, run, row = _runs(walk, 10)
    assert base["violated"] == {} and base["states"] == 11
    assert (row["outcome"], row["killed_by"]) == ("property", ["NoJump"])
    assert run["stopped_by"] == "violation" and run["states"] == 2
    # the witness lies beyond where the run stopped: not finding it proves nothing
    assert base["witnesses"] == ["Far"] and run["witnesses"] == []
    assert row["evidence"] == ["walk: NoJump violated"]


def test_every_run_explores_the_run_in_full(walk):
    _base, run, row = _runs(walk, 10, every_run=True)
    assert (row["outcome"], row["killed_by"]) == ("property", ["NoJump"])
    assert run["stopped_by"] != "violation" and run["states"] == 11


def test_a_run_whose_baseline_violated_a_property_goes_on_to_the_end(walk):
    """``Short`` fails at x = 15 in the baseline's run too: the mutant's run goes on
    past its first violation (``NoJump``, at x = 1) until every property is decided, as
    any run does, and its kill is the new violation."""
    base, run, row = _runs(walk, 20)
    assert list(base["violated"]) == ["Short"] and base["states"] == 21
    assert (row["outcome"], row["killed_by"]) == ("property", ["NoJump"])
    assert run["stopped_by"] == "all properties decided" and run["states"] == 21
