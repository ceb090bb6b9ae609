"""A broker's heartbeat lease running out and the controller fencing it: one step, or two
with the scenario's ``fence_delay`` (``heartbeat.expire``, ``heartbeat.fence``); a new
incarnation that registers in between takes the old lease out, so the fence event never
runs for it (``startup.restart``)."""
from kmc import api
from kraft_steps import play as _play
from kmc.model.kafka.kraft import image as im


def _check(model, name, w) -> bool:
    (prop,) = [p for p in model.properties() if p.name == name]
    return prop.check(w)


def _fenced(model, w, b) -> bool:
    return im.fenced(model.committed_image(w.quorum), b)


def test_without_the_delay_the_lease_and_the_fence_are_one_step():
    model = api.build("kraft-stray")
    w = _play(model, [("crash", 1)])
    acts = model.actions(w)
    assert ("fence", 1) in acts and ("restart", 1) not in acts
    assert not [a for a in acts if a[0] == "lease-expires"]
    assert "lease-expires" not in model.action_names()
    assert "expired" not in model.state_to_json(w)["quorum"]


def test_with_the_delay_the_lease_runs_out_first_and_then_restart_or_fence_may_come():
    model = api.build("kraft-stray", params={"fence_delay": 1})
    assert "lease-expires" in model.action_names()
    w = _play(model, [("crash", 1)])
    acts = model.actions(w)
    assert ("lease-expires", 1) in acts
    assert ("fence", 1) not in acts and ("restart", 1) not in acts  # the lease is valid
    w = _play(model, [("lease-expires", 1)], w)
    assert w.quorum.expired == (1,) and "expired=(1,)" in repr(w.quorum)
    assert "lease run out, not fenced yet=[1]" in model.format_state(w)
    assert model.state_to_json(w)["quorum"]["expired"] == [1]
    assert model.action_actor(("lease-expires", 1)) == "controller"
    assert "lease runs out" in model.format_action(("lease-expires", 1))
    acts = model.actions(w)
    assert ("fence", 1) in acts and ("restart", 1) in acts
    assert ("lease-expires", 1) not in acts


def test_the_fence_event_clears_the_expired_session_and_moves_the_leadership():
    model = api.build("kraft-stray", params={"fence_delay": 1})
    w = _play(model, [("crash", 1), ("lease-expires", 1), ("fence", 1)])
    assert w.quorum.expired == () and _fenced(model, w, 1)
    assert _check(model, "NoFencedLeader", w) and _check(model, "FencedLeaveIsr", w)
    assert ("restart", 1) in model.actions(w)


def test_a_registration_before_the_fence_event_leaves_the_fenced_broker_leader():
    """Kafka 3.9: registerBroker removes the old lease (no fence event finds it) and,
    without ELR, writes no partition change: the committed metadata names a fenced
    leader."""
    model = api.build("kraft-stray", params={"fence_delay": 1})
    w = _play(model, [("crash", 1), ("lease-expires", 1), ("restart", 1)])
    assert w.quorum.expired == () and _fenced(model, w, 1)
    assert ("fence", 1) not in model.actions(w)
    (t,) = im.build(w.quorum.log[:w.quorum.hwm]).topics
    assert t.parts[0].leader == 1 and 1 in t.parts[0].isr
    assert not _check(model, "NoFencedLeader", w)
    assert not _check(model, "FencedLeaveIsr", w)


def test_a_failover_gives_every_broker_a_fresh_session():
    model = api.build("kraft-failover", params={"crashes": 1, "fence_delay": 1})
    w = _play(model, [("crash", 2), ("lease-expires", 2), ("failover", 3)])
    assert w.quorum.expired == () and not _fenced(model, w, 2)
    acts = model.actions(w)
    assert ("restart", 2) not in acts and ("fence", 2) not in acts
    assert ("lease-expires", 2) in acts


def test_a_registration_lost_in_a_failover_is_sent_again_once_the_lease_ran_out():
    model = api.build("kraft-failover", params={"crashes": 1, "fence_delay": 1})
    w = _play(model, [("crash", 2), ("lease-expires", 2), ("restart", 2), ("failover", 3)])
    assert w.brokers[1].reregister and not _fenced(model, w, 2)
    assert ("register", 2) not in model.actions(w)  # the new controller's fresh lease
    w = _play(model, [("lease-expires", 2), ("register", 2)], w)
    assert w.quorum.expired == () and not w.brokers[1].reregister


def test_stale_lease_unfenced_catches_a_registration_that_keeps_the_old_lease(monkeypatch):
    from kmc.explorers.bfs import bfs
    from kmc.model.kafka.kraft import controller as ctl
    from kmc.model.kafka.kraft import startup

    model = api.build("kraft-stray", params={"fence_delay": 1})
    assert bfs(model).verdict("StaleLeaseUnfenced") == "holds"

    def keeps_the_lease(model, w, b):  # registerBroker without heartbeatManager.remove
        q = w.quorum
        return model.append(q, ctl.register_broker(model.controller_image(q), b))
    monkeypatch.setattr(startup, "_register", keeps_the_lease)
    model = api.build("kraft-stray", params={"fence_delay": 1})
    r = bfs(model)
    assert r.verdict("StaleLeaseUnfenced") == "violated"
    trace = r.discoveries["StaleLeaseUnfenced"].trace
    assert [a[0] for a in trace.actions] == ["crash", "lease-expires", "restart"]


def test_a_quorum_without_a_run_out_lease_encodes_as_before():
    """The canonical encoding of a quorum with no lease run out is the five-field form a
    NamedTuple of leader, epoch, log, hwm and repl prints, so every state of a run
    without ``fence_delay`` keeps its fingerprint."""
    from collections import namedtuple

    (w,) = api.build("kraft-stray").init_states()
    q = w.quorum
    five = namedtuple("Quorum", "leader epoch log hwm repl")(*q[:5])
    assert q.expired == () and repr(q) == repr(five)
    assert repr(q._replace(expired=(2,))) == repr(five)[:-1] + ", expired=(2,))"
