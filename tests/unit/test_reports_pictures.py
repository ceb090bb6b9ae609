"""Pictures and graph exports: structure, not pixels."""
import json
import struct
import xml.etree.ElementTree as ET
from typing import NamedTuple

import networkx as nx
import pytest

from kmc.explorers.bfs import bfs
from kmc.invariants.properties import always
from kmc import api
from kmc.model.contract import Model
from kmc.reports.artifacts import write_artifacts
from kmc.reports.graph import draw_trace_graph, state_summary, trace_graph, write_dot, \
    write_graphml, write_node_link
from kmc.reports.statespace import FULL, NEIGHBOURHOOD, state_graph


class Net(NamedTuple):
    epoch: int  # the controller's leader epoch
    up: bool
    restarted: bool
    broker_epoch: int
    inflight: tuple
    fetched: int


class Ping(Model):
    """A tiny protocol with lanes, messages and faults: a broker that crashes and serves a
    Fetch before it applied the controller's LeaderAndIsr is stale."""
    name = "ping"

    def init_states(self):
        return [Net(0, True, False, 0, (), 0)]

    def actions(self, s):
        acts = []
        if s.epoch < 1:
            acts.append("SendLeaderAndIsr")
        if s.inflight and s.up:
            acts.append("HandleLeaderAndIsr")
        acts.append("Crash" if s.up else "Restart")
        if s.up and s.restarted and not s.fetched:
            acts.append("Fetch")
        return acts

    def next_state(self, s, a):
        if a == "SendLeaderAndIsr":
            return s._replace(epoch=s.epoch + 1, inflight=(s.epoch + 1,))
        if a == "HandleLeaderAndIsr":
            return s._replace(broker_epoch=s.inflight[0], inflight=())
        if a == "Crash":
            return s._replace(up=False)
        if a == "Restart":
            return s._replace(up=True, restarted=True)
        return s._replace(fetched=s.fetched + 1)

    def properties(self):
        return [always("NoStaleFetch", lambda s: not (s.fetched and s.broker_epoch != s.epoch))]

    def is_fault(self, a):
        return a in ("Crash", "Restart")

    def lanes(self):
        return ["controller", "broker0", "client"]

    def action_actor(self, a):
        return {"SendLeaderAndIsr": "controller", "Fetch": "client"}.get(a, "broker0")

    def action_message(self, a, s=None):
        if a == "SendLeaderAndIsr":
            return ("controller", "broker0", f"LeaderAndIsr FULL epoch={s.epoch + 1}")
        if a == "Fetch":
            return ("client", "broker0", f"Fetch epoch={s.broker_epoch}")
        return None


@pytest.fixture(scope="module")
def ping(tmp_path_factory):
    model = Ping()
    r = bfs(model)
    trace = r.discoveries["NoStaleFetch"].trace
    doc = json.loads(json.dumps(trace.to_dict(model, scenario="ping", variant="test",
                                              params={}, property="NoStaleFetch",
                                              kind="always")))
    out = tmp_path_factory.mktemp("ping")
    return model, trace, doc, write_artifacts(doc, str(out), model=model)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def svg_texts(path):
    root = ET.parse(path).getroot()
    return {"".join(el.itertext()).strip() for el in root.iter()
            if el.tag.endswith("}text") or el.tag == "text"}


def test_the_fixture_trace_has_messages_and_faults(ping):
    _m, _t, doc, _files = ping
    assert any(st["message"] for st in doc["steps"][1:])
    assert any(st["fault"] for st in doc["steps"][1:])


def test_trace_graph_has_one_node_per_state_and_labelled_edges(ping):
    _m, trace, doc, _files = ping
    g = trace_graph(doc)
    assert g.number_of_nodes() == len(trace)
    assert sorted(g.edges) == [(i, i + 1) for i in range(len(trace) - 1)]
    for i, (u, v, d) in enumerate(sorted(g.edges(data=True))):
        assert d["label"] == doc["steps"][v]["action"] and d["actor"]
    assert g.nodes[0]["initial"] and g.nodes[len(trace) - 1]["violating"]
    for i in range(1, len(trace)):
        for c in doc["steps"][i]["changed"]:
            assert c["path"] in g.nodes[i]["label"]
        assert c["path"] in g.nodes[i]["changed"]  # the exact diff stays an attribute


