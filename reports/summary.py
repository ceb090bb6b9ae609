"""The run summary: the JSON object `kmc check --json` prints, and the human text."""
from __future__ import annotations

import json
import os
import shlex

from kmc.model.encoding import COLLISION_WARN
from kmc.model.result import EXIT_MEANINGS, CheckResult
from kmc.reports.inputs import file_slug, write_atomic


def summary(result: CheckResult, trace_files: dict | None = None) -> dict:
    x = result.extra
    trace_files = trace_files or {}
    props = {}
    for name, kind in result.properties.items():
        d = result.discoveries.get(name)
        prop = _property(result, name)
        props[name] = {"kind": kind, "verdict": result.verdict(name),
                       "description": prop.description if prop is not None else "",
                       "trace_length": len(d.trace) if d else None,
                       "trace_file": trace_files.get(name)}
        if kind in ("eventually", "leads_to"):  # a lasso: its loop's first step
            props[name]["loop_start"] = getattr(d.trace, "loop_start", None) if d else None
        if d is not None and d.detail is not None:
            props[name]["detail"] = _jsonable(d.detail)
            props[name]["explanation"] = explanation(result, name)
    return {
        "scenario": x.get("scenario"), "variant": x.get("variant"),
        "params": x.get("params", {}), "explorer": result.explorer,
        "unique_states": result.unique_states, "generated_states": result.generated_states,
        "max_depth": result.max_depth, "complete": result.complete,
        "stopped_by": result.stopped_by or None, "elapsed_s": round(result.elapsed_s, 4),
        "properties": props, "coverage": result.coverage, "never_fired": result.never_fired,
        "collision_probability": result.collision_probability,
        "key_bits": x.get("key_bits"),
        "exit_code": result.exit_code(), "headline": headline(result),
        **{k: v for k, v in x.items() if k in ("symmetry", "seed", "walks", "walk_length",
                                               "spark",
                                               "z3_stats", "max_memory", "not_checked", "warnings",
                                               "resident_bytes_at_stop")},
    }


def write_traces(result: CheckResult, out_dir: str) -> dict:
    """One JSON trace file per discovery; returns property -> path."""
    model = result.extra["model"]
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for name, d in sorted(result.discoveries.items()):
        path = os.path.join(out_dir, f"trace-{slug(name)}.json")
        _write_json(path, d.trace.to_dict(model, **trace_meta(result, name)))
        paths[name] = path
    return paths


def trace_meta(result: CheckResult, name: str) -> dict:
    """What a trace file records besides the trace: enough to rebuild the model
    (scenario, variant, params) and to say what was found."""
    d = result.discoveries[name]
    meta = {"scenario": result.extra.get("scenario"), "variant": result.extra.get("variant"),
            "params": result.extra.get("params", {}), "property": name, "kind": d.kind,
            "explorer": result.explorer}
    prop = _property(result, name)
    if prop is not None and prop.description:
        meta["description"] = prop.description
    if d.detail is not None:
        meta["detail"] = _jsonable(d.detail)
        meta["explanation"] = explanation(result, name)
    if name in (result.extra.get("z3_stats") or {}).get("decided_by_z3", ()):
        meta["decided_by"] = "z3"
    return meta


def write_summary(result: CheckResult, out_dir: str, trace_files: dict) -> str:
    path = os.path.join(out_dir, "summary.json")
    _write_json(path, summary(result, trace_files))
    return path


def _mib(n) -> str:
    return "?" if n is None else f"{n / 2**20:,.0f} MiB"


def collision_lines(s: dict) -> list[str]:
    """The collision estimate (TLC's: distinct x generated / 2^bits) and the keys it is
    for; a warning line when it exceeds COLLISION_WARN, because two states with one key
    count as one and a state reached only through the second is never checked."""
    bits = s.get("key_bits")
    keys = "exact keys: packed states" if not bits else f"{bits}-bit keys"
    lines = [f"  fingerprint collision probability: {s['collision_probability']:.2e} ({keys})"]
    if s["collision_probability"] > COLLISION_WARN:
        lines.append(f"  warning: the collision estimate exceeds {COLLISION_WARN:g}: two "
                     "distinct states may have shared a key, and a state reached only "
                     "through the second would be missed")
    return lines


