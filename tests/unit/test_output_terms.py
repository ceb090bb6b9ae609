"""Output a Kafka engineer reads without decoding: the headline violation first with one
counterexample (`--all` for every one), a violation in a sentence, components named
(broker-1, controller-1 -> broker-2, A-0), environment input and faults tagged apart,
true defaults in --help."""
import json
import re

import pytest

from kmc import api
from kmc.cli import build_parser, main
from kmc.reports.summary import explanation, headline, render_text


@pytest.fixture(scope="module")
def legacy():
    return api.check("stale-read", "legacy")


def test_the_headline_is_the_first_violated_property_in_declaration_order(legacy):
    violated = [n for n, v in legacy.verdicts().items() if v == "violated"]
    assert headline(legacy) == violated[0] == "NoStaleRead"
    assert sorted(violated)[0] != "NoStaleRead"  # not alphabetical


def test_one_counterexample_unless_all(legacy):
    text = render_text(legacy)
    assert text.count("counterexample for ") == 1
    assert "counterexample for NoStaleRead (14 states)" in text
    assert "4 more counterexamples: NoStaleReplication (11)" in text
    full = render_text(legacy, show_all=True)
    assert full.count("counterexample for ") == 5 and "more counterexamples" not in full


def test_a_violation_in_a_sentence(legacy):
    assert explanation(legacy, "NoStaleRead") == (
        "broker-1, believing it reads incarnation 2 of the topic, received a record of "
        "incarnation 1")
    assert "why: broker-1, believing" in render_text(legacy)
    r = api.check("expand", "modulo")
    assert re.fullmatch(
        r"the group delivered message 1 of key 2 from producer[01] \(from partition 2\) "
        r"while the key's earlier message 0 was still undelivered",
        explanation(r, "InOrderKeyedDelivery"))


def test_inputs_and_faults_are_tagged_apart(legacy):
    text = render_text(legacy)
    assert "broker-2 crashes   [fault]" in text
    assert "admin DeleteTopics A by name   [input]" in text
    doc = legacy.discoveries["NoStaleRead"].trace.to_dict(legacy.extra["model"])
    kinds = {st["action"]: st["kind"] for st in doc["steps"][1:]}
    assert kinds["admin DeleteTopics A by name"] == "input"
    assert kinds["broker-2 crashes"] == "fault"
    assert all(st["fault"] == (st["kind"] == "fault") for st in doc["steps"][1:])


def test_states_name_components(legacy):
    model = legacy.extra["model"]
    last = legacy.discoveries["NoStaleRead"].trace.last
    js = model.state_to_json(last)
    assert set(js["brokers"]) == {"broker-1", "broker-2"}
    b1 = js["brokers"]["broker-1"]
    assert "A-0" in b1["logs"] and "A-0" in b1["hosted"]
    assert "broker-1 up" in model.format_state(last)
    # the network's channels are named by their endpoints, in both directions
    channels = {ch for s in legacy.discoveries["NoStaleRead"].trace.states
                for ch in model.state_to_json(s)["net"]}
    assert {"controller-1 -> broker-1", "broker-1 -> controller-1"} <= channels
    assert all(re.fullmatch(r"(controller|broker)-\d -> (controller|broker)-\d", ch)
               for ch in channels)


def test_summary_json_carries_the_headline_and_explanations(capsys):
    assert main(["check", "stale-read", "--variant", "legacy", "--json", "--quiet"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["headline"] == "NoStaleRead"
    assert out["properties"]["NoStaleRead"]["explanation"].startswith("broker-1, believing")


def test_help_states_true_defaults():
    check = build_parser()._subparsers._group_actions[0].choices["check"]
    helps = {a.dest: a.help or "" for a in check._actions}
    assert "default variant, marked * in `kmc list`" in helps["variant"]
    assert "default: bfs" in helps["explorer"]
    assert "exit codes" in check.epilog and "4  stopped at a bound" in check.epilog


def test_the_spark_application_is_named_after_the_scenario(monkeypatch):
    seen, bfs = {}, api.engine("bfs")

    def fake_engine(name):
        def run(model, **opts):
            seen.update(opts)
            return bfs(model, **{k: v for k, v in opts.items() if k != "app_name"})
        return run
    monkeypatch.setattr(api, "engine", fake_engine)
    api.check("twophase", explorer="spark")
    assert seen["app_name"] == "kmc twophase"


def test_a_spark_summary_says_where_levels_ran():
    from kmc.reports.summary import spark_levels

    levels = [{"mode": "driver"}] * 3 + [{"mode": "spark"}] * 5 + [{"mode": "driver"}]
    assert spark_levels({"levels": levels}) == "levels: 5 on Spark, 4 on the driver"
    assert spark_levels({"levels": [{"mode": "driver"}] * 2}).startswith(
        "levels: 0 on Spark, 2 on the driver (no level was wide enough to split")
