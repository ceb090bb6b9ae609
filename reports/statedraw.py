"""Drawing of ``reports.statespace`` graphs: one column per BFS layer (or trace step),
the counterexample path along the top row in bold, the branches not taken below it,
initial states ringed green and violating states filled red."""
from __future__ import annotations

import math

from kmc.reports import draw

COL = 1.35  # inches per column
ROW = 0.55  # inches per row
VROW = 0.5  # inches per step when the path runs top to bottom
WIDE = 9  # more columns than this: draw top to bottom
OTHER = "#fbe3b8"  # fill of states that violate another property than the one traced


def layout(g) -> dict:
    """node -> (column, row): path nodes on row 0, the others below, each column's
    nodes ordered by the mean row of their predecessors (fewer crossings)."""
    cols: dict[int, list] = {}
    for n, d in g.nodes(data=True):
        cols.setdefault(d["layer"], []).append(n)
    pos = {}
    for c in sorted(cols):
        nodes = cols[c]
        path = [n for n in nodes if g.nodes[n]["on_path"]]
        rest = [n for n in nodes if not g.nodes[n]["on_path"]]

        def bary(n):
            rows = [pos[p][1] for p in g.predecessors(n) if p in pos]
            return (sum(rows) / len(rows) if rows else 1e9, g.nodes[n].get("order", 0))
        for i, n in enumerate(rest):
            g.nodes[n]["order"] = i  # stable tie-break: insertion order (deterministic)
        rest.sort(key=bary)
        # row 0 belongs to the path, even in columns the path does not reach
        first = 0 if path or not any(d["on_path"] for _n, d in g.nodes(data=True)) else 1
        for r, n in enumerate(sorted(path, key=lambda n: g.nodes[n]["step"]) + rest,
                              start=first):
            pos[n] = (c, r)
    return pos


def draw_state_graph(g, stem: str, *, title: str = "", subtitle: str = "",
                     prop: str = "", format_state=None) -> dict:
    """Columns left to right for short paths; a long path (more than ``WIDE`` columns)
    runs top to bottom instead, with its action labels on the left, so the picture stays
    readable at page width."""
    pos = layout(g)
    ncols = max(c for c, _ in pos.values()) + 1
    nrows = max(r for _, r in pos.values()) + 1
    labels = {}
    if format_state is not None and g.number_of_nodes() <= 40:
        labels = {n: format_state(n) for n in g}
        if max(len(v) for v in labels.values()) > 22:
            labels = {}
    vertical = ncols > WIDE and not labels
    path_labels = [d.get("label", "") for _u, _v, d in g.edges(data=True) if d["on_path"]]
    if vertical:
        margin = min(60, max([len(x) for x in path_labels] + [6])) * 0.058 + 0.45
        branch = 1.75  # room for a node and its action label
        width = margin + 0.2 + branch * (nrows - 1) + (1.6 if nrows > 1 else 0.4)
        height = ncols * VROW + 1.7

        def xy(n):
            c, r = pos[n]
            return margin + 0.2 + branch * r, -1.25 - VROW * c
    else:
        col = max(COL, max((len(v) for v in labels.values()), default=0) * 0.062 + 0.45)
        width, height = ncols * col + (0.6 if labels else 1.6), nrows * ROW + 1.75

        def xy(n):
            c, r = pos[n]
            return 0.3 + col * (c + 0.5), -1.25 - ROW * r
    width = max(width, 5.5, len(title) * 0.09 + 0.6)  # the title must fit too
    fig = draw.figure(width, height)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(-height, 0)
    ax.axis("off")
    hidden = [0, 0]  # edges back (or sideways) and self-loops left undrawn
    for u, v, d in g.edges(data=True):
        (x0, y0), (x1, y1) = xy(u), xy(v)
        bold = d["on_path"]
        if not bold and pos[v][0] != pos[u][0] + 1:
            hidden[u == v] += 1  # they would cross everything: counted in the caption
            continue
        sa = _exit(labels.get(u), x1 - x0, y1 - y0)
        sb = _exit(labels.get(v), x1 - x0, y1 - y0)
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                    arrowprops=dict(arrowstyle="-|>", lw=2.4 if bold else 0.7,
                                    color=draw.ACCENT if bold else "#9aa5b1",
                                    shrinkA=sa, shrinkB=sb, mutation_scale=10 if bold else 7),
                    zorder=2 if bold else 1)
        if not (bold and d.get("label")):
            continue
        if vertical:
            ax.text(x0 - 0.22, (y0 + y1) / 2, draw.clip(d["label"], 60), ha="right",
                    va="center", fontsize=7.5, color=draw.ACCENT)
        else:
            tier = 0.16 if g.nodes[u]["step"] % 2 == 0 else 0.32
            ax.text((x0 + x1) / 2, y0 + tier, draw.clip(d["label"], int(col / 0.058)),
                    ha="center", va="bottom", fontsize=7.5, color=draw.ACCENT)
    for n, d in g.nodes(data=True):
        x, y = xy(n)
        face = "#f6c6c1" if d["violating"] else (OTHER if d["violates"] else (
            "white" if d["on_path"] else "#e6eaee"))
        edge = draw.INIT if d["initial"] else (draw.FAULT if d["violating"] else
                                               (draw.ACCENT if d["on_path"] else "#9aa5b1"))
        lw = 2.2 if d["initial"] or d["on_path"] else 0.8
        if labels:
            ax.text(x, y, labels[n], ha="center", va="center", fontsize=7.5, zorder=4,
                    fontweight="bold" if d["on_path"] else "normal",
                    bbox=dict(boxstyle="round,pad=0.3", fc=face, ec=edge, lw=lw))
        else:
            size = 15 if d["on_path"] else 8
            ax.plot([x], [y], marker="o", markersize=size, mfc=face, mec=edge, mew=lw,
                    zorder=4)
            if d["on_path"]:
                ax.text(x, y, str(d["step"]), ha="center", va="center", fontsize=7,
                        zorder=5, fontweight="bold")
        if not labels and not d["on_path"] and g.graph["mode"] != "full":
            into = [e for e in g.in_edges(n, data=True) if pos[e[0]][0] == pos[n][0] - 1]
            if len(into) == 1:  # name the branch not taken
                room = 1.45 if vertical else col
                ax.text(x + 0.12, y, draw.clip(into[0][2].get("label", ""), int(room / 0.05)),
                        ha="left", va="center", fontsize=6.5, color=draw.MUTED)
        if d.get("omitted"):
            ax.text(x, y - 0.22, f"+{d['omitted']} more", ha="center", va="top",
                    fontsize=6.5, color=draw.MUTED)
    _legend(ax, g, title, subtitle, prop, height, hidden)
    return draw.save(fig, stem)


