"""The counterexample as a graph: a networkx DiGraph with one node per trace state
(labelled with the fields that changed) and one edge per action (labelled with the
action, its actor and its message), exported as DOT, GraphML and node-link JSON and drawn
to PNG/SVG.
"""
from __future__ import annotations

import json

import networkx as nx

from kmc.reports import draw
from kmc.reports.show import change_lines, flatten


def trace_graph(doc: dict) -> nx.DiGraph:
    """Nodes are step indices 0..n; attributes hold only str/int/bool (GraphML-safe)."""
    steps = doc["steps"]
    last = len(steps) - 1
    bad = doc.get("kind") != "sometimes"
    g = nx.DiGraph(scenario=str(doc.get("scenario")), variant=str(doc.get("variant")),
                   property=str(doc.get("property")), kind=str(doc.get("kind")))
    for i, st in enumerate(steps):
        changed = change_lines(st.get("changed") or [], 80) if i else _initial(st["state"])
        head = f"step {i}"
        if i == last:
            head += f": {doc.get('property')} {'violated' if bad else 'witness'}"
        g.add_node(i, label="\n".join([head] + changed),
                   changed="\n".join(changed), fingerprint=str(st.get("fingerprint") or ""),
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
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def write_graphml(g: nx.DiGraph, path: str) -> str:
    nx.write_graphml(g, path)
    return path


def write_node_link(g: nx.DiGraph, path: str) -> str:
    with open(path, "w") as f:
        json.dump(nx.node_link_data(g, edges="edges"), f, indent=1)
    return path


def draw_trace_graph(g: nx.DiGraph, stem: str) -> dict:
    """A vertical chain of boxes (states: step + changed fields) joined by arrows
    labelled with the actions; the violating state is red, the initial one green."""
    n = g.number_of_nodes()
    heights = [max(1, len(g.nodes[i]["label"].split("\n"))) for i in range(n)]
    gap = 0.42  # inches between boxes, room for the action label
    total = sum(h * 0.155 + 0.2 for h in heights) + gap * (n - 1) + 0.3
    widest = max(len(line) for i in range(n) for line in g.nodes[i]["label"].split("\n"))
    arrows = max((len(d["label"]) + len(d["actor"]) + len(d["message"]) for _u, _v, d in
                  g.edges(data=True)), default=0)
    width = min(14.0, max(3.0, 0.6 + min(widest, 90) * 0.072, 1.0 + min(arrows, 110) * 0.07))
    fig = draw.figure(width, max(2.0, total))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(-total, 0)
    ax.axis("off")
    y = -0.2
    centers = []
    for i in range(n):
        d = g.nodes[i]
        h = heights[i] * 0.155 + 0.2
        color, face = draw.INK, draw.BOX
        if d["initial"]:
            color = draw.INIT
        if d["violating"]:
            color, face = draw.FAULT, draw.VIOLATION_BG
        ax.text(0.3, y - 0.12, _node_text(d["label"]), va="top", ha="left", fontsize=8.5,
                family="DejaVu Sans Mono", color=draw.INK,
                bbox=dict(boxstyle="round,pad=0.35", fc=face, ec=color,
                          lw=2 if d["initial"] or d["violating"] else 1))
        centers.append((y, y - h))
        y -= h + gap
    for u, v, d in g.edges(data=True):
        top, bottom = centers[u][1] - 0.02, centers[v][0] - 0.02
        color = draw.FAULT if _crash(d) else draw.ACCENT
        ax.annotate("", xy=(0.55, bottom), xytext=(0.55, top),
                    arrowprops=dict(arrowstyle="-|>", color=color, lw=1.4))
        label = (f"[{d['actor']}] " if d["actor"] else "") + d["label"]
        if d["message"] and d["message"].split(": ", 1)[-1] not in d["label"]:
            label += "   (" + d["message"] + ")"  # unless the action already says it
        ax.text(0.75, (top + bottom) / 2, draw.clip(label, 110), va="center", ha="left",
                fontsize=8.5, color=color, style="italic")
    return draw.save(fig, stem)


def _node_text(label: str) -> str:
    lines = label.split("\n")
    return "\n".join(draw.clip(x, 90) for x in lines)


def _q(text) -> str:
    """A DOT double-quoted string; newlines become left-justified line breaks."""
    s = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + s.replace("\n", "\\l") + ('\\l"' if "\n" in s else '"')


def _initial(state, limit: int = 8) -> list[str]:
    leaves = [f"{p} = {json.dumps(v, default=str)}" for p, v in flatten(state)]
    more = [f"... {len(leaves) - limit} more fields"] if len(leaves) > limit else []
    return ["initial state"] + leaves[:limit] + more


def _crash(edge) -> bool:
    """Red is for faults that are not requests (crash, restart, failover): some models
    also count admin requests as faults."""
    return bool(edge.get("fault")) and not edge.get("message")
