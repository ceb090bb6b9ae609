"""The message-sequence picture of a trace: one lane per component (controllers, the
metadata store, brokers, clients), one row per step. A message is an arrow from the
sending lane to the receiving lane, labelled with the model's message label (wrapped, never
cut) and, in small print, the action that sent or delivered it; a local step is a box on
its actor's lane; faults (crash, restart, failover) are red crosses; the violating step is
highlighted. Drawn from the trace document alone.
"""
from __future__ import annotations

import textwrap

from kmc.reports import draw

TOP = 0.62  # header height, inches
LEFT = 0.45  # step-number column
CHAR = 0.054  # inches per character at 8 pt (DejaVu Sans averages a little less)
LINE = 0.135  # inches per text line at 8 pt
MIN_GAP, MAX_GAP = 1.3, 2.6  # lane spacing bounds


def lanes_of(doc: dict) -> list[str]:
    """The model's lanes (in its display order) plus any actor or endpoint the trace
    uses that the model did not list, in order of first appearance. When the model lists
    many lanes, the ones the trace never touches are dropped."""
    out = [str(x) for x in doc.get("lanes") or []]
    used = _used(doc["steps"][1:])
    out += [x for x in used if x not in out]
    return out if len(out) <= 6 else [x for x in out if x in used]


def _used(steps) -> list[str]:
    """Lanes the steps touch, in order of first appearance."""
    used = []
    for st in steps:
        msg = st.get("message")
        for name in ([msg["from"], msg["to"]] if msg else []) + [st.get("actor") or "system"]:
            if name not in used:
                used.append(name)
    return used


def draw_sequence(doc: dict, stem: str) -> dict:
    """Write ``stem.png`` and ``stem.svg``; returns format -> path."""
    steps = doc["steps"][1:]
    lanes = lanes_of(doc)
    col = {name: i for i, name in enumerate(lanes)}
    gap = _gap(steps, col)
    x_of = {name: LEFT + gap * (0.5 + i) for i, name in enumerate(lanes)}
    rows = [_plan(st, col, gap) for st in steps]
    width = LEFT + gap * len(lanes) + 0.1
    body = sum(r["height"] for r in rows)
    height = TOP + body + (0.75 if doc.get("detail") is not None else 0.55)
    fig = draw.figure(width, height)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(-height, 0)
    ax.axis("off")
    bottom = -(TOP + body + 0.05)
    used = _used(steps)
    for name, x in x_of.items():
        ax.plot([x, x], [-TOP + 0.12, bottom], color=draw.LANE, lw=1, ls=(0, (4, 3)),
                zorder=0)
        ax.text(x, -TOP / 2, name, ha="center", va="center", fontsize=9,
                fontweight="bold", color=draw.INK if name in used else draw.MUTED,
                bbox=dict(boxstyle="round,pad=0.35", fc=draw.BOX, ec=draw.LANE))
    bad = doc.get("kind") != "sometimes"
    y = -TOP
    for k, (st, row) in enumerate(zip(steps, rows), start=1):
        if k == len(steps):
            ax.axhspan(y - row["height"], y, color=draw.VIOLATION_BG if bad else "#e3f4ea",
                       zorder=-1, lw=0)
        _draw_row(ax, st, row, y, x_of, k)
        y -= row["height"]
    verdict = "violated" if bad else "witness found"
    loop = doc.get("loop_start")
    if loop is not None:  # a lasso: how the behaviour goes on
        verdict += f", stays at step {loop}" if loop == len(steps) else \
            f", repeats from step {loop}"
    foot = ax.text(LEFT, bottom - 0.15, f"step {len(steps)}: {doc.get('property')} "
                   f"{verdict}", ha="left", va="top", fontsize=9, fontweight="bold",
                   color=draw.FAULT if bad else draw.INIT)
    # the verdict line is never cut: with few lanes (or none, a lasso that stops at its
    # initial state) it is wider than they are, and the figure grows to the right for it
    right = draw.right_edge(fig, [foot]) + 0.15
    if right > width:
        width = right
        fig.set_size_inches(width, height)
        ax.set_xlim(0, width)
    if doc.get("detail") is not None:
        why = doc.get("explanation") or f"offending: {_detail(doc['detail'])}"
        text = ax.text(LEFT, bottom - 0.38, draw.clip(why, int((width - LEFT) / CHAR)),
                       ha="left", va="top", fontsize=8, color=draw.FAULT)
        keep = len(text.get_text())  # CHAR is an average: cut further until it fits
        while keep > 8 and draw.right_edge(fig, [text]) > width - 0.05:
            keep = int(keep * 0.9)
            text.set_text(draw.clip(why, keep))
    return draw.save(fig, stem)


