"""A restarted broker's registration that a controller failover loses is sent again
(``startup.unanswered_registrations``, ``register_again``), and a broker is unfenced only
under a committed registration of its own process (``heartbeat.can_unfence``)."""
from kmc import api
from kraft_steps import play as _play
from kmc.model.kafka.kraft import controller as ctl
from kmc.model.kafka.kraft import heartbeat
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft.state import CATCHING_UP, DOWN, RUNNING

#: broker-2 crashes, is fenced (committed on every voter) and restarts: its
#: RegisterBrokerRecord is on controller-1 only
RESTARTED = [("crash", 2), ("fence", 2), ("replicate", 2), ("replicate", 3), ("restart", 2)]
#: broker-2's startup: it reads the committed metadata, publishes it, makes its replicas
STARTUP = [("fetch-metadata", 2), ("load-logs", 2), ("apply-initial", 2)]


def _model():
    return api.build("kraft-failover", params={"crashes": 1, "failovers": 1})


def test_a_failover_that_loses_the_registration_makes_the_broker_send_it_again():
    model = _model()
    w = _play(model, RESTARTED + [("failover", 3)])
    assert w.brokers[1].status == CATCHING_UP and w.brokers[1].reregister
    assert "reregister=True" in repr(w.brokers[1])
    assert "registration lost" in model.format_state(w)
    # its startup goes on, but no heartbeat unfences it under the lost registration
    w = _play(model, STARTUP, w)
    assert w.brokers[1].status == RUNNING and ("unfence", 2) not in model.actions(w)
    before = ctl.registration_offset(w.quorum.log, 2)
    w = _play(model, [("register", 2)], w)
    assert not w.brokers[1].reregister and "reregister" not in repr(w.brokers[1])
    assert ctl.registration_offset(w.quorum.log, 2) == len(w.quorum.log) - 1 > before
    assert ("unfence", 2) not in model.actions(w)  # not committed, not fetched yet
    w = _play(model, [("replicate", 2), ("fetch-metadata", 2)], w)
    assert ("unfence", 2) not in model.actions(w)  # committed, fetched up to before it
    w = _play(model, [("fetch-metadata", 2)], w)
    assert ("unfence", 2) in model.actions(w)
    js = model.state_to_json(w)
    assert all("reregister" not in br for br in js["brokers"])


def test_unfenced_registered_catches_an_unfence_under_the_lost_registration():
    model = _model()
    (prop,) = [p for p in model.properties() if p.name == "UnfencedRegistered"]
    w = _play(model, RESTARTED + [("failover", 3)] + STARTUP)
    assert w.brokers[1].lost_in == w.quorum.epoch == 2 and prop.check(w)
    # the controller's unfence step taken anyway, as a model without the guard would
    assert not prop.check(heartbeat.unfence(model, w, 2))
    w = _play(model, [("register", 2), ("replicate", 2), ("fetch-metadata", 2),
                      ("fetch-metadata", 2), ("unfence", 2)], w)
    assert w.brokers[1].lost_in == 0 and prop.check(w)


def test_a_failover_that_keeps_the_registration_changes_nothing_for_the_broker():
    model = _model()
    w = _play(model, RESTARTED + [("replicate", 2), ("failover", 2)])
    assert not w.brokers[1].reregister
    assert [a for a in model.actions(w) if a[0] == "register"] == []


def test_the_broker_is_unfenced_only_once_its_registration_is_committed():
    model = _model()
    w = _play(model, RESTARTED)
    # fetched past the registration, but the registration is on controller-1 alone
    w = _play(model, STARTUP, w)
    assert w.brokers[1].status == RUNNING
    assert w.quorum.hwm <= ctl.registration_offset(w.quorum.log, 2)
    assert ("unfence", 2) not in model.actions(w)
    w = _play(model, [("replicate", 2), ("fetch-metadata", 2)], w)
    assert ("unfence", 2) in model.actions(w)


