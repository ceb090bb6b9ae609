"""Classifying a mutant against the unmutated baseline, run by run.

Outcomes, strongest first (a mutant takes the first that applies to any of its runs):

- ``property``: a property's verdict differs from the baseline's (violated now, or no
  longer violated); ``killed_by`` names the properties;
- ``witness``: a witness the baseline finds is no longer found;
- ``crash``: a run raised an exception, did not finish within its time limit, outgrew
  the memory limit or the state limit (``state_limits``), or the worker died;
  ``killed_by`` names the exception (or ``timeout``, ``max_memory``, ``max_states``);
- ``count_only``: the verdicts are the baseline's but a state count, a counterexample
  length or where the run stopped changed. A suite with pinned counts notices, but no
  property does: not a kill;
- ``equivalent``: every run generated exactly the baseline's set of states (the same
  digest): the mutant probably changes nothing the scenarios can observe;
- ``survived``: nothing above (the state set changed but no count or verdict did, or a
  run has no digest to compare, or no run executes the mutated line: the runner's call).

Score: kills (property, witness, crash) over the mutants that are not equivalent.
"""
from __future__ import annotations

from dataclasses import dataclass, field

PROPERTY, WITNESS, CRASH = "property", "witness", "crash"
COUNT_ONLY, SURVIVED, EQUIVALENT = "count_only", "survived", "equivalent"
OUTCOMES = (PROPERTY, WITNESS, CRASH, COUNT_ONLY, SURVIVED, EQUIVALENT)
KILLS = (PROPERTY, WITNESS, CRASH)

#: a mutant's run of an entry whose baseline run completed may reach at most GROWTH
#: times the baseline's states plus GROWTH_SLACK: past that, the mutant has blown the
#: state space up (a budget never spent, a loop that keeps adding state) and the run
#: stops, a kill like a timeout, but found on the same state on every run and within
#: seconds instead of the whole time limit
GROWTH, GROWTH_SLACK = 10, 1000


def state_limits(runs: dict) -> dict:
    """entry id -> the most states a mutant's run may reach: only for entries whose
    baseline run completed (one that stopped at a bound of its own keeps that bound)."""
    return {eid: GROWTH * r["states"] + GROWTH_SLACK for eid, r in runs.items()
            if r.get("complete") and r.get("states")}


@dataclass
class Verdict:
    outcome: str
    killed_by: list = field(default_factory=list)
    #: one line per run that differs: "entry: what changed"
    evidence: list = field(default_factory=list)


def classify(baseline: dict, result: dict) -> Verdict:
    """``baseline``: entry id -> run; ``result``: a worker's answer for one mutant."""
    status = result.get("status")
    if status is not None:  # the worker timed out or died
        what = "ran out of time" if status == "timeout" else "died"
        return Verdict(CRASH, [status], [f"the worker {what}"])
    if "load_error" in result:
        return Verdict(CRASH, [result["load_error"].split(":")[0]], [result["load_error"]])
    props, witnesses, crashes, counts, evidence = [], [], [], [], []
    digests_equal = True
    quiet = []  # why a mutant that changed no count or verdict is not equivalent
    for eid, run in result["runs"].items():
        base = baseline[eid]
        if run.get("error"):
            crashes.append(run["error"].split(":")[0])
            evidence.append(f"{eid}: {run['error']}" + (f" at {run['where']}"
                                                       if run.get("where") else ""))
            continue
        # a run the memory guard or the state limit stopped, or one stopped at its first
        # violation, saw only part of its states: what it found counts, what it did not
        # find proves nothing
        grew = _grew(base, run)
        partial = grew or run["stopped_by"] == "violation" != base["stopped_by"]
        flipped = sorted(p for p in set(run["violated"]) ^ set(base["violated"])
                         if p in run["violated"] or not partial)
        for p in flipped:
            now = "violated" if p in run["violated"] else "no longer violated"
            evidence.append(f"{eid}: {p} {now}")
        props += flipped
        if grew and not flipped:
            crashes.append(run["stopped_by"])
            what = "the memory limit" if run["stopped_by"] == "max_memory" else \
                f"the state limit ({GROWTH} times the baseline's states, plus {GROWTH_SLACK:,})"
            evidence.append(f"{eid}: the state space outgrew {what}")
            continue
        lost = [] if partial else \
            [w for w in base["witnesses"] if w not in run["witnesses"]]
        for w in lost:
            evidence.append(f"{eid}: witness {w} not found")
        witnesses += lost
        if flipped or lost:
            continue
        changed = _changes(base, run)
        if changed:
            counts.append(eid)
            evidence.append(f"{eid}: {changed}")
        if run.get("digest") is None:
            digests_equal = False
            quiet.append(f"{eid}: no state digest (a compiled model)")
        elif run["digest"] != base.get("digest"):
            digests_equal = False
            if not changed:
                quiet.append(f"{eid}: other states reached, as many as before")
    if props:
        return Verdict(PROPERTY, _unique(props), evidence)
    if witnesses:
        return Verdict(WITNESS, _unique(witnesses), evidence)
    if crashes:
        return Verdict(CRASH, _unique(crashes), evidence)
    if counts:
        return Verdict(COUNT_ONLY, [], evidence)
    if digests_equal and result["runs"]:
        return Verdict(EQUIVALENT, [], [])
    return Verdict(SURVIVED, [], evidence + quiet)


