"""`kmc check ... --out DIR` -> DIR/index.html: one self-contained page (CSS inline,
pictures embedded as data URIs) that reads top down: a table of contents, the headline
(the first violated property in the model's declaration order, with its counterexample:
pictures, step table, replay command, Python snippet), the verdict table, the counts,
coverage per action, then the other counterexamples, each folded in a <details>.

The page wraps to any width (fixed table layout, long words broken anywhere, pre blocks
wrapped) and stays small: pictures are embedded as palette PNGs up to ``EMBED_BUDGET``
bytes, the headline's first; beyond it a picture is linked, not embedded. The side files
it links (trace JSON, pictures, graph exports) sit next to it in DIR."""
from __future__ import annotations

import base64
import html
import io
import json
import os

from kmc.model.result import EXIT_MEANINGS
from kmc.reports.inputs import write_atomic
from kmc.reports.artifacts import drawn, not_drawn, slug, write_artifacts
from kmc.reports.graph import initial_summary, state_summary
from kmc.reports.show import change_lines
from kmc.reports.summary import replay_command, summary, trace_meta

#: base64 bytes of pictures one page may embed (the page itself stays well under 1 MB)
EMBED_BUDGET = 640_000
#: a step table with more rows than this is folded in a <details>
LONG_TABLE = 8
BAD = ("violated", "witness_missing")

CSS = """
*,*::before,*::after{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;margin:1.5em auto;
max-width:1200px;padding:0 1em;overflow-wrap:anywhere}
h1{font-size:1.5em;margin-bottom:.1em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}
h3{margin-bottom:.3em}
table{border-collapse:collapse;margin:.6em 0;width:100%;table-layout:fixed}
td,th{padding:.25em .6em;border-bottom:1px solid #eee;text-align:left;vertical-align:top;
overflow-wrap:anywhere;word-break:break-word}th{background:#f4f6f8}
table.narrow{max-width:44em}
.holds,.witness_found{color:#2e7d32;font-weight:600}.violated,.witness_missing{color:#c0392b;
font-weight:700}.unknown{color:#b7791f;font-weight:600}
tr.headline td{background:#fdf0ef}
.bar{background:#1f5fa8;height:.7em;display:inline-block;max-width:100%}.zero{color:#c0392b}
pre,code{font:12.5px ui-monospace,Menlo,Consolas,monospace;background:#f6f8fa}
pre{padding:.7em;white-space:pre-wrap;overflow-wrap:anywhere;max-width:100%}
img{max-width:100%;height:auto;border:1px solid #eee;margin:.4em 0}
.muted{color:#777}.fault td{color:#c0392b}
td.chg{font:12px ui-monospace,monospace;white-space:pre-wrap}
td.chg pre{margin:.3em 0;padding:.4em;font-size:11.5px}
nav#toc{background:#f6f8fa;border:1px solid #e3e7eb;padding:.4em 1.2em;margin:1em 0}
nav#toc ol{margin:.3em 0;padding-left:1.4em}
.box{border-left:5px solid #c0392b;background:#fdf0ef;padding:.5em 1em;margin:.8em 0}
.box.ok{border-color:#2e7d32;background:#eef7ef}
details{margin:.5em 0}details>summary{cursor:pointer;font-weight:600}
details.cx{border:1px solid #e3e7eb;padding:.3em .8em}details.cx>summary{font-size:1.1em}
"""