def _legend(ax, g, title, subtitle, prop, height, hidden):
    n = g.number_of_nodes()
    if g.graph["mode"] == "full":
        scope = (f"whole reachable graph: {n} states, {g.number_of_edges()} transitions "
                 "(distinct state pairs)")
    else:
        scope = f"neighbourhood of the counterexample: {n} states shown"
        if g.graph["omitted"]:
            scope += f", {_n(g.graph['omitted'], 'more successor')} not drawn"
    back, loops = hidden
    undrawn = ([_n(back, "transition") + " back to earlier columns"] if back else []) + \
        ([_n(loops, "self-loop")] if loops else [])
    if undrawn:
        scope += f"; {' and '.join(undrawn)} not drawn"
    ax.text(0.3, -0.22, title, ha="left", va="center", fontsize=10, fontweight="bold")
    if subtitle:
        scope = f"{subtitle} · {scope}"
    ax.text(0.3, -0.5, draw.wrap(scope, int((ax.get_xlim()[1] - 0.5) / 0.056)), ha="left",
            va="center", fontsize=8,
            color=draw.MUTED)
    items = [("initial state", "white", draw.INIT),
             ("counterexample path", "white", draw.ACCENT),
             (f"violates {prop}" if prop else "violates a property", "#f6c6c1", draw.FAULT)]
    if prop and any(d["violates"] and not d["violating"] for _n, d in g.nodes(data=True)):
        items.append(("violates another property", OTHER, "#9aa5b1"))
    x = 0.35
    for text, face, edge in items:
        ax.plot([x], [-height + 0.3], marker="o", markersize=8, mfc=face, mec=edge, mew=2)
        ax.text(x + 0.15, -height + 0.3, text, ha="left", va="center", fontsize=8)
        x += 0.35 + len(text) * 0.07


def _exit(label, dx, dy) -> float:
    """Points from a node's centre to where an edge leaves it: the node's circle, or the
    border of its label box (so arrowheads are not hidden under the box)."""
    if not label:
        return 9.0
    w, h = len(label) * 0.031 + 0.06, 0.1  # half-width and half-height in inches
    norm = math.hypot(dx, dy) or 1.0
    cos, sin = abs(dx) / norm, abs(dy) / norm
    return 72 * min(w / cos if cos else 1e9, h / sin if sin else 1e9) + 2


def _n(k: int, noun: str) -> str:
    return f"{k} {noun}{'' if k == 1 else 's'}"