def decisive(base: dict, run: dict) -> bool:
    """Does ``run`` already kill its mutant (against the baseline's ``base``): by a
    property, a witness, a crash (an exception, ``MemoryError`` included), or a state
    space outgrowing a limit? A worker may stop there: the later runs cannot undo a
    kill, and most kills come on the smallest runs, which a mutant runs first. A mutant
    that crashes on one run is named by its crash even where a later run would show a
    property's verdict too (``--every-run`` runs them all)."""
    if run.get("error"):
        return True
    if _grew(base, run) or any(p not in base["violated"] for p in run["violated"]):
        return True
    return any(p not in run["violated"] for p in base["violated"]) or \
        any(w not in run["witnesses"] for w in base["witnesses"])


def clean(base: dict) -> bool:
    """May a mutant's run of this entry stop at its first violation? When the
    baseline's run (``base``) violated no property: any violation is then a new one, a
    kill that the rest of the run cannot undo (``decisive``)."""
    return not base.get("error") and not base["violated"]


def _grew(base: dict, run: dict) -> bool:
    """Did a guard stop ``run`` (memory, or the runner's state limit) that did not stop
    the baseline's?"""
    return run["stopped_by"] in ("max_memory", "max_states") and \
        run["stopped_by"] != base["stopped_by"]


def _changes(base: dict, run: dict) -> str:
    out = []
    if run["states"] != base["states"]:
        out.append(f"states {base['states']:,} -> {run['states']:,}")
    for p, n in sorted(run["violated"].items()):
        if base["violated"].get(p) != n:
            out.append(f"{p} counterexample {base['violated'][p]} -> {n} states")
    if run["stopped_by"] != base["stopped_by"]:
        out.append(f"stopped by {base['stopped_by'] or 'nothing'} -> "
                   f"{run['stopped_by'] or 'nothing'}")
    return ", ".join(out)


def _unique(items) -> list:
    return sorted(set(items))


def score(rows) -> dict:
    """Score overall, per file and per property. ``rows``: dicts with file, outcome,
    killed_by."""
    def ratio(killed, total):
        return {"killed": killed, "of": total,
                "score": round(killed / total, 4) if total else None}

    counted = [r for r in rows if r["outcome"] != EQUIVALENT]
    killed = [r for r in counted if r["outcome"] in KILLS]
    out = {"overall": ratio(len(killed), len(counted)),
           "outcomes": {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES},
           "files": {}, "properties": {}}
    for f in sorted({r["file"] for r in rows}):
        mine = [r for r in counted if r["file"] == f]
        out["files"][f] = ratio(sum(r["outcome"] in KILLS for r in mine), len(mine))
    props = sorted({p for r in rows if r["outcome"] in (PROPERTY, WITNESS)
                    for p in r["killed_by"]})
    for p in props:
        n = sum(p in r["killed_by"] for r in counted if r["outcome"] in (PROPERTY, WITNESS))
        out["properties"][p] = ratio(n, len(counted))
    return out
