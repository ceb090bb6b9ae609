"""The Markdown summary of a regress run, for a CI job summary ($GITHUB_STEP_SUMMARY)."""
from __future__ import annotations

from kmc.reports.regress.runner import ERROR, FAIL, NEW, PASS
from kmc.reports.regress.text import expected_text, got_text, states_text, totals

ICONS = {PASS: "✅", FAIL: "❌", ERROR: "💥", NEW: "🆕"}


def render_markdown(outcomes, suite_path: str, tier: str, wall_s: float) -> str:
    c = totals(outcomes)
    n = len(outcomes)
    head = ("✅ the entry matches" if n == 1 else f"✅ all {n} entries match") \
        if c[PASS] == n else (f"❌ {n - c[PASS]} of {n} "
                              f"{'entry does' if n == 1 else 'entries do'} not match")
    lines = [f"## kmc regress: {head}", "",
             f"Suite `{suite_path}`, tier `{tier}`, {wall_s:.1f} s wall.", "",
             "| | entry | expected | got | states | time |",
             "|---|---|---|---|---:|---:|"]
    for o in outcomes:
        lines.append(f"| {ICONS[o.status]} | `{_cell(o.entry.id)}` | {_cell(expected_text(o))} "
                     f"| {_cell(got_text(o))} | {states_text(o)} | {o.elapsed_s:.2f} s |")
    bad = [o for o in outcomes if o.status != PASS]
    if bad:
        lines += ["", "### Differences", ""]
        for o in bad:
            lines.append(f"**`{_cell(o.entry.id)}`** ({o.entry.scenario} "
                         f"[{o.variant or o.entry.variant or 'default'}])")
            for d in details(o):
                lines.append(f"- {_cell(d)}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def details(o) -> list[str]:
    """Why an entry is not a pass, one sentence each."""
    out = list(o.differences)
    if o.status == ERROR:
        out.append(f"the run failed: {o.error}")
    if o.status == NEW:
        out.append("no expectation recorded: run `kmc regress --update` to record it")
    return out


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
