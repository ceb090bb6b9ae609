"""Every picture and export of one trace document, written next to each other:

    graph-P.dot / .graphml / .json / .png / .svg   the counterexample graph
    sequence-P.png / .svg                          the message-sequence picture
    states-P.png / .svg                            the explored state graph (needs the model)
    replay-P.py                                    the runnable replay snippet
"""
from __future__ import annotations

import contextlib
import fcntl
import os

from kmc.reports.inputs import write_atomic
from kmc.reports.graph import draw_trace_graph, trace_graph, write_dot, write_graphml, \
    write_node_link
from kmc.reports.sequence import draw_sequence
from kmc.reports.snippet import python_snippet
from kmc.reports.summary import slug  # noqa: F401  (also the HTML report's anchors)

#: state graphs are drawn whole up to this many states, else cut to the neighbourhood
STATE_GRAPH_LIMIT = 60
#: pictures are drawn for counterexamples of at most this many states: a longer one would
#: be a picture tens of thousands of pixels tall that takes minutes to draw (and past
#: Pillow's limit, one that cannot be read back); its steps are in the trace file, the
#: report's table and ``kmc show``, and its graph exports are written all the same
DRAWN_STATES = 400

#: what a ``kmc check --out`` run writes per property P (``P`` its ``slug``), besides
#: summary.json and index.html: what ``clear_earlier_run`` removes
RUN_FILES = ("trace-{}.json", "graph-{}.dot", "graph-{}.graphml", "graph-{}.json",
             "graph-{}.png", "graph-{}.svg", "sequence-{}.png", "sequence-{}.svg",
             "states-{}.png", "states-{}.svg", "replay-{}.py")
RUN_PAGES = ("summary.json", "index.html")


@contextlib.contextmanager
def held(out_dir: str):
    """``out_dir`` made and held (an exclusive lock on the directory itself, no file
    added) while one run replaces the files there: two runs writing into one directory
    at once take turns, so the last one's files stand whole, never a mix of both."""
    os.makedirs(out_dir, exist_ok=True)
    fd = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the other run's writes take a second at most
        yield
    finally:
        os.close(fd)  # closing releases the lock


def clear_earlier_run(out_dir: str) -> list:
    """Remove the files an earlier run wrote into ``out_dir`` for the properties its
    summary.json names, and its summary.json and index.html, so that no file of another
    scenario stays beside this run's; any other file is left alone. Returns the removed
    paths."""
    import json

    try:
        with open(os.path.join(out_dir, "summary.json")) as f:
            names = list(json.load(f).get("properties") or ())
    except (OSError, ValueError, AttributeError, TypeError):
        return []  # no summary of an earlier run (or not one of kmc's): nothing is kmc's
    return remove_run_files(out_dir, names)


def remove_run_files(out_dir: str, names) -> list:
    """Remove the files a run writes for the properties ``names`` (``RUN_FILES``) and
    its summary.json and index.html."""
    files = list(RUN_PAGES) + [pattern.format(slug(name)) for name in names
                               if isinstance(name, str) and name for pattern in RUN_FILES]
    removed = []
    for path in (os.path.join(out_dir, f) for f in files):
        if os.path.isfile(path) and not os.path.islink(path):
            os.remove(path)
            removed.append(path)
    return removed


def write_artifacts(doc: dict, out_dir: str, *, model=None, trace_path=None) -> dict:
    """Write the files above for ``doc``; returns kind -> path (kinds: dot, graphml,
    node_link, graph_png, graph_svg, sequence_png, sequence_svg, snippet, and with a
    model states_png, states_svg). When a file cannot be written (or the writing is
    interrupted), the files that were not there before are removed again, and the
    directory if it was made for them: no half set of pictures is left."""
    s = slug(doc["property"])
    made = not os.path.isdir(out_dir)
    ours = [os.path.join(out_dir, p.format(s)) for p in RUN_FILES if p != "trace-{}.json"]
    new = [p for p in ours if not os.path.lexists(p)]
    try:
        return _write_artifacts(doc, out_dir, s, model, trace_path)
    except BaseException:
        for path in new:
            if os.path.isfile(path) and not os.path.islink(path):
                os.remove(path)
        if made and os.path.isdir(out_dir) and not os.listdir(out_dir):
            os.rmdir(out_dir)
        raise


def drawn(doc: dict) -> bool:
    """Whether the pictures of ``doc`` are drawn (``DRAWN_STATES``)."""
    return len(doc["steps"]) <= DRAWN_STATES


def not_drawn(doc: dict) -> str:
    """Why a trace has no pictures, in words."""
    return (f"no pictures: the counterexample has {len(doc['steps']):,} states, and pictures "
            f"are drawn up to {DRAWN_STATES} (its steps: kmc show)")


def _write_artifacts(doc: dict, out_dir: str, s: str, model, trace_path) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    out = {}
    g = trace_graph(doc)
    out["dot"] = write_dot(g, os.path.join(out_dir, f"graph-{s}.dot"))
    out["graphml"] = write_graphml(g, os.path.join(out_dir, f"graph-{s}.graphml"))
    out["node_link"] = write_node_link(g, os.path.join(out_dir, f"graph-{s}.json"))
    if drawn(doc):
        for fmt, path in draw_trace_graph(g, os.path.join(out_dir, f"graph-{s}")).items():
            out[f"graph_{fmt}"] = path
        for fmt, path in draw_sequence(doc, os.path.join(out_dir, f"sequence-{s}")).items():
            out[f"sequence_{fmt}"] = path
    snippet = os.path.join(out_dir, f"replay-{s}.py")
    write_atomic(snippet, python_snippet(doc))
    out["snippet"] = snippet
    if model is not None and drawn(doc):
        out.update(write_state_graph(doc, model, out_dir))
    return out


def write_state_graph(doc: dict, model, out_dir: str) -> dict:
    """The explored graph around the trace; {} when the trace no longer replays."""
    from kmc.model.trace import ReplayError, Trace
    from kmc.reports.statedraw import draw_state_graph
    from kmc.reports.statespace import state_graph

    try:
        trace = Trace.from_dict(model, doc)
    except ReplayError:
        return {}
    prop = doc["property"]
    g = state_graph(model, trace.states, limit=STATE_GRAPH_LIMIT,
                    prop=None if doc.get("kind") == "sometimes" else prop)
    title = f"{doc['scenario']} [{doc['variant']}]: {prop}"
    params = " ".join(f"{k}={v}" for k, v in (doc.get("params") or {}).items())
    stem = os.path.join(out_dir, f"states-{slug(prop)}")
    pics = draw_state_graph(g, stem, title=title, subtitle=params, prop=prop,
                            format_state=model.format_state)
    return {f"states_{fmt}": p for fmt, p in pics.items()}
