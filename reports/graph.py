"""The counterexample as a graph: a networkx DiGraph with one node per trace state
(labelled with a short summary, in words, of what changed) and one edge per action
(labelled with the action, its actor and its message, in full), exported as DOT, GraphML
and node-link JSON and drawn to PNG/SVG.
"""
from __future__ import annotations

import json
import re
import textwrap

import networkx as nx

from kmc.model.trace import state_changes
from kmc.reports import draw
from kmc.reports.inputs import write_atomic
from kmc.reports.show import change_lines, flatten

NODE_WRAP = 70  # characters per line in a state box (wrapped at spaces, never cut)
EDGE_WRAP = 100  # characters per line of an action label
LINE = 0.16  # inches per text line at 8.5 pt


def trace_graph(doc: dict) -> nx.DiGraph:
    """Nodes are step indices 0..n; attributes hold only str/int/bool (GraphML-safe).
    ``label`` is the step and its summary in words; ``changed`` the exact diff."""
    steps = doc["steps"]
    last = len(steps) - 1
    bad = doc.get("kind") != "sometimes"
    lanes = [str(x) for x in doc.get("lanes") or []]
    g = nx.DiGraph(scenario=str(doc.get("scenario")), variant=str(doc.get("variant")),
                   property=str(doc.get("property")), kind=str(doc.get("kind")))
    prev = None
    for i, st in enumerate(steps):
        changes = st.get("changed")
        if changes is None and prev is not None:  # version 1 files: compute them
            changes = state_changes(prev, st["state"])
        if i:
            words = state_summary(changes or [], st["state"], prev=prev, lanes=lanes)
            words = words or ["(no field changed)"]
        else:
            words = initial_summary(st["state"], lanes)
        head = f"step {i}"
        if i == last:
            head += f": {doc.get('property')} {'violated' if bad else 'witness'}"
            loop = doc.get("loop_start")
            if loop is not None:  # a lasso: the behaviour goes on from there, forever
                head += " (stays here forever)" if loop == last else \
                    f" (back to step {loop}, forever)"
                g.graph["loop_start"] = int(loop)
        g.add_node(i, label="\n".join([head] + words), summary="\n".join(words),
                   changed="\n".join(change_lines(changes or [], 80)),
                   fingerprint=str(st.get("fingerprint") or ""),
                   state=json.dumps(st["state"], sort_keys=True, default=str),
                   initial=i == 0, violating=bad and i == last,
                   witness=not bad and i == last)
        if i:
            msg = st.get("message")
            g.add_edge(i - 1, i, label=str(st.get("action")), actor=str(st.get("actor") or ""),
                       message="" if not msg else f"{msg['from']} -> {msg['to']}: "
                                                  f"{msg['label']}",
                       fault=bool(st.get("fault")), action_index=int(st["action_index"])
                       if st.get("action_index") is not None else -1)
        prev = st["state"]
    return g


def write_dot(g: nx.DiGraph, path: str) -> str:
    """Graphviz DOT, written directly (no pydot/pygraphviz dependency)."""
    lines = [f"digraph {_q(g.graph.get('property', 'trace'))} {{",
             "  rankdir=TB; node [shape=box, style=rounded, fontname=Helvetica, "
             "fontsize=10]; edge [fontname=Helvetica, fontsize=9];"]
    for n, d in g.nodes(data=True):
        extra = ""
        if d.get("initial"):
            extra = ", color=\"#2e8b57\", penwidth=2"
        if d.get("violating"):
            extra = ", color=\"#c0392b\", penwidth=2.5, style=\"rounded,filled\", " \
                    "fillcolor=\"#fde2e0\""
        lines.append(f"  {n} [label={_q(d.get('label', str(n)))}{extra}];")
    for u, v, d in g.edges(data=True):
        label = d.get("label", "")
        if d.get("actor"):
            label = f"[{d['actor']}] {label}"
        if d.get("message"):
            label += "\n" + d["message"]
        color = ", color=\"#c0392b\", fontcolor=\"#c0392b\"" if _crash(d) else ""
        lines.append(f"  {u} -> {v} [label={_q(label)}{color}];")
    lines.append("}")
    return write_atomic(path, "\n".join(lines) + "\n")


def write_graphml(g: nx.DiGraph, path: str) -> str:
    """GraphML, each text attribute made valid XML 1.0 (``xml_text``)."""
    h = g.copy()
    for _n, d in h.nodes(data=True):
        _xml_attrs(d)
    for _u, _v, d in h.edges(data=True):
        _xml_attrs(d)
    _xml_attrs(h.graph)
    return write_atomic(path, "\n".join(nx.generate_graphml(h)) + "\n")


#: characters XML 1.0 does not allow in a document, even escaped
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with each character XML cannot hold (a model's ESC, NUL or BEL) as its
    escape (``\\x1b``): GraphML and SVG readers refuse a document that holds one."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape",
                                                   "backslashreplace").decode("ascii"),
                        text)


def _xml_attrs(d: dict) -> None:
    for k, v in d.items():
        if isinstance(v, str):
            d[k] = xml_text(v)