def test_nodes_summarise_what_changed_in_words(ping):
    _m, _t, doc, _files = ping
    g = trace_graph(doc)
    labels = [g.nodes[i]["label"] for i in range(len(g))]
    assert labels[0].startswith("step 0\ninitial state\n")
    # the counterexample every engine picks (smallest keys): Crash, Restart, Fetch, Send
    assert labels[1] == "step 1\nup: yes → no"
    assert labels[2] == "step 2\nup: no → yes\nrestarted: no → yes"
    assert labels[3] == "step 3\nfetched: 0 → 1"
    assert labels[-1] == "step 4: NoStaleFetch violated\nepoch: 0 → 1\ninflight: added 1"
    for label in labels:
        assert not set('{}"') & set(label), label  # words, not JSON


def test_state_summary_groups_changes_by_owner_in_words():
    state = {"store": {"topics": [{"name": "A", "partitions": [{"isr": [1]}]}]},
             "brokers": [{"status": "up"}, {"status": "down", "epoch": 3}],
             "net": [[[-1, 1], [{"kind": "LeaderAndIsr", "dst": 1}]]],
             "budget": {"crashes": 0}, "a": 1, "b": 2, "c": 3}
    changes = [{"path": "brokers[1].status", "old": "up", "new": "down"},
               {"path": "brokers[1].epoch", "old": 2, "new": 3},
               {"path": "store.topics[0].partitions[0].isr", "old": [1, 2], "new": [1],
                "added": [], "removed": [2]},
               {"path": "net", "old": [], "new": state["net"], "added": state["net"],
                "removed": []},
               {"path": "budget.crashes", "old": 1, "new": 0}]
    lanes = ["controller-1", "broker-1", "broker-2"]
    assert state_summary(changes, state, lanes=lanes) == [
        "broker-2: status up → down; epoch 2 → 3",
        "store topic A partition 0: isr removed 2",
        "net: added LeaderAndIsr",
        "budget: crashes 1 → 0"]
    # without lanes to name them, brokers are numbered by position
    assert state_summary(changes[:1], state)[0] == "broker 1: status up → down"
    more = changes + [{"path": k, "old": 0, "new": state[k]} for k in "abc"]
    lines = state_summary(more, state, lanes=lanes, limit=4)
    assert len(lines) == 4 and lines[-1] == "+4 more components changed"  # 7 owners, 3 shown
    assert state_summary(changes[:2], state, lanes=lanes, per_line=1) == [
        "broker-2: status up → down; +1 more"]


def _ink_box(path):
    from PIL import Image, ImageChops
    with Image.open(path) as im:
        rgb = im.convert("RGB")
        return rgb.size, ImageChops.difference(rgb, Image.new("RGB", rgb.size,
                                                              "white")).getbbox()


def test_edge_labels_are_drawn_in_full_and_the_figure_grows_with_them(ping, tmp_path):
    _m, _t, doc, _files = ping
    long_doc = json.loads(json.dumps(doc))
    long_action = ("deliver controller-1->broker-2: LeaderAndIsr ce=1 [A-0 id=7 leader=2 "
                   "le=5 isr=[1, 2, 3] replicas=[1, 2, 3] adding=[] removing=[]] "
                   "for the second incarnation of topic A after its deletion")
    assert len(long_action) > 150
    long_doc["steps"][2]["action"] = long_action
    short = draw_trace_graph(trace_graph(doc), str(tmp_path / "short"))
    wide = draw_trace_graph(trace_graph(long_doc), str(tmp_path / "wide"))
    texts = svg_texts(wide["svg"])
    assert not any("…" in t or "..." in t for t in texts)
    with open(wide["svg"]) as f:
        joined = " ".join(" ".join(t.split()) for t in svg_texts_in_order(f.read()))
    assert long_action in joined  # wrapped at spaces, never cut
    for st in doc["steps"][1:]:
        assert st["action"] in " ".join(svg_texts_in_order(open(short["svg"]).read()))
    (w_short, _h), _ = _ink_box(short["png"])
    (w_wide, h_wide), ink = _ink_box(wide["png"])
    assert w_wide > w_short
    assert ink[2] < w_wide - 5 and ink[3] < h_wide - 5  # nothing touches (or is cut at) an edge


def svg_texts_in_order(svg: str):
    root = ET.fromstring(svg)
    return ["".join(el.itertext()) for el in root.iter() if el.tag.endswith("}text")]