def _gap(steps, col) -> float:
    """Lane spacing: wide enough for most labels on one line, within bounds."""
    need = [max(len(x) for x in col) * CHAR + 0.3 if col else MIN_GAP]
    for st in steps:
        msg = st.get("message")
        if msg and msg["from"] != msg["to"]:
            span = abs(col[msg["from"]] - col[msg["to"]])
            need.append(min(len(msg["label"]), 60) * CHAR / span + 0.25)
    return min(MAX_GAP, max(MIN_GAP, max(need)))


def _plan(st, col, gap) -> dict:
    """What one row shows and how tall it is."""
    msg = st.get("message")
    action = st.get("action") or ""
    if msg and msg["from"] != msg["to"]:
        span = abs(col[msg["from"]] - col[msg["to"]])
        lines = _wrap(msg["label"], (span * gap - 0.2) / CHAR)
        # the action in small print, unless it only repeats the label (a delivery)
        small = action if action and msg["label"] not in action else ""
        return {"kind": "arrow", "lines": lines, "small": small,
                "height": 0.22 + LINE * len(lines) + (0.13 if small else 0.02)}
    lane = msg["to"] if msg else (st.get("actor") or "system")
    text = msg["label"] if msg else action
    if st.get("fault"):
        return {"kind": "fault", "lane": lane, "lines": _wrap(text, 1.6 * gap / CHAR),
                "height": 0.2 + LINE * max(1, len(_wrap(text, 1.6 * gap / CHAR)))}
    lines = _wrap(text, (gap - 0.25) / CHAR)
    return {"kind": "box", "lane": lane, "lines": lines, "height": 0.26 + LINE * len(lines)}


def _draw_row(ax, st, row, top, x_of, k):
    # arrows stay blue even for fault actions: some models count admin requests as
    # faults (not protocol steps); the red cross is for crashes, restarts and failovers
    color = draw.ACCENT
    text = "\n".join(row["lines"])
    if row["kind"] == "arrow":
        msg = st["message"]
        x0, x1 = x_of[msg["from"]], x_of[msg["to"]]
        y = top - 0.1 - LINE * len(row["lines"]) - 0.04
        ax.text(0.12, y, str(k), ha="left", va="center", fontsize=8, color=draw.MUTED)
        ax.annotate("", xy=(x1, y), xytext=(x0, y),
                    arrowprops=dict(arrowstyle="-|>", color=color, lw=1.3,
                                    shrinkA=2, shrinkB=2))
        ax.text((x0 + x1) / 2, y + 0.04, text, ha="center", va="bottom", fontsize=8,
                color=draw.INK, linespacing=1.15)
        if row["small"]:
            ax.text((x0 + x1) / 2, y - 0.04, draw.clip(row["small"], int(abs(x1 - x0) /
                                                                           0.05)),
                    ha="center", va="top", fontsize=6.5, color=draw.MUTED)
        return
    y = top - row["height"] / 2
    ax.text(0.12, y, str(k), ha="left", va="center", fontsize=8, color=draw.MUTED)
    x = x_of[row["lane"]]
    if row["kind"] == "fault":
        ax.plot([x], [y], marker="X", markersize=9, color=draw.FAULT, zorder=3)
        last_lane = x == max(x_of.values()) and len(x_of) > 1
        ax.text(x - 0.14 if last_lane else x + 0.14, y, text, va="center", fontsize=8,
                ha="right" if last_lane else "left", color=draw.FAULT, fontweight="bold",
                linespacing=1.15)
        return
    ax.text(x, y, text, ha="center", va="center", fontsize=8, color=draw.INK, zorder=3,
            linespacing=1.15, bbox=dict(boxstyle="round,pad=0.25", fc="white", ec=color,
                                        lw=1))


def _wrap(text: str, width: float) -> list[str]:
    """Wrap at spaces only: a label is never cut, and its lines joined by single spaces
    give it back."""
    return textwrap.wrap(text, width=max(12, int(width)), break_long_words=False,
                         break_on_hyphens=False) or [text]


def _detail(detail) -> str:
    import json
    return detail if isinstance(detail, str) else json.dumps(detail, default=str)