def spark_levels(spark: dict) -> str:
    """Where a Spark run's levels ran: "levels: 19 on Spark, 6 on the driver" (a level
    with fewer states than owner partitions stays on the driver: docs/spark.md, "Where
    levels run")."""
    modes = [lv.get("mode") for lv in spark.get("levels", ())]
    on_spark = sum(m == "spark" for m in modes)
    return (f"levels: {on_spark} on Spark, {len(modes) - on_spark} on the driver"
            + ("" if on_spark else " (no level was wide enough to split over the "
               "owner partitions: see docs/spark.md, \"Where levels run\")"))


def headline(result: CheckResult) -> str | None:
    """The property a reader should see first: the first violated one in the model's
    declaration order, else the first missing witness."""
    verdicts = result.verdicts()
    for wanted in ("violated", "witness_missing"):
        for name in result.properties:
            if verdicts[name] == wanted:
                return name
    return None


def explanation(result: CheckResult, name: str) -> str | None:
    """The violation of ``name`` in words (the property's sentence over its offending
    tuple), or the offending tuple itself, or None."""
    d = result.discoveries.get(name)
    if d is None or d.detail is None:
        return None
    prop = _property(result, name)
    text = prop.explain_sentence(d.detail) if prop is not None else None
    if text:
        return text
    if isinstance(d.detail, dict):
        return "offending: " + ", ".join(f"{k}={v}" for k, v in d.detail.items())
    return f"offending: {d.detail}"


def _property(result, name):
    model = result.extra.get("model")
    if model is None:
        return None
    return next((p for p in model.properties() if p.name == name), None)


def render_text(result: CheckResult, trace_files: dict | None = None,
                show_all: bool = False) -> str:
    """The terminal's report: counts, one line per property, then the headline
    counterexample (every counterexample with ``show_all``)."""
    s = summary(result, trace_files)
    head = f"{s['scenario']} [{s['variant']}]"
    if s["params"]:
        head += " " + " ".join(f"{k}={v}" for k, v in s["params"].items())
    head += f" — explorer {s['explorer']}"
    if s.get("symmetry"):
        head += f", symmetry {s['symmetry']}"
    lines = [head,
             f"  {s['unique_states']:,} distinct states, {s['generated_states']:,} generated, "
             f"depth {s['max_depth']}, {s['elapsed_s']:.2f}s"
             + ("" if s["complete"] else f"  (incomplete: stopped by {s['stopped_by']})"),
             *collision_lines(s)]
    width = max((len(n) for n in s["properties"]), default=0)
    kind_width = max([9] + [len(p["kind"]) for p in s["properties"].values()])
    for name, p in s["properties"].items():
        mark = {"holds": "ok ", "witness_found": "ok ", "unknown": "?  "}.get(p["verdict"], "!! ")
        line = f"  {mark}{name:<{width}}  {p['kind']:<{kind_width}} {p['verdict']}"
        if p["trace_length"]:
            line += f" ({p['trace_length']}-state trace)"
        if p["trace_file"]:
            line += f" -> {p['trace_file']}"
        lines.append(line)
    z = s.get("z3_stats")
    if z:
        rate = "-" if z["hit_rate"] is None else f"{100 * z['hit_rate']:.1f}%"
        lines.append(f"  decided by z3: {', '.join(z['decided_by_z3']) or 'none'} (memo hit "
                     f"rate {rate}, {z['solver_calls']} solver calls, {z['solver_s']:.2f}s)")
        if z["passed_through"]:
            lines.append(f"  not declared by formula, decided as declared: "
                         f"{', '.join(z['passed_through'])}")
    if s.get("spark"):
        lines.append(f"  {spark_levels(s['spark'])}")
        if s["spark"].get("visited_note"):  # visited sets held in memory: how to spill
            lines.append(f"  {s['spark']['visited_note']}")
    if s["stopped_by"] == "max_memory":
        fix = "shorter or fewer walks" if s["explorer"] == "simulate" else \
            "run it on Spark (--explorer spark, --master for a cluster)"
        lines.append(f"  memory: the process reached {_mib(s.get('resident_bytes_at_stop'))} "
                     f"of its {_mib(s.get('max_memory'))} limit: {fix} or raise --max-memory")
    if s.get("not_checked"):
        lines.append(f"  not checked by the {s['explorer']} explorer: "
                     f"{', '.join(s['not_checked'])} (liveness: use --explorer bfs or dfs)")
    if s["explorer"] == "simulate" and any(p["kind"] in ("eventually", "leads_to")
                                           for p in s["properties"].values()):
        lines.append("  liveness is unknown on simulate: a random walk cannot show that a "
                     "loop is fair or that none exists (use --explorer bfs or dfs)")
    if s["never_fired"]:
        lines.append(f"  never fired: {', '.join(s['never_fired'])}")
    lines.append(f"  exit {s['exit_code']}: {EXIT_MEANINGS[s['exit_code']]}")
    model = result.extra.get("model")
    if model is None:
        return "\n".join(lines)
    shown = [n for n in result.properties if n in result.discoveries
             and result.discoveries[n].kind != "sometimes"]
    first = headline(result)
    if not show_all:
        rest = [n for n in shown if n != first]
        shown = [first] if first in shown else []
    for name in shown:
        lines += _counterexample(result, model, name, (trace_files or {}).get(name))
    if not show_all and rest:
        more = ", ".join(f"{n} ({len(result.discoveries[n].trace)})" for n in rest)
        lines.append(f"\n  {len(rest)} more counterexample{'s' if len(rest) > 1 else ''}: "
                     f"{more} — `--all` prints them, `--out DIR` writes them all")
    return "\n".join(lines)


