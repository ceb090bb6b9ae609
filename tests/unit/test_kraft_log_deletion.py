"""A deleted replica's log on a KRaft broker: renamed to -delete when the broker applies
the deletion, removed later by the kafka-delete-logs task, and never loaded by a
restart that finds it on disk (model/kafka/kraft/deletion.py)."""
from kmc import api
from kmc.model.kafka.kraft.state import DOWN, LOGS_LOADED

INC1 = 2  # topic ID of the first incarnation


def _play(steps, params=None):
    model = api.build("kraft-stray", "kraft", params or {})
    (w,) = model.init_states()
    for a in steps:
        assert a in model.actions(w), (a, model.actions(w))
        w = model.next_state(w, a)
    return model, w


def _catch_up(model, w, b):
    while ("fetch-metadata", b) in model.actions(w):
        w = model.next_state(w, ("fetch-metadata", b))
    return w


DELETE_ON_1 = [("delete",), ("fetch-metadata", 1)]
RESTART_1 = [("crash", 1), ("fence", 1), ("restart", 1)]


def test_rename_and_removal_are_two_steps():
    model, w = _play(DELETE_ON_1)
    br = w.brokers[0]
    assert br.logs == () and br.hosted == ()      # no longer served
    assert br.deleting == ((0, INC1),)            # the -delete directory is on disk
    assert ("delete-logs", 1, 0, INC1) in model.actions(w)
    removed = model.next_state(w, ("delete-logs", 1, 0, INC1))
    assert removed.brokers[0].deleting == () and removed.brokers[0].logs == ()
    assert removed.brokers[1] == w.brokers[1]


def test_a_crash_between_them_leaves_a_directory_the_restart_does_not_load():
    params = {"crashes": 2}
    model, w = _play(DELETE_ON_1 + RESTART_1, params)
    assert w.brokers[0].deleting == ((0, INC1),)
    assert not [a for a in model.actions(w) if a[0] == "delete-logs"]  # not started
    w = _catch_up(model, w, 1)
    w = model.next_state(w, ("load-logs", 1))
    br = w.brokers[0]
    assert br.status == LOGS_LOADED
    assert br.logs == () and br.deleting == ((0, INC1),)  # queued again, not loaded
    assert (1, INC1) not in w.ghost.strays               # nor taken for a stray log
    assert ("delete-logs", 1, 0, INC1) in model.actions(w)


def test_after_the_last_crash_the_restart_removes_it_at_once():
    model, w = _play(DELETE_ON_1 + [("crash", 1)])
    assert w.brokers[0].status == DOWN and w.brokers[0].deleting == ((0, INC1),)
    model, w = _play(DELETE_ON_1 + RESTART_1)
    w = model.next_state(_catch_up(model, w, 1), ("load-logs", 1))
    assert w.brokers[0].deleting == () and w.brokers[0].logs == ()


def test_the_last_crash_removes_the_other_brokers_directories():
    model, w = _play(DELETE_ON_1 + [("crash", 2)])
    assert w.brokers[0].deleting == ()
    model, w = _play(DELETE_ON_1 + [("crash", 2)], {"crashes": 2})
    assert w.brokers[0].deleting == ((0, INC1),)


def test_without_a_crash_the_deletion_is_one_step():
    model, w = _play(DELETE_ON_1, {"crashes": 0})
    assert not model.delete_window
    assert w.brokers[0].logs == () and w.brokers[0].deleting == ()
    assert "delete-logs" not in model.action_names()


def test_every_property_holds_with_the_window():
    r = api.check("kraft-crash-window", "kraft", {"liveness": False})
    assert r.ok and r.coverage["delete-logs"] > 0


def test_the_encoding_shows_the_directories_only_when_there_are_some():
    model, w = _play(DELETE_ON_1)
    removed = model.next_state(w, ("delete-logs", 1, 0, INC1))
    assert "deleting" in repr(w.brokers[0]) and "deleting" not in repr(removed.brokers[0])
    assert repr(w) != repr(removed)
    assert "deleting" not in model.state_to_json(removed)["brokers"][0]
    assert model.state_to_json(w)["brokers"][0]["deleting"] == [[0, INC1]]