def write_report(result, out_dir: str, trace_files: dict) -> str:
    """Write ``out_dir/index.html`` (and the per-violation pictures); returns its path."""
    os.makedirs(out_dir, exist_ok=True)
    s = summary(result, trace_files)
    model = result.extra.get("model")
    order = [n for n, p in s["properties"].items()
             if p["verdict"] in BAD and n in result.discoveries
             and result.discoveries[n].kind != "sometimes"]
    headline = next((n for n, p in s["properties"].items() if p["verdict"] in BAD), None)
    budget = [EMBED_BUDGET]
    sections = {}
    for name in order:  # the headline first, so its pictures are embedded first
        doc = _document(result, name, model)
        files = write_artifacts(doc, out_dir, model=model)
        sections[name] = _counterexample(doc, files, trace_files.get(name), out_dir, budget,
                                         headline=name == headline)
    others = [n for n in order if n != headline]
    parts = [_head(s), _toc(s, headline, others), _headline(s, headline, sections),
             _verdicts(s, out_dir, headline), _counts(s), _coverage(s)]
    if others:
        parts.append("<section id=others><h2>Other counterexamples</h2>"
                     "<p class=muted>In the model's declaration order; click to unfold.</p>"
                     + "\n".join(sections[n] for n in others) + "</section>")
    page = ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width,initial-scale=1'>"
            f"<title>kmc: {_e(_title(s))}</title><style>{CSS}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")
    return write_atomic(os.path.join(out_dir, "index.html"), page)


def _document(result, name, model) -> dict:
    """The trace document as the trace file holds it, made from the run in memory, not
    read back from the file: kmc's own output is not a user's input, and the limits
    load_trace puts on those (64 MiB, nesting) must not turn a large or deep model's
    report into an internal error."""
    d = result.discoveries[name]
    return json.loads(json.dumps(d.trace.to_dict(model, **trace_meta(result, name)),
                                 default=str))


def _title(s) -> str:
    return f"{s['scenario']} [{s['variant']}]"


def _head(s) -> str:
    state = EXIT_MEANINGS.get(s["exit_code"], "")
    params = " ".join(f"{k}={v}" for k, v in (s.get("params") or {}).items())
    return (f"<header><h1>kmc — {_e(_title(s))}</h1>"
            + (f"<p class=muted><code>{_e(params)}</code></p>" if params else "")
            + f"<p class=muted>explorer {_e(s['explorer'])} · exit code {s['exit_code']}"
            f" ({_e(state)})</p></header>")


def _toc(s, headline, others) -> str:
    first = (f"Headline: {headline} {s['properties'][headline]['verdict'].replace('_', ' ')}"
             if headline else "Headline: no violation")
    items = [("headline", first), ("verdicts", "Verdicts"), ("counts", "Counts"),
             ("coverage", "Coverage per action")]
    out = [f"<li><a href='#{a}'>{_e(t)}</a></li>" for a, t in items]
    if others:
        sub = "".join(f"<li><a href='#cx-{slug(n)}'>{_e(n)}</a></li>" for n in others)
        out.append(f"<li><a href='#others'>Other counterexamples</a><ol>{sub}</ol></li>")
    return f"<nav id=toc><strong>Contents</strong><ol>{''.join(out)}</ol></nav>"


def _headline(s, headline, sections) -> str:
    props = s["properties"]
    if headline is None:
        held = sum(p["verdict"] in ("holds", "witness_found") for p in props.values())
        unknown = [n for n, p in props.items() if p["verdict"] == "unknown"]
        text = f"No violation: {held} of {len(props)} properties hold or have a witness"
        if unknown:
            text += f"; undecided: {', '.join(unknown)}"
        return (f"<section id=headline><h2>Headline</h2><p class='box ok'>{_e(text)}."
                "</p></section>")
    p = props[headline]
    bad = sum(x["verdict"] in BAD for x in props.values())
    more = f" ({bad - 1} more violation{'s' if bad > 2 else ''} below)" if bad > 1 else ""
    verdict = p["verdict"].replace("_", " ")
    where = f" at step {p['trace_length'] - 1}" if p["trace_length"] else ""
    box = (f"<p class=box><strong>{_e(headline)}</strong> ({_e(p['kind'])}) is "
           f"<span class={p['verdict']}>{verdict}</span>{where}{_e(more)}.</p>")
    return (f"<section id=headline><h2>Headline: {_e(headline)} {verdict}</h2>{box}"
            + sections.get(headline, "") + "</section>")


