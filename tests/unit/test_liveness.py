"""Liveness under fairness: textbook answers, lasso shapes, fairness rules, bounds."""
import json

import pytest

from kmc import Model, ModelError, eventually, leads_to
from kmc.api import check
from kmc.errors import UsageError
from kmc.explorers.bfs import bfs
from kmc.explorers.dfs import dfs
from kmc.explorers.liveness import Adjacency, sccs
from kmc.model.contract import validate_model
from kmc.model.validation.diehard import DieHard
from kmc.model.validation.liveness import Counter, LossyChannel, Peterson

ENGINES = [bfs, dfs]


def lasso(r, name):
    d = r.discoveries[name]
    return d.trace, d.trace.loop_start


@pytest.mark.parametrize("engine", ENGINES)
def test_peterson_is_starvation_free_only_under_weak_fairness(engine):
    fair = engine(Peterson())
    assert fair.complete and fair.verdicts() == {
        "MutualExclusion": "holds", "NoStarvation0": "holds", "NoStarvation1": "holds"}
    unfair = engine(Peterson(fair=False))
    t, loop = lasso(unfair, "NoStarvation0")
    # process 0 tries, then the behaviour stops: nothing is fair
    assert len(t) == 2 and loop == 1 and t.actions == [("Try", 0)]


@pytest.mark.parametrize("engine", ENGINES)
def test_peterson_without_turn_deadlocks_even_under_fairness(engine):
    r = engine(Peterson(turn=False))
    t, loop = lasso(r, "NoStarvation0")
    assert loop == len(t) - 1 == 4
    assert t.last.pc == ("wait", "wait")  # both wait for the other's flag
    assert Peterson(turn=False).actions(t.last) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_counter_reaches_n_when_inc_is_weakly_fair(engine):
    assert engine(Counter(5)).verdict("ReachesN") == "holds"
    r = engine(Counter(5, fair=False))
    t, loop = lasso(r, "ReachesN")
    assert len(t) == 1 and loop == 0  # it may stop at once


def test_an_unfair_loop_is_no_counterexample_when_a_stop_is_not_allowed():
    # Inc weakly fair, but the Toggle loop at 0 keeps Inc enabled: not a fair loop
    r = bfs(Counter(2))
    assert r.verdict("ReachesN") == "holds"


@pytest.mark.parametrize("engine", ENGINES)
def test_lossy_channel_needs_strong_fairness(engine):
    assert engine(LossyChannel("strong")).verdict("EventuallyDelivered") == "holds"
    r = engine(LossyChannel("weak"))
    t, loop = lasso(r, "EventuallyDelivered")
    assert [str(a) for a in t.actions] == ["Send", "Lose"] and loop == 0
    assert t.states[-1] == t.states[loop]  # the loop closes
    assert r.discoveries["EventuallyDelivered"].detail["fair_taken"] == ["Send"]
    assert engine(LossyChannel("none")).verdict("EventuallyDelivered") == "violated"


class Ring(Model):
    """A ring of n states with a fair step, plus an exit that is weakly/strongly fair."""
    name = "ring"

    def __init__(self, n=5, exit_kind="strong", exit_at=0):
        self.n, self.exit_at = n, exit_at
        self.weakly_fair = ("Next",) + (("Exit",) if exit_kind == "weak" else ())
        self.strongly_fair = ("Exit",) if exit_kind == "strong" else ()

    def init_states(self):
        return [0]

    def actions(self, s):
        if s == "out":
            return []
        return ["Next"] + (["Exit"] if s == self.exit_at else [])

    def next_state(self, s, a):
        return "out" if a == "Exit" else (s + 1) % self.n

    def action_name(self, a):
        return a

    def properties(self):
        return [eventually("Leaves", lambda s: s == "out")]


def test_strong_fairness_splits_a_component_and_finds_none_fair():
    # Exit is enabled once per round: strong fairness forces it, weak does not
    assert bfs(Ring(exit_kind="strong")).verdict("Leaves") == "holds"
    r = bfs(Ring(exit_kind="weak"))
    t, loop = lasso(r, "Leaves")
    assert len(t) == 6 and loop == 0 and t.states[-1] == 0