def write_node_link(g: nx.DiGraph, path: str) -> str:
    return write_atomic(path, json.dumps(nx.node_link_data(g, edges="edges"), indent=1))


def edge_text(d: dict) -> str:
    """An edge's label as drawn: ``[actor] action`` and, unless the action already says
    it, the message on a second line; wrapped at spaces, never cut."""
    lines = [(f"[{d['actor']}] " if d.get("actor") else "") + d["label"]]
    if d.get("message") and d["message"].split(": ", 1)[-1] not in d["label"]:
        lines.append("message " + d["message"].replace(" -> ", f" {ARROW} ", 1))
    return "\n".join(_wrap(x, EDGE_WRAP) for x in lines)


def node_text(d: dict) -> str:
    """A state box: its label with each line wrapped between phrases ("; ") where it
    can, inside a phrase only when one phrase alone is too long."""
    out = []
    for line in d["label"].split("\n"):
        cur = ""
        for phrase in line.split("; "):
            if cur and len(cur) + 2 + len(phrase) > NODE_WRAP:
                out.append(cur + ";")
                cur = "  " + phrase
            else:
                cur = f"{cur}; {phrase}" if cur else phrase
        out.append(_wrap(cur, NODE_WRAP))
    return "\n".join(out)


def draw_trace_graph(g: nx.DiGraph, stem: str) -> dict:
    """A vertical chain of boxes (states: step + summary) joined by arrows labelled with
    the actions; the violating state is red, the initial one green. The figure is as
    wide as its widest text (measured, not guessed) and as tall as its lines."""
    n = g.number_of_nodes()
    nodes = [node_text(g.nodes[i]) for i in range(n)]
    edges = {v: (u, d, edge_text(d)) for u, v, d in g.edges(data=True)}
    heights = [_lines(t) * LINE + 0.22 for t in nodes]
    gaps = [max(0.42, _lines(edges[i][2]) * LINE + 0.2) if i in edges else 0
            for i in range(n)]
    total = sum(heights) + sum(gaps) + 0.45
    width = 8.0  # provisional: fixed below once the texts are measured
    fig = draw.figure(width, total)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)  # one data unit is one inch, in both directions
    ax.set_ylim(-total, 0)
    ax.axis("off")
    texts = []
    y = -0.2
    spans = []
    for i in range(n):
        y -= gaps[i]
        d = g.nodes[i]
        color, face = draw.INK, draw.BOX
        if d["initial"]:
            color = draw.INIT
        if d["violating"]:
            color, face = draw.FAULT, draw.VIOLATION_BG
        texts.append(ax.text(0.3, y - 0.12, nodes[i], va="top", ha="left", fontsize=8.5,
                             family="DejaVu Sans Mono", color=draw.INK, linespacing=1.3,
                             bbox=dict(boxstyle="round,pad=0.35", fc=face, ec=color,
                                       lw=2 if d["initial"] or d["violating"] else 1)))
        spans.append((y, y - heights[i]))
        y -= heights[i]
    for v, (u, d, text) in edges.items():
        top, bottom = spans[u][1] - 0.04, spans[v][0] - 0.04
        color = draw.FAULT if _crash(d) else draw.ACCENT
        ax.annotate("", xy=(0.55, bottom), xytext=(0.55, top),
                    arrowprops=dict(arrowstyle="-|>", color=color, lw=1.4))
        texts.append(ax.text(0.75, (top + bottom) / 2, text, va="center", ha="left",
                             fontsize=8.5, color=color, style="italic", linespacing=1.3))
    width = max(3.0, draw.right_edge(fig, texts) + 0.35)
    fig.set_size_inches(width, total)
    ax.set_xlim(0, width)
    return draw.save(fig, stem)


def _lines(text: str) -> int:
    return text.count("\n") + 1


def _wrap(text: str, width: int) -> str:
    """Wrap at spaces only (continuation lines indented): nothing is ever cut."""
    return "\n".join(textwrap.wrap(text, width=width, break_long_words=False,
                                   break_on_hyphens=False, subsequent_indent="  ")) or text


def _q(text) -> str:
    """A DOT double-quoted string; newlines become left-justified line breaks."""
    s = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + s.replace("\n", "\\l") + ('\\l"' if "\n" in s else '"')


def _crash(edge) -> bool:
    """Red is for faults that are not requests (crash, restart, failover): some models
    also count admin requests as faults."""
    return bool(edge.get("fault")) and not edge.get("message")


# --- state summaries in words ------------------------------------------------------------
# A node of the picture names what changed in words, grouped by the component that owns the
# fields: "broker-2: status up → down", "store topic A partition 0: isr removed 2".

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_IDENT = ("name", "id", "kind", "type")  # keys that name an element of a collection
ARROW, ELLIPSIS = "→", "…"


