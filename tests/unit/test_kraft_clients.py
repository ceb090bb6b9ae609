"""KRaft clients: the metadata cache rule of each client release line, the consumer's
position under auto.offset.reset, and each release-line flag changing behaviour exactly
where it says."""
import pytest

from kmc import api, catalog
from kmc.cli import main
from kmc.model.kafka import clients as cm
from kmc.model.kafka.kraft import clients
from kmc.model.kafka.kraft.variants import RELEASE_LINES, VARIANTS

OLD, NEW = 2, 3  # topic IDs of the deleted and the re-created incarnation


def _cached(epoch=1, known=OLD):
    return cm.ClientMeta((OLD, 1, epoch), known, epoch)


@pytest.mark.parametrize("rule,after_unknown,direct", [
    ("epoch", False, False),     # 2.8.1: a lower epoch is never taken
    ("ids-both", False, True),   # 3.0.0: only when both IDs are known
    ("ids", True, True),         # 3.0.1 / trunk: an unknown cached ID counts as changed
])
def test_lower_epoch_of_a_new_topic_id_is_taken_as_each_release_says(
        rule, after_unknown, direct):
    answer = (NEW, 1, 0)
    got = cm.update(_cached(), answer, rule)
    assert (got.meta == answer) is direct
    unknown = cm.update(_cached(), None, rule)  # UNKNOWN_TOPIC_OR_PARTITION in between
    assert unknown.meta == () and unknown.known_id == 0 and unknown.last_epoch == 1
    once = cm.update(unknown, answer, rule)
    assert (once.meta == answer) is after_unknown
    # a second answer does not help a rejected one: the new ID is now the cached one
    assert (cm.update(once, answer, rule).meta == answer) is after_unknown


def test_same_topic_lower_epoch_is_ignored_by_every_rule():
    for rule in cm.RULES:
        assert cm.update(_cached(epoch=2), (OLD, 2, 1), rule).meta == (OLD, 1, 2)
        assert cm.update(_cached(epoch=2), (OLD, 2, 3), rule).meta == (OLD, 2, 3)


def _fetched(reset, pos):
    """kraft-consumer-recreate's initial state with a consumer that knows the leader,
    at position ``pos`` (-1: none), after one fetch (one record on the leader)."""
    model = api.build("kraft-consumer-recreate", "kraft", {"reset": reset})
    (w,) = model.init_states()
    w = model.next_state(w, ("consumer-refresh", 1))
    w = w._replace(consumer=w.consumer._replace(pos=pos))
    return model.next_state(w, ("consumer-fetch",))


def test_reset_policy_positions_a_consumer_without_an_offset():
    c = _fetched("earliest", -1)
    assert c.consumer.pos == 1 and c.ghost.reads == ((0, 1, 1),)
    c = _fetched("latest", -1)
    assert c.consumer.pos == 1 and c.ghost.reads == ()
    c = _fetched("none", -1)
    assert c.consumer.failed and c.consumer.pos == -1
    c = _fetched("none", 0)  # a valid position needs no reset
    assert not c.consumer.failed and c.consumer.pos == 1


def test_out_of_range_position_is_reset_and_a_skip_is_recorded():
    c = _fetched("latest", 5)
    assert c.consumer.pos == 1 and c.ghost.skipped == ()  # the initial record predates it
    assert _fetched("none", 5).consumer.failed


def test_release_lines_are_listed_and_differ_from_trunk_in_their_flags_only():
    base = VARIANTS["kraft"][0]
    changed = {v: {f for f, a, b in zip(base._fields, base, VARIANTS[v][0]) if a != b}
               for v in RELEASE_LINES}
    assert changed == {"kraft-3.6": {"strays_before_replicas", "missing_id", "leader_hint"},
                       "kraft-3.7.0": {"missing_id"},
                       "kraft-clients-3.0": {"client_rule", "client_fetch_ids", "leader_hint"},
                       "kraft-clients-2.8": {"client_rule", "client_fetch_ids", "leader_hint"}}
    sc = catalog.scenarios()["kraft-consumer-recreate"]
    assert set(RELEASE_LINES) <= set(sc.variants) and sc.default_variant == "kraft"