def test_a_state_cut_off_by_a_bound_is_not_a_stop():
    # the ring is longer than the depth bound: no lasso inside, verdict unknown (exit 4)
    r = bfs(Ring(n=50, exit_kind="strong", exit_at=49), max_depth=10)
    assert r.verdict("Leaves") == "unknown" and r.exit_code() == 4
    r = bfs(Counter(50), max_states=10)
    assert r.verdict("ReachesN") == "unknown"


class Walled(Counter):
    """The counter, with the states above 2 outside the boundary."""

    def within_boundary(self, s):
        return s[0] <= 2


def test_a_fair_action_leaving_the_boundary_is_still_enabled():
    # at x = 2, Inc leads out of the boundary: the Toggle loop there ignores an enabled
    # weakly fair action, so it is no counterexample (nothing is concluded about x = 3)
    assert bfs(Walled(5)).verdict("ReachesN") == "holds"


def test_a_liveness_verdict_inside_a_boundary_is_reported_with_a_warning():
    # "holds" covers the behaviours inside the boundary only: the run says so
    (w,) = [w for w in check(Walled(5)).extra.get("warnings", ()) if "within_boundary" in w]
    assert w.startswith("ReachesN holds for the behaviours that stay inside")
    assert "warnings" not in check(Counter(5)).extra  # no boundary, nothing to say
    r = check(Walled(5), max_depth=1)  # undecided: nothing said to hold
    assert r.verdict("ReachesN") == "unknown" and "warnings" not in r.extra


def test_tarjan_needs_no_recursion_on_a_long_cycle():
    n = 200_000
    import numpy as np

    class G:
        offsets = np.arange(n + 1)
        dst = np.roll(np.arange(n), -1)
        group = np.full(n, -1)
        enabled = np.zeros(n, dtype=np.uint64)
    comps = sccs(list(range(n)), Adjacency(G), [1] * n, 1)
    assert len(comps) == 1 and len(comps[0]) == n


def test_packed_models_record_their_graph_too():
    class Jugs(DieHard):
        weakly_fair = ("FillBigJug",)

        def properties(self):
            return [eventually("BigFull", lambda s: self.unpack(s)["big"] == 5)]
    r = bfs(Jugs())
    # FillBigJug is enabled wherever the big jug is not full: every loop that avoids a
    # full big jug ignores it, and no state without it is a stop
    assert r.complete and r.verdict("BigFull") == dfs(Jugs()).verdict("BigFull") == "holds"
    assert r.extra["liveness"]["graph_states"] == r.unique_states == 16
    unfair = bfs(DieHardEventually())
    assert unfair.verdict("BigFull") == "violated"  # nothing fair: it may stop at once
    assert len(unfair.discoveries["BigFull"].trace) == 1


class DieHardEventually(DieHard):
    def properties(self):
        return [eventually("BigFull", lambda s: self.unpack(s)["big"] == 5)]


def test_fairness_declarations_are_checked():
    with pytest.raises(ModelError, match="unknown action 'Send2'"):
        m = LossyChannel("weak")
        m.weakly_fair = ("Send2",)
        validate_model(m)
    with pytest.raises(ModelError, match="both weakly and strongly"):
        m = LossyChannel("weak")
        m.strongly_fair = ("Send",)
        validate_model(m)
    m = LossyChannel("weak")
    m.weakly_fair = ("Send", "Lose")  # a fault
    with pytest.raises(ValueError, match="never fair"):
        bfs(m)
    with pytest.raises(UsageError, match="never fair|fault"):
        check(m)


def test_simulation_reports_liveness_unknown():
    r = check("lossy", variant="weak", explorer="simulate", walks=20)
    assert r.verdict("EventuallyDelivered") == "unknown" and r.exit_code() == 4


