"""The mutation report as text (one line per mutant, then the score) and as Markdown."""
from __future__ import annotations

from kmc.mutate.classify import KILLS

MARKS = {"property": "KILLED", "witness": "KILLED", "crash": "KILLED",
         "count_only": "COUNT", "survived": "ALIVE", "equivalent": "EQUIV"}
W_ID, W_DESC = 52, 44


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def header() -> str:
    return f"  {'':6} {'mutant':<{W_ID}}  {'change':<{W_DESC}}  outcome"


def line(row: dict) -> str:
    what = row["outcome"]
    if row["killed_by"]:
        what += ": " + ", ".join(row["killed_by"])
    elif row["outcome"] in ("count_only", "survived") and row["evidence"]:
        what += ": " + row["evidence"][0]
    if not row["reached"] and row["outcome"] != "survived":
        what += " (never executed)"
    return (f"  {MARKS[row['outcome']]:<6} {_cut(row['id'], W_ID):<{W_ID}}  "
            f"{_cut(row['description'], W_DESC):<{W_DESC}}  {what}")


def _pct(r: dict) -> str:
    return "-" if r["score"] is None else f"{100 * r['score']:.1f}% ({r['killed']}/{r['of']})"


def summary(rep: dict) -> list[str]:
    s = rep["score"]
    counts = ", ".join(f"{n} {o}" for o, n in s["outcomes"].items() if n)
    out = [f"{len(rep['mutants'])} mutants: {counts or 'none run'}"]
    if rep["not_run"]:
        out.append(f"{len(rep['not_run'])} mutants not run: the time budget ran out")
    out.append(f"score: {_pct(s['overall'])} of the non-equivalent mutants killed by a "
               f"property, a witness or a crash ({rep['wall_s']}s wall)")
    out.append("per file:")
    out += [f"  {f:<40} {_pct(r)}" for f, r in s["files"].items()]
    if s["properties"]:
        out.append("per property (mutants it kills, of the non-equivalent):")
        out += [f"  {p:<40} {_pct(r)}" for p, r in s["properties"].items()]
    if rep["unreached"]:
        out.append("never executed by any run (lines holding mutants):")
        for f, lines in rep["unreached"].items():
            out.append(f"  {f}: {_ranges(lines)}")
    if rep.get("excluded"):
        out.append("not mutated (`# pragma: no mutate`):")
        for f, lines in rep["excluded"].items():
            out.append(f"  {f}: {_ranges(lines)}")
    return out


def _ranges(lines) -> str:
    parts, start, prev = [], None, None
    for n in lines:
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = n
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def markdown(rep: dict, command: str) -> str:
    s = rep["score"]
    out = [f"# Mutation report: {_pct(s['overall'])}", "",
           f"`{command}` over {len(rep['entries'])} runs: "
           + ", ".join(f"{n} {o}" for o, n in s["outcomes"].items() if n) + ".", "",
           "| file | score |", "| --- | --- |"]
    out += [f"| {f} | {_pct(r)} |" for f, r in s["files"].items()]
    if s["properties"]:
        out += ["", "| property | kills |", "| --- | --- |"]
        out += [f"| {p} | {_pct(r)} |" for p, r in s["properties"].items()]
    alive = [r for r in rep["mutants"] if r["outcome"] not in KILLS + ("equivalent",)]
    if alive:
        out += ["", "## Not killed", "", "| mutant | change | outcome |",
                "| --- | --- | --- |"]
        for r in alive:
            note = r["outcome"] + ("" if r["reached"] else " (never executed)")
            out.append(f"| `{r['id']}` | {_md(r['description'])} | {note} |")
    if rep["not_run"]:
        out += ["", f"{len(rep['not_run'])} mutants not run (time budget)."]
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")