def test_bad_reset_is_one_line_exit_2(capsys):
    assert main(["check", "kraft-consumer-recreate", "-p", "reset=sometimes",
                 "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "earliest" in err and "\n" not in err


def test_clients_2_8_leave_the_consumer_on_the_deleted_topic():
    """KAFKA-12257 (fixed in 2.8.2 / 3.0.0): the re-created topic's leader epoch 0 is
    below the one the consumer saw, so no Metadata answer is taken again."""
    r = api.check("kraft-consumer-recreate", "kraft-clients-2.8")
    assert r.complete and r.unique_states == 4437
    r.assert_violated("ConsumerNotStuck", 8)
    assert r.verdict("ProducerNotStuck") == "violated"  # Metadata.java is shared
    assert r.verdict("NoRecordSkipped") == "holds"


def test_fetch_by_name_reads_the_recreated_topic_only_for_old_clients():
    trunk = api.check("kraft-lagging-broker", "kraft")
    old = api.check("kraft-lagging-broker", "kraft-clients-3.0")
    assert trunk.verdict("NoStaleRead") == "holds"
    old.assert_violated("NoStaleRead", 7)


@pytest.mark.parametrize("scenario", ["kraft-consumer-recreate", "recreate-other-count"])
def test_the_error_of_reset_none_is_a_witness_of_the_consumer_and_the_group(scenario):
    """ConsumerStoppedByError is declared exactly when a reader runs under reset=none,
    holds in exactly the states where the consumer or a member stopped, and is found."""
    def witness(params):
        m = api.build(scenario, "kraft", params)
        return m, [p for p in m.properties() if p.name == "ConsumerStoppedByError"]

    assert witness({"reset": "earliest"})[1] == []
    m, (stopped,) = witness({"reset": "none"})
    r = api.check(m)
    assert r.verdicts()["ConsumerStoppedByError"] == "witness_found"
    (w,) = m.init_states()
    assert not stopped.check(w)
    grp = getattr(w, "group", None)
    if grp is None:
        assert stopped.check(w._replace(consumer=w.consumer._replace(failed=True)))
    else:
        mem = grp.members[0]._replace(pos=((0, -2, 1, 0),))  # -2: group.STOPPED
        assert stopped.check(w._replace(group=grp._replace(members=(mem,))))
        mem = mem._replace(pos=((0, 0, 1, 0),))
        assert not stopped.check(w._replace(group=grp._replace(members=(mem,))))


def _quiescent(model, name):
    (prop,) = [p for p in model.properties() if p.name == name]
    return prop


def test_settled_clients_read_all_and_finish_as_recorded(monkeypatch):
    """ConsumerReadsAll and ProducerFinishes hold with clients that take no leader hint
    on today's brokers' rules (the hint is KIP-951's, 3.7.0: `kraft` fails
    ProducerFinishes, test above), fail where old clients stay on the deleted topic (as
    ConsumerNotStuck does), and fail for a consumer whose fetches read nothing or a
    producer that never sends; a client that still has a step is not settled."""
    r = api.check("kraft-consumer-recreate", "kraft-3.6")
    assert r.verdict("ConsumerReadsAll") == "holds"
    assert r.verdict("ProducerFinishes") == "holds"
    today = api.check("kraft-consumer-recreate", "kraft")
    assert today.verdict("ConsumerReadsAll") == "holds"
    today.assert_violated("ProducerFinishes", 9)
    old = api.check("kraft-consumer-recreate", "kraft-clients-2.8")
    old.assert_violated("ConsumerReadsAll", 10)
    old.assert_violated("ProducerFinishes", 8)
    model = api.build("kraft-consumer-recreate", "kraft-3.6", {})
    (w,) = model.init_states()
    reads, finishes = (_quiescent(model, n) for n in ("ConsumerReadsAll", "ProducerFinishes"))
    assert reads.check(w) and finishes.check(w)  # both can still refresh
    monkeypatch.setitem(model._steps, "consumer-fetch", lambda _m, w: w)
    assert api.check(model).verdict("ConsumerReadsAll") == "violated"
    monkeypatch.undo()
    monkeypatch.setattr(clients, "can_produce", lambda _m, _w: False)
    assert api.check(model).verdict("ProducerFinishes") == "violated"


def test_the_clients_steps_the_settled_view_asks_about_are_inputs():
    """``views.busy`` reads a client's steps from ``model.actions``: every step it
    names is one of the model's inputs, and each client's steps are disjoint."""
    from kmc.model.kafka.kraft import model as km
    from kmc.model.kafka.kraft import views
    steps = [s for _c, s in views.CLIENT_STEPS]
    assert set().union(*steps) <= km.INPUTS
    assert sum(map(len, steps)) == len(set().union(*steps))


@pytest.mark.parametrize("variant,found", [
    ("kraft", True), ("kraft-clients-3.0", True), ("kraft-clients-2.8", False)])
def test_the_consumer_takes_a_lower_epoch_only_where_its_release_keeps_topic_ids(
        variant, found, monkeypatch):
    """LowerEpochAccepted: the consumer fetched at the first incarnation's leader epoch
    1, then takes the re-created topic's epoch 0. Declared for the clients that keep
    topic IDs and found there; clients that compare epochs only (the 2.8 rule forced on
    them) no longer reach it. A 2.8 client never can: not declared."""
    model = api.build("kraft-consumer-recreate", variant, {})
    names = {p.name for p in model.properties()}
    assert ("LowerEpochAccepted" in names) is found
    if not found:
        return
    assert api.check(model).verdicts()["LowerEpochAccepted"] == "witness_found"
    real = cm.update
    monkeypatch.setattr(cm, "update", lambda cache, ans, _rule: real(cache, ans, "epoch"))
    model = api.build("kraft-consumer-recreate", variant, {})
    assert api.check(model).verdicts()["LowerEpochAccepted"] == "witness_missing"


def test_lower_epoch_witness_needs_a_consumer_that_fetches_and_a_higher_first_epoch():
    for params in ({"reset": "none"}, {"leader_epoch": 0}):
        names = {p.name for p in api.build("kraft-consumer-recreate", "kraft",
                                           params).properties()}
        assert "LowerEpochAccepted" not in names


def _hinted(variant):
    """kraft-consumer-recreate on ``variant``: the topic deleted and created again on
    broker-2 (leader epoch 0), broker-1 caught up and broker-2 lagging (its image still
    names the deleted topic, led by broker-1 at epoch 1); the producer took its
    metadata from broker-1. Returns the model and that state."""
    model = api.build("kraft-consumer-recreate", variant, {})
    (w,) = model.init_states()
    for a in [("delete",), ("fetch-metadata", 1), ("create", (2,)), ("fetch-metadata", 1),
              ("producer-refresh", 1)]:
        w = model.next_state(w, a)
    return model, w


def test_the_leader_hint_of_a_lagging_broker_ties_the_producer_to_the_old_leader():
    """KIP-951 (clients and brokers 3.7.0 on): broker-2 answers the Produce with the
    deleted topic's leader at a newer epoch, which the producer takes; the new topic's
    own metadata (same ID, older epoch) is then refused, from either broker."""
    model, w = _hinted("kraft")
    tid, leader, epoch = w.producer.meta
    assert (leader, epoch) == (2, 0)
    assert ("produce-hint",) in model.actions(w)
    t = model.next_state(w, ("produce-hint",))
    assert t.producer.meta == (tid, 1, 1) and t.producer.last_epoch == 1
    for _ in range(2):  # broker-2 catches up: it now leads the new topic at epoch 0
        t = model.next_state(t, ("fetch-metadata", 2))
    assert model.next_state(t, ("producer-refresh", 1)).producer == t.producer
    assert model.next_state(t, ("producer-refresh", 2)).producer == t.producer
    assert ("produce",) not in model.actions(t) and ("produce-hint",) not in model.actions(t)


@pytest.mark.parametrize("variant", ["kraft-3.6", "kraft-clients-3.0", "kraft-clients-2.8"])
def test_no_leader_hint_before_3_7(variant):
    model, w = _hinted(variant)
    assert ("produce-hint",) not in model.actions(w)
    assert model.next_state(w, ("produce-hint",)) == w
