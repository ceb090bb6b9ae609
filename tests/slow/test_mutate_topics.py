"""`kmc mutate` on real code: a few mutants of the topic model's controller (the `post`
helper that sends a controller message), run against two KIP-516 scenarios. The mutants
are chosen by function and change, not by line, so that edits elsewhere in the file do
not move them."""
import os

import pytest

from kmc.mutate.runner import make_plan, mutate
from kmc.reports.regress.suite import Entry

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONTROL = os.path.join(ROOT, "model", "kafka", "zk", "control.py")

#: (operator, n, change) of the chosen mutants of `post`, and the outcome recorded for each
CHOSEN = {
    # sending to a broker that is down no longer fails: a dead broker acts on messages
    ("drop-and", 1, "drop `w.brokers[d - 1].status == bk.DOWN` from `and`"): "property",
    # the destination is never read: every send raises NameError
    ("drop-stmt", 0, "drop `d = msg.dst`"): "crash",
    # destinations are brokers 1.. or controllers -1..: 0 never occurs
    ("cmp", 0, "`>` -> `>=`"): "equivalent",
}


def _plan():
    entries = [Entry(id=f"{sc}.kip516", scenario=sc, variant="kip516")
               for sc in ("failover-mid-delete", "recreate-race")]
    plan = make_plan(entries, [CONTROL])
    plan.mutants = [m for m in plan.mutants if m.function == "post" and
                    (m.operator, m.n, m.description) in CHOSEN]
    assert len(plan.mutants) == len(CHOSEN), [m.id for m in plan.mutants]
    return plan


@pytest.fixture(scope="module")
def report():
    return mutate(_plan(), jobs=2)


def test_each_chosen_mutant_gets_its_recorded_outcome(report):
    got = {(r["operator"], r["n"], r["description"]): r["outcome"]
           for r in report["mutants"]}
    assert got == CHOSEN


def test_kills_name_what_killed_them(report):
    rows = {r["operator"]: r for r in report["mutants"]}
    assert rows["drop-stmt"]["killed_by"] == ["NameError"]
    assert rows["drop-and"]["killed_by"] and all(
        p[0].isupper() for p in rows["drop-and"]["killed_by"])  # property names
    assert rows["cmp"]["killed_by"] == [] and rows["cmp"]["reached"]
    assert report["score"]["overall"] == {"killed": 2, "of": 2, "score": 1.0}
    with open(CONTROL) as f:
        assert "d = msg.dst" in f.read()  # the source tree is untouched


def test_the_unchanged_runs_are_decided_by_replay_with_the_full_runs_verdicts(report):
    rows = {r["operator"]: r for r in report["mutants"]}
    # the equivalent mutant changes no successor of any state: both runs replayed
    assert rows["cmp"]["replayed"] == 2
    full = mutate(_plan(), jobs=2, replay=False)

    def verdicts(rep):
        return [(r["id"], r["outcome"], r["killed_by"], r["evidence"])
                for r in rep["mutants"]]
    assert verdicts(full) == verdicts(report)
    assert not any(r["replayed"] for r in full["mutants"])