def test_leads_to_with_formulas_is_decided_by_z3_too():
    from kmc.invariants.logic import Rel, V, exists
    At = Rel("At", 1, ("x",))
    x = V("x")

    class C(Counter):
        def properties(self):
            view = lambda s: {"At": {(s[0],)}}  # noqa: E731
            return [leads_to("OneLeadsToN", exists((x,), And_(At(x), x == 1)),
                             exists((x,), And_(At(x), x == self.n)), view=view)]
    from kmc.invariants.logic import And as And_
    fast = check(C(4))
    z3 = check(C(4), z3=True)
    assert fast.verdicts() == z3.verdicts() == {"OneLeadsToN": "holds"}
    assert "OneLeadsToN" in z3.extra["z3_stats"]["decided_by_z3"]
    assert check(C(4, fair=False), z3=True).verdict("OneLeadsToN") == "violated"


def test_trace_file_show_and_replay_handle_the_loop(tmp_path):
    from kmc.cli import main
    from kmc.reports.replay import replay_document
    from kmc.reports.show import render
    from kmc.reports.tracefile import TraceFileError, load_trace

    assert main(["check", "lossy", "--variant", "weak", "--out", str(tmp_path),
                 "--quiet"]) == 1
    path = tmp_path / "trace-EventuallyDelivered.json"
    doc = load_trace(str(path))
    assert doc["version"] == 3 and doc["loop_start"] == 0 and doc["kind"] == "eventually"
    text = render(doc)
    assert "repeats from step 0 forever" in text and "the loop starts here" in text
    out = replay_document(LossyChannel("weak"), doc)
    assert out.reproduced and out.step == 0
    # under strong fairness the same loop is not fair: the replay says so
    out = replay_document(LossyChannel("strong"), doc)
    assert not out.reproduced and "not fair" in out.message and "Deliver" in out.message
    bad = dict(doc, loop_start=7)
    path.write_text(json.dumps(bad))
    with pytest.raises(TraceFileError, match="loop_start"):
        load_trace(str(path))


def test_json_reports_kind_length_and_loop_start(capsys):
    from kmc.cli import main

    assert main(["check", "peterson", "--variant", "no-turn", "--json", "--quiet"]) == 1
    s = json.loads(capsys.readouterr().out)
    p = s["properties"]["NoStarvation1"]
    assert (p["kind"], p["verdict"], p["trace_length"], p["loop_start"]) == \
        ("leads_to", "violated", 5, 4)
    assert s["properties"]["MutualExclusion"].get("loop_start", None) is None


class Detour(Model):
    """0 -> 1 -> 2 -> 0 with Exit (strongly fair) at 0, and a detour 1 -> 3 -> 1."""
    name = "detour"
    weakly_fair = ("Next", "Back")
    strongly_fair = ("Exit",)

    def init_states(self):
        return [0]

    def actions(self, s):
        return {0: ["Next", "Exit"], 1: ["Next", "Side"], 2: ["Next"], 3: ["Back"],
                "out": []}[s]

    def next_state(self, s, a):
        if a == "Exit":
            return "out"
        return {"Side": 3, "Back": 1}.get(a, (s + 1) % 3 if s != 3 else 1)

    def action_name(self, a):
        return a

    def properties(self):
        return [eventually("Leaves", lambda s: s == "out")]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_component_unfair_to_a_strong_class_may_hide_a_fair_one(engine):
    # the whole component {0, 1, 2, 3} never takes Exit, enabled at 0; without state 0,
    # the detour 1 -> 3 -> 1 is fair (Next is disabled at 3, Back is taken)
    r = engine(Detour())
    t, loop = lasso(r, "Leaves")
    assert t.states == [0, 1, 3, 1] and loop == 1
    assert r.discoveries["Leaves"].detail["fair_taken"] == ["Back"]


def test_an_explorer_without_liveness_names_what_it_did_not_check():
    from kmc.explorers.liveness import without_liveness
    from kmc.reports.summary import render_text, summary

    safety, skipped = without_liveness(Peterson().properties(), "spark")
    assert [p.name for p in safety] == ["MutualExclusion"]
    assert skipped == ["NoStarvation0", "NoStarvation1"]
    r = bfs(Peterson(), properties=safety)  # what the Spark run checks, on bfs
    r.extra.update(scenario="peterson", variant="standard", params={}, model=Peterson(),
                   not_checked=skipped)
    assert summary(r)["not_checked"] == skipped
    assert "not checked by the bfs explorer: NoStarvation0, NoStarvation1" in render_text(r)
