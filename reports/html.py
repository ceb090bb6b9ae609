"""`kmc check ... --out DIR` -> DIR/index.html: one self-contained page (CSS inline,
pictures embedded as data URIs) with the verdict table, the counts, coverage per action
and, for each violation, its pictures, step table, replay command and Python snippet.
The side files it links (trace JSON, graph exports) sit next to it in DIR."""
from __future__ import annotations

import base64
import html
import json
import os

from kmc.model.result import EXIT_MEANINGS
from kmc.reports.artifacts import write_artifacts
from kmc.reports.show import change_lines
from kmc.reports.summary import summary, trace_meta
from kmc.reports.tracefile import describe, load_trace

CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;margin:2em auto;
max-width:1200px;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0}td,th{padding:.25em .7em;border-bottom:1px solid
#eee;text-align:left;vertical-align:top}th{background:#f4f6f8}
.holds,.witness_found{color:#2e7d32;font-weight:600}.violated,.witness_missing{color:#c0392b;
font-weight:700}.unknown{color:#b7791f;font-weight:600}
.bar{background:#1f5fa8;height:.7em;display:inline-block}.zero{color:#c0392b}
pre,code{font:12.5px ui-monospace,Menlo,Consolas,monospace;background:#f6f8fa}
pre{padding:.7em;overflow-x:auto}img{max-width:100%;border:1px solid #eee;margin:.4em 0}
.muted{color:#777}.fault{color:#c0392b}td.chg{font:12px ui-monospace,monospace;white-space:pre}
"""


def write_report(result, out_dir: str, trace_files: dict) -> str:
    """Write ``out_dir/index.html`` (and the per-violation pictures); returns its path."""
    os.makedirs(out_dir, exist_ok=True)
    s = summary(result, trace_files)
    model = result.extra.get("model")
    parts = [_head(s), _verdicts(s, out_dir), _counts(s), _coverage(s)]
    for name, d in sorted(result.discoveries.items()):
        if d.kind == "sometimes":
            continue
        doc = _document(result, name, trace_files.get(name), model)
        files = write_artifacts(doc, out_dir, model=model)
        parts.append(_violation(doc, files, trace_files.get(name), out_dir))
    page = ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>kmc: {_e(describe(s))}</title><style>{CSS}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")
    path = os.path.join(out_dir, "index.html")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(path + ".tmp", path)
    return path


def _document(result, name, path, model) -> dict:
    if path and os.path.exists(path):
        return load_trace(path)
    d = result.discoveries[name]
    return json.loads(json.dumps(d.trace.to_dict(model, **trace_meta(result, name)),
                                 default=str))


def _head(s) -> str:
    state = EXIT_MEANINGS.get(s["exit_code"], "")
    return (f"<h1>kmc — {_e(describe(s))}</h1><p class=muted>explorer {_e(s['explorer'])}"
            f" · exit code {s['exit_code']} ({state})</p>")


def _verdicts(s, out_dir) -> str:
    rows = []
    for name, p in s["properties"].items():
        tf = p.get("trace_file")
        link = f"<a href='{_e(_rel(tf, out_dir))}'>{_e(os.path.basename(tf))}</a>" if tf else ""
        length = f"{p['trace_length']} states" if p["trace_length"] else ""
        cell = f"<a href='#cx-{_e(name)}'>{_e(name)}</a>" \
            if p["verdict"] == "violated" else _e(name)
        rows.append(f"<tr><td>{cell}</td><td>{_e(p['kind'])}</td>"
                    f"<td class={p['verdict']}>{_e(p['verdict'].replace('_', ' '))}</td>"
                    f"<td>{length}</td><td>{link}</td></tr>")
    return ("<h2>Verdicts</h2><table id=verdicts><tr><th>property</th><th>kind</th>"
            "<th>verdict</th><th>trace</th><th>file</th></tr>" + "".join(rows) + "</table>")


def _counts(s) -> str:
    items = [("distinct states", f"{s['unique_states']:,}"),
             ("generated states", f"{s['generated_states']:,}"),
             ("max depth", s["max_depth"]),
             ("complete", "yes" if s["complete"] else f"no — stopped by {s['stopped_by']}"),
             ("elapsed", f"{s['elapsed_s']:.2f} s"),
             ("fingerprint collision probability", f"{s['collision_probability']:.2e}")]
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in items)
    return f"<h2>Counts</h2><table id=counts>{body}</table>"


def _coverage(s) -> str:
    cov = s["coverage"]
    top = max(cov.values(), default=0) or 1
    rows = []
    for name, n in cov.items():
        bar = f"<span class=bar style='width:{max(1, round(200 * n / top))}px'></span>" \
            if n else "<span class=zero>never fired</span>"
        rows.append(f"<tr><td>{_e(name)}</td><td>{n:,}</td><td>{bar}</td></tr>")
    return ("<h2>Coverage per action</h2><table id=coverage><tr><th>action</th><th>fired"
            "</th><th></th></tr>" + "".join(rows) + "</table>")


def _violation(doc, files, trace_file, out_dir) -> str:
    name = doc["property"]
    last = len(doc["steps"]) - 1
    out = [f"<h2 id='cx-{_e(name)}'>Counterexample: {_e(name)} ({_e(doc.get('kind'))}) "
           f"violated at step {last}</h2>"]
    if doc.get("detail") is not None:
        out.append(f"<p>Offending tuple: <code>{_e(json.dumps(doc['detail']))}</code></p>")
    if trace_file:
        out.append(f"<p>Replay: <code>kmc replay {_e(trace_file)}</code> · step by step: "
                   f"<code>kmc show {_e(trace_file)}</code></p>")
    for key, caption in (("sequence_png", "Message sequence"),
                         ("states_png", "State graph around the counterexample"),
                         ("graph_png", "Counterexample graph")):
        if key in files:
            out.append(f"<h3>{caption}</h3>{_img(files[key], caption)}")
    exports = [(k, files[k]) for k in ("dot", "graphml", "node_link", "graph_svg",
                                       "sequence_svg", "states_svg") if k in files]
    out.append("<p class=muted>Graph exports: " + " · ".join(
        f"<a href='{_e(_rel(p, out_dir))}'>{_e(os.path.basename(p))}</a>" for _k, p in exports)
        + "</p>")
    out.append("<h3>Steps</h3>" + _steps(doc))
    with open(files["snippet"]) as f:
        out.append("<h3>Replay in Python</h3><pre class=snippet>" + _e(f.read()) + "</pre>")
    return "\n".join(out)


def _steps(doc) -> str:
    rows = []
    for st in doc["steps"]:
        i = st["index"]
        msg = st.get("message")
        msg_text = f"{msg['from']} → {msg['to']}: {msg['label']}" if msg else ""
        changed = "initial state" if i == 0 else "\n".join(change_lines(st.get("changed")
                                                                        or [], 90))
        cls = " class=fault" if st.get("fault") else ""
        rows.append(f"<tr{cls}><td>{i}</td><td>{_e(st.get('actor') or '')}</td>"
                    f"<td>{_e(st.get('action') or '')}</td><td>{_e(msg_text)}</td>"
                    f"<td class=chg>{_e(changed)}</td></tr>")
    return ("<table class=steps><tr><th>#</th><th>actor</th><th>action</th><th>message</th>"
            "<th>changed fields</th></tr>" + "".join(rows) + "</table>")


def _img(path, alt) -> str:
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode()
    return f"<img alt='{_e(alt)}' src='data:image/png;base64,{data}'>"


def _rel(path, out_dir) -> str:
    return os.path.relpath(path, out_dir)


def _e(v) -> str:
    return html.escape(str(v), quote=True)