def _counterexample(result, model, name, path) -> list[str]:
    d = result.discoveries[name]
    prop = _property(result, name)
    about = f": {prop.description}" if prop is not None and prop.description else ""
    lines = [f"\n  counterexample for {name} ({len(d.trace)} states){about}"]
    for i, st in enumerate(d.trace.states):
        if i == 0:
            act = "init"
        else:
            a = d.trace.actions[i - 1]
            kind = model.action_kind(a)
            act = model.format_action(a) + ("" if kind == "step" else f"   [{kind}]")
        lines.append(f"    {i:>3}. {act}")
        lines.append(f"         {model.format_state(st)}")
    loop = getattr(d.trace, "loop_start", None)
    if loop is not None:
        lines.append(f"    {lasso_words(loop, len(d.trace))}")
    why = explanation(result, name)
    if why:
        lines.append(f"    {'' if why.startswith('offending') else 'why: '}{why}")
    if path:
        lines.append(f"    step by step: kmc show {shlex.quote(path)}   re-run it: "
                     f"{replay_command(path, result.extra.get('scenario'))}")
    return lines


def replay_command(path: str, scenario) -> str:
    """``kmc replay PATH``, naming the model when it is a user model (``FILE.py:factory``,
    ``module:factory``): a trace file never chooses the code to run itself."""
    named = f" --model {shlex.quote(scenario)}" if ":" in (scenario or "") else ""
    return f"kmc replay {shlex.quote(path)}{named}"


def lasso_words(loop_start: int, length: int) -> str:
    """How a lasso goes on after its last step."""
    if loop_start == length - 1:
        return (f"... and stays at step {loop_start} forever (no fair action is enabled "
                "there)")
    return f"... and repeats from step {loop_start} forever (step {length - 1} is step " \
           f"{loop_start} again)"


def slug(name: str) -> str:
    """A property name as it appears in file names and page anchors (``file_slug``: the
    name itself, or a form with a digest that no other name shares)."""
    return file_slug(name)


def _write_json(path: str, data) -> None:
    write_atomic(path, json.dumps(data, indent=1, sort_keys=False, default=str))


def _jsonable(v):
    try:
        json.dumps(v)
        return v
    except TypeError:
        return str(v)
