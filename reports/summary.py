"""The run summary: the JSON object `kmc check --json` prints, and the human text."""
from __future__ import annotations

import json
import os

from kmc.model.result import EXIT_MEANINGS, CheckResult


def summary(result: CheckResult, trace_files: dict | None = None) -> dict:
    x = result.extra
    trace_files = trace_files or {}
    props = {}
    for name, kind in result.properties.items():
        d = result.discoveries.get(name)
        props[name] = {"kind": kind, "verdict": result.verdict(name),
                       "trace_length": len(d.trace) if d else None,
                       "trace_file": trace_files.get(name)}
        if d is not None and d.detail is not None:
            props[name]["detail"] = _jsonable(d.detail)
    return {
        "scenario": x.get("scenario"), "variant": x.get("variant"),
        "params": x.get("params", {}), "explorer": result.explorer,
        "unique_states": result.unique_states, "generated_states": result.generated_states,
        "max_depth": result.max_depth, "complete": result.complete,
        "stopped_by": result.stopped_by or None, "elapsed_s": round(result.elapsed_s, 4),
        "properties": props, "coverage": result.coverage, "never_fired": result.never_fired,
        "collision_probability": result.collision_probability,
        "exit_code": result.exit_code(),
        **{k: v for k, v in x.items() if k in ("seed", "walks", "walk_length", "spark", "z3_stats")},
    }


def write_traces(result: CheckResult, out_dir: str) -> dict:
    """One JSON trace file per discovery; returns property -> path."""
    model = result.extra["model"]
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for name, d in sorted(result.discoveries.items()):
        path = os.path.join(out_dir, f"trace-{_slug(name)}.json")
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
    if d.detail is not None:
        meta["detail"] = _jsonable(d.detail)
    if name in (result.extra.get("z3_stats") or {}).get("decided_by_z3", ()):
        meta["decided_by"] = "z3"
    return meta


def write_summary(result: CheckResult, out_dir: str, trace_files: dict) -> str:
    path = os.path.join(out_dir, "summary.json")
    _write_json(path, summary(result, trace_files))
    return path


def render_text(result: CheckResult, trace_files: dict | None = None) -> str:
    s = summary(result, trace_files)
    head = f"{s['scenario']} [{s['variant']}]"
    if s["params"]:
        head += " " + " ".join(f"{k}={v}" for k, v in s["params"].items())
    lines = [f"{head} — explorer {s['explorer']}",
             f"  {s['unique_states']:,} distinct states, {s['generated_states']:,} generated, "
             f"depth {s['max_depth']}, {s['elapsed_s']:.2f}s"
             + ("" if s["complete"] else f"  (incomplete: stopped by {s['stopped_by']})"),
             f"  fingerprint collision probability: {s['collision_probability']:.2e}"]
    width = max((len(n) for n in s["properties"]), default=0)
    model = result.extra.get("model")
    for name, p in s["properties"].items():
        mark = {"holds": "ok ", "witness_found": "ok ", "unknown": "?  "}.get(p["verdict"], "!! ")
        line = f"  {mark}{name:<{width}}  {p['kind']:<9} {p['verdict']}"
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
    if s["never_fired"]:
        lines.append(f"  never fired: {', '.join(s['never_fired'])}")
    lines.append(f"  exit {s['exit_code']}: {EXIT_MEANINGS[s['exit_code']]}")
    for name, d in sorted(result.discoveries.items()):
        if d.kind == "sometimes" or model is None:
            continue
        lines.append(f"\n  counterexample for {name} ({len(d.trace)} states):")
        for i, st in enumerate(d.trace.states):
            act = "init" if i == 0 else model.format_action(d.trace.actions[i - 1])
            lines.append(f"    {i:>3}. {act}")
            lines.append(f"         {model.format_state(st)}")
        if d.detail is not None:
            lines.append(f"    offending: {d.detail}")
        path = (trace_files or {}).get(name)
        if path:
            lines.append(f"    step by step: kmc show {path}   re-run it: kmc replay {path}")
    return "\n".join(lines)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _write_json(path: str, data) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=False, default=str)
    os.replace(tmp, path)  # never leave a half-written file


def _jsonable(v):
    try:
        json.dumps(v)
        return v
    except TypeError:
        return str(v)