def _verdicts(s, out_dir, headline) -> str:
    rows = []
    names = ([headline] if headline else []) + [n for n in s["properties"] if n != headline]
    for name in names:
        p = s["properties"][name]
        tf = p.get("trace_file")
        link = f"<a href='{_e(_rel(tf, out_dir))}'>{_e(os.path.basename(tf))}</a>" if tf else ""
        length = f"{p['trace_length']} states" if p["trace_length"] else ""
        cell = f"<a href='#cx-{slug(name)}'>{_e(name)}</a>" \
            if p["verdict"] == "violated" else _e(name)
        if p.get("description"):
            cell += f"<br><span class=muted>{_e(p['description'])}</span>"
        cls = " class=headline" if name == headline else ""
        rows.append(f"<tr{cls}><td>{cell}</td><td>{_e(p['kind'])}</td>"
                    f"<td class={p['verdict']}>{_e(p['verdict'].replace('_', ' '))}</td>"
                    f"<td>{length}</td><td>{link}</td></tr>")
    return ("<section id=verdicts><h2>Verdicts</h2><p class=muted>The headline first, then "
            "the model's declaration order.</p><table id=verdict-table><colgroup>"
            "<col style='width:26%'><col style='width:12%'><col style='width:15%'>"
            "<col style='width:12%'><col></colgroup><tr><th>property</th><th>kind</th>"
            "<th>verdict</th><th>trace</th><th>file</th></tr>" + "".join(rows)
            + "</table></section>")


def _counts(s) -> str:
    items = [("distinct states", f"{s['unique_states']:,}"),
             ("generated states", f"{s['generated_states']:,}"),
             ("max depth", s["max_depth"]),
             ("complete", "yes" if s["complete"] else f"no — stopped by {s['stopped_by']}"),
             ("elapsed", f"{s['elapsed_s']:.2f} s"),
             ("fingerprint collision probability", f"{s['collision_probability']:.2e}")]
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in items)
    return (f"<section id=counts><h2>Counts</h2><table id=count-table class=narrow>{body}"
            "</table></section>")


def _coverage(s) -> str:
    cov = s["coverage"]
    top = max(cov.values(), default=0) or 1
    rows = []
    for name, n in cov.items():
        bar = f"<span class=bar style='width:{max(1, round(100 * n / top))}%'></span>" \
            if n else "<span class=zero>never fired</span>"
        rows.append(f"<tr><td>{_e(name)}</td><td>{n:,}</td><td>{bar}</td></tr>")
    return ("<section id=coverage><h2>Coverage per action</h2><table id=coverage-table>"
            "<colgroup><col style='width:45%'><col style='width:12%'><col></colgroup>"
            "<tr><th>action</th><th>fired</th><th></th></tr>" + "".join(rows)
            + "</table></section>")


def _counterexample(doc, files, trace_file, out_dir, budget, headline) -> str:
    """A counterexample's body: open under the headline, folded in a <details> else."""
    name = doc["property"]
    last = len(doc["steps"]) - 1
    title = f"{name} ({doc.get('kind')}) violated at step {last}"
    out = []
    if doc.get("description"):
        out.append(f"<p class=muted>{_e(name)}: {_e(doc['description'])}</p>")
    why = doc.get("explanation") or ""
    if why and not why.startswith("offending"):
        out.append(f"<p class=why><b>Why:</b> {_e(why)}</p>")
    if doc.get("loop_start") is not None:  # a lasso: how the behaviour goes on
        from kmc.reports.tracefile import loop_words
        out.append(f"<p class=why><b>Lasso:</b> after step {last} the behaviour "
                   f"{_e(loop_words(doc))}.</p>")
    if doc.get("detail") is not None:
        out.append(f"<p>Offending tuple: <code>{_e(json.dumps(doc['detail']))}</code></p>")
    if trace_file:
        out.append(f"<p>Replay: <code>{_e(replay_command(trace_file, doc.get('scenario')))}"
                   f"</code> · step by step: "
                   f"<code>kmc show {_e(trace_file)}</code></p>")
    if not drawn(doc):
        out.append(f"<p class=muted>{_e(not_drawn(doc).capitalize())}.</p>")
    for key, caption in (("sequence_png", "Message sequence"),
                         ("states_png", "State graph around the counterexample"),
                         ("graph_png", "Counterexample graph")):
        if key in files:
            out.append(f"<h3>{caption}</h3>{_img(files[key], caption, out_dir, budget)}")
    exports = [files[k] for k in ("dot", "graphml", "node_link", "graph_svg", "sequence_svg",
                                  "states_svg") if k in files]
    out.append("<p class=muted>Graph exports: " + " · ".join(
        f"<a href='{_e(_rel(p, out_dir))}'>{_e(os.path.basename(p))}</a>" for p in exports)
        + "</p>")
    out.append(_steps(doc, headline))
    with open(files["snippet"]) as f:
        out.append("<details class=snippet><summary>Replay in Python</summary>"
                   "<pre class=snippet>" + _e(f.read()) + "</pre></details>")
    anchor = f"cx-{slug(name)}"
    if headline:
        return (f"<div id='{anchor}'><h3>Counterexample: {last + 1} states, {last} actions"
                "</h3>" + "\n".join(out) + "</div>")
    return (f"<details class=cx id='{anchor}'><summary>{_e(title)}</summary>"
            + "\n".join(out) + "</details>")