def test_a_lost_fence_lets_the_lease_run_out_before_the_broker_registers_again():
    model = _model()
    # the fence and the registration are both on controller-1 alone
    w = _play(model, [("crash", 2), ("fence", 2), ("restart", 2), ("failover", 3)])
    img = model.controller_image(w.quorum)
    assert w.brokers[1].reregister and 2 not in {b for b, _e, f in img.brokers if f}
    assert ("register", 2) not in model.actions(w)  # DuplicateBrokerRegistration
    w = _play(model, [("fence", 2), ("register", 2)], w)
    assert not w.brokers[1].reregister


def test_a_crash_forgets_the_lost_registration():
    model = api.build("kraft-failover", params={"crashes": 2, "failovers": 1})
    w = _play(model, RESTARTED + [("failover", 3), ("crash", 2)])
    assert w.brokers[1].status == DOWN and not w.brokers[1].reregister


def test_register_is_an_action_only_with_crashes_and_failovers():
    assert "register" in _model().action_names()
    assert "register" not in api.build("kraft-failover", params={"crashes": 0}).action_names()
    assert "register" not in api.build("kraft-stray").action_names()
    assert _model().caveats() == ()


def test_without_the_resend_the_broker_is_unfenced_under_its_previous_registration():
    """The mutant ``no-registration-resend``: the failover's loss goes unnoticed, the
    broker is unfenced without a new RegisterBrokerRecord, and UnfencedRegistered
    shows it with a shortest trace that never registers again."""
    model = api.build("kraft-failover", "no-registration-resend",
                      {"crashes": 1, "failovers": 1})
    w = _play(model, RESTARTED + [("failover", 3)] + STARTUP)
    assert w.brokers[1].lost_in == 2 and not w.brokers[1].reregister
    assert "registration lost in the failover to epoch 2: not sent again" in \
        model.format_state(w)
    assert ("register", 2) not in model.actions(w) and ("unfence", 2) in model.actions(w)
    r = api.check("failover-mid-delete", "no-registration-resend",
                  {"plane": "kraft", "deletes": 0})
    r.assert_violated("UnfencedRegistered", 10)
    steps = r.discoveries["UnfencedRegistered"].trace.actions
    assert ("failover", 2) in steps and not any(a[0] == "register" for a in steps)
    assert api.check("failover-mid-delete", "kraft", {"plane": "kraft", "deletes": 0}).ok


def test_unfenced_caught_up_catches_an_unfence_before_the_image_holds_the_registration():
    model = _model()
    (prop,) = [p for p in model.properties() if p.name == "UnfencedCaughtUp"]
    # committed, but broker-2 has fetched and published only up to before its record
    w = _play(model, RESTARTED + STARTUP + [("replicate", 2)])
    at = ctl.registration_offset(w.quorum.log, 2)
    assert w.brokers[1].image.offset == at and ("unfence", 2) not in model.actions(w)
    assert prop.check(w) and not prop.check(heartbeat.unfence(model, w, 2))
    w = _play(model, [("fetch-metadata", 2), ("unfence", 2)], w)
    assert w.brokers[1].image.offset == at + 1 and prop.check(w)


def test_an_unfence_that_does_not_wait_for_the_image_is_caught(monkeypatch):
    """``heartbeat.can_unfence`` without its catch-up clause: the smoke entry's run
    finds the broker unfenced with an image short of its registration."""
    def eager(model, w, b):
        br = w.brokers[b - 1]
        return (br.status == RUNNING and not br.reregister
                and im.fenced(model.controller_image(w.quorum), b)
                and ctl.registration_offset(w.quorum.log, b) < w.quorum.hwm)
    params = {"plane": "kraft", "deletes": 0}
    assert api.check("failover-mid-delete", "kraft", params).verdict(
        "UnfencedCaughtUp") == "holds"
    monkeypatch.setattr(heartbeat, "can_unfence", eager)
    r = api.check("failover-mid-delete", "kraft", params)
    assert {n for n, v in r.verdicts().items() if v == "violated"} == {"UnfencedCaughtUp"}
