"""The JSON document of a regress run (`kmc regress --json`)."""
from __future__ import annotations

from kmc.reports.regress.markdown import details
from kmc.reports.regress.text import totals


def regress_json(outcomes, suite_path: str, tier: str, wall_s: float, exit_code: int) -> dict:
    return {
        "suite": suite_path, "tier": tier, "exit_code": exit_code,
        "elapsed_s": round(wall_s, 3), "counts": totals(outcomes),
        "entries": [entry_json(o) for o in outcomes],
    }


def entry_json(o) -> dict:
    e, exp, got = o.entry, o.expected, o.got
    return {
        "id": e.id, "scenario": e.scenario, "variant": o.variant or e.variant,
        "params": e.params, "explorer": e.explorer, "tier": e.tier, "status": o.status,
        "expected": None if exp is None else {
            "violated": exp.violated, "states": list(exp.states)
            if isinstance(exp.states, tuple) else exp.states,
            "witnesses": None if exp.witnesses is None else list(exp.witnesses)},
        "got": None if got is None else {
            "violated": got.violated, "states": got.states,
            "witnesses": list(got.witnesses), "verdicts": got.verdicts,
            "complete": got.complete, "stopped_by": got.stopped_by or None},
        "differences": details(o), "elapsed_s": round(o.elapsed_s, 3),
        "report_dir": o.report_dir,
    }