def test_graph_exports_read_back(ping, tmp_path):
    _m, _t, doc, _files = ping
    g = trace_graph(doc)
    back = nx.read_graphml(write_graphml(g, str(tmp_path / "g.graphml")))
    assert back.number_of_nodes() == g.number_of_nodes()
    assert back.number_of_edges() == g.number_of_edges()
    with open(write_node_link(g, str(tmp_path / "g.json"))) as f:
        nl = nx.node_link_graph(json.load(f), edges="edges")
    assert sorted(nl.edges) == sorted(g.edges)
    assert nl.edges[0, 1]["label"] == g.edges[0, 1]["label"]
    dot = open(write_dot(g, str(tmp_path / "g.dot"))).read()
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")
    for u, v in g.edges:
        assert f"  {u} -> {v} [label=" in dot


def test_sequence_svg_names_every_lane_and_message(ping):
    model, _t, doc, files = ping
    texts = svg_texts(files["sequence_svg"])
    for lane in model.lanes():
        assert lane in texts
    labels = [st["message"]["label"] for st in doc["steps"][1:] if st["message"]]
    assert labels and all(label in texts for label in labels)


def test_pngs_are_images_of_sensible_size(ping):
    _m, _t, _doc, files = ping
    for key in ("graph_png", "sequence_png", "states_png"):
        w, h = png_size(files[key])
        assert 150 <= w <= 8000 and 100 <= h <= 8000, (key, w, h)


def test_small_state_graph_is_drawn_whole(ping):
    model, trace, _doc, _files = ping
    g = state_graph(model, trace.states, limit=60)
    assert g.graph["mode"] == FULL
    assert [n for n in g if g.nodes[n]["initial"]] == model.init_states()
    path = sorted((d["step"], n) for n, d in g.nodes(data=True) if d["on_path"])
    assert [n for _k, n in path] == trace.states
    assert all(g.edges[a, b]["on_path"] for a, b in zip(trace.states, trace.states[1:]))
    assert g.nodes[trace.last]["violating"]
    # whole means whole: every successor of every node is in the graph
    assert all(t in g for s in g for _a, t in model.successors(s))


def test_large_state_graph_is_cut_to_the_counterexample_neighbourhood():
    r = api.check("twophase", "broken-commit", {"rm": 3})
    model, trace = r.extra["model"], r.discoveries["TCConsistent"].trace
    g = state_graph(model, trace.states, limit=20)
    assert g.graph["mode"] == NEIGHBOURHOOD
    assert g.number_of_nodes() <= 20
    assert all(s in g and g.nodes[s]["on_path"] for s in trace.states)
    assert g.graph["omitted"] > 0  # the limit cut something, and says so
    near = {t for s in trace.states for _a, t in model.successors(s)}
    assert all(n in near for n in g if not g.nodes[n]["on_path"])


def test_the_state_graphs_caption_accounts_for_every_transition(tmp_path):
    """The caption's transitions are the drawn arrows plus those it says are not drawn:
    diehard's graph has self-loops (emptying an empty jug), which are counted too."""
    import re

    from kmc.reports.statedraw import draw_state_graph

    r = api.check("diehard")
    model, trace = r.extra["model"], r.discoveries["NotSolved"].trace
    g = state_graph(model, trace.states, limit=60)
    loops = sum(1 for u, v in g.edges if u == v)
    assert g.graph["mode"] == FULL and loops > 0
    svg = draw_state_graph(g, str(tmp_path / "states"), title="t")["svg"]
    caption = " ".join(" ".join(svg_texts_in_order(open(svg).read())).split())
    total = int(re.search(r"(\d+) transitions \(distinct state pairs\)", caption)[1])
    back = int(re.search(r"(\d+) transitions back to earlier columns", caption)[1])
    assert total == g.number_of_edges()
    assert back > 0 and f"{loops} self-loops not drawn" in caption


def test_state_graph_svg_and_png(ping):
    _m, _t, _doc, files = ping
    assert "initial state" in svg_texts(files["states_svg"])
    assert files["states_png"].endswith(".png")


def test_pictures_are_deterministic(ping, tmp_path):
    """The same trace gives byte-identical files (no dates, fixed SVG ids)."""
    model, _t, doc, files = ping
    again = write_artifacts(doc, str(tmp_path), model=model)
    for key in ("sequence_svg", "graph_svg", "states_svg", "sequence_png", "dot", "snippet"):
        with open(files[key], "rb") as a, open(again[key], "rb") as b:
            assert a.read() == b.read(), key
