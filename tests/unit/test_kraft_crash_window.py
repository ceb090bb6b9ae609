"""The partition.metadata crash window and how each release line starts up with a log
that has no topic ID (variants.py, ``missing_id``); BrokerFinishesStartup."""
import pytest

from kmc import api
from kmc.model.kafka.kraft import logmanager as lm
from kmc.model.kafka.kraft.state import HALTED, LOGS_LOADED, RUNNING, Log

RECREATE_ON_1 = [("delete",), ("fetch-metadata", 1), ("create", (1,)), ("fetch-metadata", 1)]


def _play(variant, steps, params=None):
    model = api.build("kraft-crash-window", variant, params or {})
    (w,) = model.init_states()
    for a in steps:
        assert a in model.actions(w), (a, model.actions(w))
        w = model.next_state(w, a)
    return model, w


def test_a_crash_before_the_flush_leaves_a_log_without_topic_id():
    _m, w = _play("kraft-3.7.0", RECREATE_ON_1)
    assert w.brokers[0].logs == (Log(0, 3, (), False),)
    _m, crashed = _play("kraft-3.7.0", RECREATE_ON_1 + [("crash", 1)])
    assert crashed.brokers[0].logs == (Log(0, lm.NO_ID, (), True),)
    _m, flushed = _play("kraft-3.7.0", RECREATE_ON_1 + [("flush-metadata", 1, 0),
                                                          ("crash", 1)])
    assert flushed.brokers[0].logs == (Log(0, 3, (), True),)


def test_trunk_merges_the_window_and_every_crash_spent_closes_it():
    model, w = _play("kraft", RECREATE_ON_1)
    assert not model.window and w.brokers[0].logs == (Log(0, 3, (), True),)
    model, w = _play("kraft-3.7.0", [("crash", 2)] + RECREATE_ON_1)
    assert model.window and w.brokers[0].logs == (Log(0, 3, (), True),)


RESTART = [("crash", 1), ("fence", 1), ("restart", 1), ("fetch-metadata", 1),
           ("fetch-metadata", 1), ("load-logs", 1)]


@pytest.mark.parametrize("variant,status,logs", [
    ("kraft-3.7.0", HALTED, (Log(0, lm.NO_ID, (), True),)),   # startup fails
    ("kraft-3.6", LOGS_LOADED, (Log(0, lm.NO_ID, (), True),)),  # checked later
])
def test_startup_with_a_log_without_topic_id(variant, status, logs):
    model, w = _play(variant, RECREATE_ON_1 + RESTART)
    br = w.brokers[0]
    assert br.status == status and br.logs == logs
    if status == HALTED:
        assert [a for a in model.actions(w) if a[1:2] == (1,)] == []  # it stays down
    else:  # 3.6: apply-initial adopts the assigned log (LogManager.getOrCreateLog)
        w = model.next_state(w, ("apply-initial", 1))
        assert w.brokers[0].status == RUNNING
        assert w.brokers[0].logs == (Log(0, 3, (), True),)  # no crash left: flushed


def test_trunk_treats_a_log_without_topic_id_as_stray():
    model, w = _play("kraft", [("crash", 1), ("fence", 1), ("restart", 1),
                               ("fetch-metadata", 1), ("fetch-metadata", 1)])
    br = w.brokers[0]._replace(logs=(Log(0, lm.NO_ID, (), True),))
    w = w._replace(brokers=(br,) + w.brokers[1:])
    w = model.next_state(w, ("load-logs", 1))
    assert w.brokers[0].logs == () and w.brokers[0].status == LOGS_LOADED


def test_broker_finishes_startup_only_where_the_release_says():
    bad = api.check("kraft-crash-window", "kraft-3.7.0")
    bad.assert_violated("BrokerFinishesStartup", 15)
    good = api.check("kraft-crash-window", "kraft")
    assert good.complete and good.verdict("BrokerFinishesStartup") == "holds"


@pytest.mark.full  # the runs of the suite's kraft-stray liveness entries (its full tier)
def test_replicas_eventually_hosted_sees_the_stray_log_of_brokers_3_6():
    params = {"liveness": True}
    bad = api.check("kraft-stray", "kraft-3.6", params)
    assert bad.verdict("ReplicasEventuallyHosted") == "violated"
    good = api.check("kraft-stray", "kraft", params)
    assert good.complete and good.verdict("ReplicasEventuallyHosted") == "holds"
    assert good.verdict("BrokerFinishesStartup") == "holds"