def state_summary(changes: list, state, *, prev=None, lanes=(), limit: int = 4,
                  per_line: int = 3, more: str = "more components changed") -> list[str]:
    """At most ``limit`` lines (one per owning component, then "+k more"), each with at
    most ``per_line`` changes in words; ``state`` (and ``prev``) resolve list indices to
    names (a topic's name, a message's kind, a lane such as broker-2)."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for c in changes:
        where, leaf = _place(c["path"], state, prev, lanes)
        if not where:  # a top-level field owns itself: "net: added LeaderAndIsr"
            where, leaf = leaf, ""
        groups.setdefault(where, []).append((leaf, _change(c)))
    lines = []
    for where, items in groups.items():
        items.sort(key=lambda x: not x[0])  # named fields first, bare list slots after
        phrases = [f"{leaf} {what}".strip() for leaf, what in items]
        shown = "; ".join(phrases[:per_line])
        if len(phrases) > per_line:
            shown += f"; +{len(phrases) - per_line} more"
        lines.append(f"{where}: {shown}")
    if limit and len(lines) > limit:
        rest = len(lines) - limit + 1
        lines = lines[:limit - 1] + [f"+{rest} {more}"]
    return lines


def initial_summary(state, lanes=(), limit: int = 4) -> list[str]:
    """The initial state in the same words: its leaves, grouped by owner."""
    leaves = [{"path": p, "set": v} for p, v in flatten(state)]
    return ["initial state"] + state_summary(leaves, state, lanes=lanes, limit=limit,
                                             more="more components")


def _place(path: str, state, prev, lanes) -> tuple[str, str]:
    """(owner in words, leaf in words) for a diff path such as ``brokers[1].status``."""
    tokens = [(k, int(i) if i else None) for k, i in _TOKEN.findall(path or "")]
    words, leaf = [], "state" if not tokens else ""
    cur = [state, prev]
    name = ""
    for n, (key, idx) in enumerate(tokens):
        last = n == len(tokens) - 1
        if idx is None:
            cur = [x.get(key) if isinstance(x, dict) else None for x in cur]
            name = key
            if last:
                leaf = key.replace("_", " ")
            elif tokens[n + 1][1] is None:
                words.append(key.replace("_", " "))
            continue
        seq = next((x for x in cur if isinstance(x, list) and idx < len(x)), None)
        elem = seq[idx] if seq is not None else None
        cur = [x[idx] if isinstance(x, list) and idx < len(x) else None for x in cur]
        if isinstance(elem, list) or last:  # a tuple-like entry or a list slot: keep the index
            label = f"{name}[{idx}]"
            rest = [k for k, i in tokens[n + 1:] if i is None]
            if last or not rest:
                return " ".join(words), label
            return " ".join(words + [label]), rest[-1].replace("_", " ")
        words.append(_element(name, idx, elem, seq, lanes))
    return " ".join(words), leaf


def _element(name: str, idx: int, elem, seq, lanes) -> str:
    one = _singular(name)
    if isinstance(elem, dict):
        for k in _IDENT:
            if isinstance(elem.get(k), (str, int)) and not isinstance(elem.get(k), bool):
                return f"{one} {elem[k]}" if k in ("name", "id") else str(elem[k])
    named = [x for x in lanes if x.startswith(one + "-")]
    if seq is not None and len(named) == len(seq):
        return named[idx]  # brokers[1] -> broker-2 when the model has one lane per broker
    return f"{one} {idx}"


def _singular(name: str) -> str:
    if name.endswith("ies") and len(name) > 4:
        return name[:-3] + "y"
    if name.endswith("s") and not name.endswith(("ss", "us")) and len(name) > 3:
        return name[:-1]
    return name


def _change(c: dict) -> str:
    if "set" in c:
        return _words(c["set"])
    if "added" in c:
        parts = [f"{verb} {_some(c[key])}" for verb, key in (("added", "added"),
                                                              ("removed", "removed")) if c[key]]
        return ", ".join(parts) or "reordered"
    if c.get("old") is None:
        return f"set to {_words(c.get('new'))}"
    if c.get("new") is None:
        return f"cleared (was {_words(c['old'])})"
    return f"{_words(c['old'])} {ARROW} {_words(c['new'])}"


def _some(items: list, most: int = 3) -> str:
    shown = ", ".join(_words(x) for x in items[:most])
    return shown + (f" +{len(items) - most} more" if len(items) > most else "")


def _words(v, depth: int = 0) -> str:
    """A value as a reader says it: strings bare, lists of plain values inline, records
    by their name or kind, else by their first few fields."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (str, int, float)):
        return str(v)
    if isinstance(v, dict):
        for k in _IDENT:
            if isinstance(v.get(k), (str, int)) and not isinstance(v.get(k), bool):
                return str(v[k])
        plain = [(k, x) for k, x in v.items() if isinstance(x, (str, int, float)) and x != ""]
        text = ", ".join(f"{k.replace('_', ' ')} {x}" for k, x in plain[:3])
        return f"({text}{', ' + ELLIPSIS if len(v) > 3 else ''})" if text else "a record"
    if isinstance(v, list):
        if all(x is None or isinstance(x, (str, int, float)) for x in v):
            return "[" + ", ".join(_words(x) for x in v) + "]"
        if depth < 3:
            inner = [_words(x, depth + 1) for x in v if isinstance(x, (dict, list))]
            named = [x for x in inner if not x.startswith(("[", "(")) and x != "a record"]
            if named:
                return " ".join(named)
        return f"{len(v)} entries"
    return str(v)
