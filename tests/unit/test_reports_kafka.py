"""Counterexamples of the Kafka models, read as pictures, text and replays.

KIP-253: `modulo` hashing must violate InOrderKeyedDelivery on expansion (the KIP's motivation).
KIP-516: `legacy` must violate NoStaleRead in the "Stale reads" scenario; replay must
reproduce it and pinpoint the step where an altered model departs from it.
"""
import json
import os
import xml.etree.ElementTree as ET

import pytest

from kmc import api, catalog
from kmc.cli import main
from kmc.reports import replay as rp
from kmc.reports.artifacts import write_artifacts
from kmc.reports.sequence import lanes_of
from kmc.reports.summary import write_traces
from kmc.reports.tracefile import load_trace


def svg_text(path) -> str:
    """Every <text> of an SVG, in document order, joined by single spaces (wrapped labels
    are split at spaces, so a label is a substring of this)."""
    root = ET.parse(path).getroot()
    parts = ["".join(el.itertext()).strip() for el in root.iter()
             if el.tag.rsplit("}", 1)[-1] == "text"]
    return " ".join(p for p in parts if p)


def check_out(tmp_path_factory, scenario, variant, prop):
    out = str(tmp_path_factory.mktemp(f"{scenario}-{variant}"))
    code = main(["check", scenario, "--variant", variant, "--quiet", "--out", out])
    path = os.path.join(out, f"trace-{prop}.json")
    return code, out, path, load_trace(path)


@pytest.fixture(scope="module")
def expand_modulo(tmp_path_factory):
    return check_out(tmp_path_factory, "expand", "modulo", "InOrderKeyedDelivery")


def test_modulo_expansion_counterexample_replays(expand_modulo, capsys):
    code, _out, path, doc = expand_modulo
    assert code == 1
    capsys.readouterr()
    assert main(["replay", path]) == 0
    k = len(doc["steps"]) - 1
    assert capsys.readouterr().out.strip() == \
        f"reproduced: InOrderKeyedDelivery violated at step {k}"


def test_modulo_sequence_picture_names_every_lane_and_message(expand_modulo):
    _code, out, _path, doc = expand_modulo
    text = svg_text(os.path.join(out, "sequence-InOrderKeyedDelivery.svg"))
    lanes = lanes_of(doc)
    assert any(x.startswith("controller") for x in lanes)
    assert any(x.startswith("broker") for x in lanes)
    for lane in lanes:
        assert lane in text
    labels = [st["message"]["label"] for st in doc["steps"][1:] if st["message"]]
    assert any(label.startswith("LeaderAndIsr ") for label in labels)
    assert any(label.startswith("Produce(") for label in labels)
    for label in labels:
        assert label in text, label


def test_modulo_report_embeds_the_pictures(expand_modulo):
    _code, out, _path, _doc = expand_modulo
    with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
        page = f.read()
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    violated = [n for n, p in s["properties"].items() if p["verdict"] == "violated"]
    assert "InOrderKeyedDelivery" in violated
    assert page.count("data:image/png;base64,") == 3 * len(violated)
    for name in violated:
        assert f"kmc replay {os.path.join(out, f'trace-{name}.json')}" in page
    for name in ("graph-InOrderKeyedDelivery.dot", "graph-InOrderKeyedDelivery.graphml",
                 "states-InOrderKeyedDelivery.png", "replay-InOrderKeyedDelivery.py"):
        assert os.path.exists(os.path.join(out, name)), name


@pytest.fixture(scope="module")
def stale_read(tmp_path_factory):
    """Only the NoStaleRead trace and its pictures (the full report on this scenario
    draws five counterexamples; the report itself is tested on `expand` above)."""
    r = api.check("stale-read", "legacy")
    out = str(tmp_path_factory.mktemp("stale-read"))
    path = write_traces(r, out)["NoStaleRead"]
    doc = load_trace(path)
    write_artifacts(doc, out, model=r.extra["model"])
    return r.exit_code(), out, path, doc


def test_legacy_stale_read_replays(stale_read, capsys):
    code, _out, path, doc = stale_read
    assert code == 1
    capsys.readouterr()
    assert main(["replay", path]) == 0
    k = len(doc["steps"]) - 1
    assert capsys.readouterr().out.strip() == f"reproduced: NoStaleRead violated at step {k}"


class Inert:
    """The same model in which every action whose label contains ``words`` is still
    listed but does nothing (``next_state`` returns None): a guard made stronger."""

    def __init__(self, inner, words):
        self.inner, self.words = inner, words

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def next_state(self, s, a):
        return None if self.words in self.format_action(a) else self.inner.next_state(s, a)

    def successors(self, s):
        return [(a, t) for a, t in self.inner.successors(s)
                if self.words not in self.format_action(a)]


def test_replay_pinpoints_where_an_altered_model_departs(stale_read):
    _code, _out, _path, doc = stale_read
    model = api.build(doc["scenario"], doc["variant"], doc["params"])
    fetch = next(st for st in doc["steps"][1:] if " fetches " in st["action"])
    out = rp.replay_document(Inert(model, " fetches "), doc)
    assert not out.reproduced and out.exit_code == 1
    assert (out.step, out.reason) == (fetch["index"], rp.NOT_ENABLED)
    assert f"diverged at step {fetch['index']}" in out.message


def test_legacy_trace_against_kip516_diverges_on_topic_ids(stale_read):
    _code, _out, _path, doc = stale_read
    out = rp.replay_document(api.build("stale-read", "kip516", doc["params"]), doc)
    assert not out.reproduced
    assert any("topic_id" in d["path"] for d in out.differences), out.message


def test_stale_read_pictures_show_lanes_messages_and_faults(stale_read):
    _code, out, _path, doc = stale_read
    text = svg_text(os.path.join(out, "sequence-NoStaleRead.svg"))
    lanes = lanes_of(doc)
    assert any(x.startswith("controller") for x in lanes)
    assert sum(x.startswith("broker") for x in lanes) == doc["params"]["brokers"]
    for lane in lanes:
        assert lane in text
    labels = [st["message"]["label"] for st in doc["steps"][1:] if st["message"]]
    assert any(label.startswith("LeaderAndIsr") for label in labels)
    assert any(label.startswith("FetchResponse") for label in labels)
    for label in labels:
        assert label in text, label
    crashes = [st["action"] for st in doc["steps"][1:] if st["fault"] and not st["message"]]
    assert crashes and all(c in text for c in crashes)


def test_kafka_scenarios_are_catalogued():
    names = set(catalog.scenarios())
    assert {"stale-read", "expand"} <= names