def _steps(doc, headline) -> str:
    rows = []
    lanes = [str(x) for x in doc.get("lanes") or []]
    prev = None
    for st in doc["steps"]:
        i = st["index"]
        msg = st.get("message")
        msg_text = f"{msg['from']} → {msg['to']}: {msg['label']}" if msg else ""
        changes = st.get("changed") or []
        if i == 0:
            words = initial_summary(st["state"], lanes)
        else:
            words = state_summary(changes, st["state"], prev=prev, lanes=lanes, limit=0,
                                  per_line=6) or ["(no field changed)"]
        exact = "\n".join(change_lines(changes, 90))
        diff = (f"<details><summary>exact diff</summary><pre>{_e(exact)}</pre></details>"
                if exact else "")
        cls = " class=fault" if st.get("fault") else ""
        rows.append(f"<tr{cls}><td>{i}</td><td>{_e(st.get('actor') or '')}</td>"
                    f"<td>{_e(st.get('action') or '')}</td><td>{_e(msg_text)}</td>"
                    f"<td class=chg>{_e(chr(10).join(words))}{diff}</td></tr>")
        prev = st["state"]
    table = ("<table class=steps><colgroup><col style='width:3em'><col style='width:9%'>"
             "<col style='width:24%'><col style='width:22%'><col></colgroup><tr><th>#</th>"
             "<th>actor</th><th>action</th><th>message</th><th>what changed</th></tr>"
             + "".join(rows) + "</table>")
    if len(doc["steps"]) <= LONG_TABLE:
        return "<h3>Steps</h3>" + table
    opened = " open" if headline else ""
    return (f"<details class=steps{opened}><summary>Steps ({len(doc['steps'])} states)"
            f"</summary>{table}</details>")


def _img(path, alt, out_dir, budget) -> str:
    """The picture as an embedded palette PNG while ``budget`` lasts, else a link."""
    data = base64.b64encode(_small_png(path)).decode()
    if len(data) > budget[0]:
        name = _e(_rel(path, out_dir))
        return (f"<p class=muted>{_e(alt)}: not embedded, to keep this page small — open "
                f"<a href='{name}'>{_e(os.path.basename(path))}</a>.</p>")
    budget[0] -= len(data)
    return f"<img alt='{_e(alt)}' src='data:image/png;base64,{data}'>"


def _small_png(path) -> bytes:
    """The PNG with a 256-colour palette (octree: the palette's few strong colours survive;
    a quarter of the bytes, text still crisp); the file on disk keeps full colour."""
    try:
        from PIL import Image
    except ImportError:  # matplotlib depends on Pillow, but stay safe
        with open(path, "rb") as f:
            return f.read()
    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                           dither=Image.Dither.NONE)
    buf = io.BytesIO()
    small.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def _rel(path, out_dir) -> str:
    return os.path.relpath(path, out_dir)


def _e(v) -> str:
    return html.escape(str(v), quote=True)
