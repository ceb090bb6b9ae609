"""The console table of `kmc regress`: one line per entry, in entry order, printed as
soon as the entry is known; the differences of a failing entry right under it."""
from __future__ import annotations

from kmc.reports.regress.runner import ERROR, FAIL, NEW, PASS

MARKS = {PASS: "ok", FAIL: "FAIL", ERROR: "ERROR", NEW: "NEW"}
#: a BFS that stops once every property is decided has seen all it needs: not "bounded"
EARLY_STOPS = ("all properties decided", "violation")


def expected_text(o) -> str:
    return o.expected.describe() if o.expected is not None else "(not recorded)"


def got_text(o) -> str:
    if o.got is None:
        return "error"
    text = o.got.describe()
    why = o.got.stopped_by
    if o.got.complete or why in EARLY_STOPS:
        return text
    return f"{text} [sampled]" if why == "simulation" else f"{text} [bounded: {why}]"


def states_text(o) -> str:
    return f"{o.got.states:,}" if o.got is not None else "-"


MAX_ID, MAX_VERDICT = 60, 40  # wider verdicts are cut (…) and given in full below


class Table:
    """Fixed column widths, worked out from the entries before any of them runs."""

    def __init__(self, entries, update: bool = False):
        self.update = update  # --update lists the changes afterwards, not per line
        self.w_id = min(MAX_ID, max([len("entry")] + [len(e.id) for e in entries]))
        self.w_exp = min(MAX_VERDICT, max([len("expected")] + [
            len(e.expect.describe()) if e.expect else 14 for e in entries]))
        self.w_got = self.w_exp + 8  # room for a [bounded: ...] note

    def header(self) -> str:
        return (f"  {'':5} {'entry':<{self.w_id}}  {'expected':<{self.w_exp}}  "
                f"{'got':<{self.w_got}}  {'states':>11}  {'time':>8}")

    def line(self, o) -> str:
        row = (f"  {MARKS[o.status]:<5} {o.entry.id:<{self.w_id}}  "
               f"{_cut(expected_text(o), self.w_exp):<{self.w_exp}}  "
               f"{_cut(got_text(o), self.w_got):<{self.w_got}}  "
               f"{states_text(o):>11}  {o.elapsed_s:>7.2f}s")
        if self.update and o.status != ERROR:
            return row
        details = list(o.differences)
        if o.status != PASS and len(expected_text(o)) > self.w_exp:
            details.insert(0, f"expected: {expected_text(o)}")
        if o.status != PASS and len(got_text(o)) > self.w_got:
            details.insert(1 if details and details[0].startswith("expected") else 0,
                           f"got: {got_text(o)}")
        if o.status == ERROR:
            details.append(f"the run failed: {o.error}")
        if o.status == NEW:
            details.append("no expectation recorded: run `kmc regress --update` to record it")
        if o.report_dir:
            details.append(f"report: {o.report_dir}")
        return "\n".join([row] + [f"          - {d}" for d in details])


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def totals(outcomes) -> dict:
    counts = {s: 0 for s in (PASS, FAIL, ERROR, NEW)}
    for o in outcomes:
        counts[o.status] += 1
    return counts


def summary_line(outcomes, wall_s: float, workers: int) -> str:
    c = totals(outcomes)
    parts = [f"{c[PASS]} passed"]
    if c[FAIL]:
        parts.append(f"{c[FAIL]} failed")
    if c[ERROR]:
        parts.append(f"{c[ERROR]} crashed")
    if c[NEW]:
        parts.append(f"{c[NEW]} without expectation")
    verdict = "all match" if c[PASS] == len(outcomes) else "REGRESSIONS"
    n = len(outcomes)
    return (f"{n} entr{'y' if n == 1 else 'ies'}: {', '.join(parts)} — {verdict} "
            f"({wall_s:.1f}s wall, {workers} worker{'s' if workers != 1 else ''})")
