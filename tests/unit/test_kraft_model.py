"""The KRaft model: catalogue, contract, the quorum, images and the startup order."""
import pytest

from kmc import api, catalog
from kmc.cli import main
from kmc.model.contract import validate_model
from kmc.model.encoding import check_canonical
from kmc.model.kafka.kraft import clients
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import quorum as qm
from kmc.model.kafka.kraft import records as rc
from kmc.model.kafka.kraft.properties import ALWAYS, QUIESCENT
from kmc.model.kafka.kraft.state import CATCHING_UP, DOWN, LOGS_LOADED, RUNNING
from kmc.model.kafka.kraft.variants import MUTANTS, VARIANT_NAMES, VARIANTS

NAMED = ("kraft-stray", "kraft-failover", "kraft-lagging-broker", "kraft-consumer-recreate",
         "kraft-large")


def test_catalogue_lists_the_kraft_scenarios_with_every_variant():
    table = catalog.scenarios()
    for name in NAMED:
        sc = table[name]
        assert sc.variants == VARIANT_NAMES and sc.default_variant == "kraft"
        assert sc.family == "kraft"
    base = VARIANTS["kraft"][0]
    assert len(MUTANTS) == 7
    for name in MUTANTS:  # each mutant removes exactly one safeguard
        diff = [f for f, a, b in zip(base._fields, base, VARIANTS[name][0]) if a != b]
        assert len(diff) == 1, (name, diff)


def test_models_validate_and_start_canonical_with_every_property_true():
    for name in NAMED:
        model = api.build(name, "kraft")
        validate_model(model)
        (s0,) = model.init_states()
        check_canonical(s0)
        for p in ALWAYS + QUIESCENT:
            assert p.check(s0), (name, p.name)


def test_rf_above_brokers_is_one_line_exit_2(capsys):
    assert main(["check", "kraft-stray", "-p", "rf=3", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "rf=3 needs at least 3 brokers" in err and "\n" not in err


def _q():
    return qm.initial((rc.topic("A", 2),))


def test_failover_loses_the_uncommitted_tail_and_keeps_what_the_winner_holds():
    q = qm.append(_q(), (rc.remove_topic(2),))
    assert q.hwm == 1 and len(q.log) == 2
    assert qm.electable(q) == (2, 3)  # nobody holds the tail: both may win
    nq = qm.failover(q, 2)
    assert nq.epoch == 2 and len(nq.log) == 2 and nq.log[1].records[0].kind == \
        "LeaderChangeMessage"
    assert im.topic_by_id(im.build(nq.log), 2) is not None  # the deletion is gone
    # once a follower holds the tail it commits, and a shorter log cannot win
    q2 = qm.replicate(q, 2)
    assert q2.hwm == 2 and qm.electable(q2) == (2,)


def test_high_watermark_waits_for_an_entry_of_the_current_epoch():
    q = qm.append(_q(), (rc.remove_topic(2),))
    q = qm.replicate(q, 3)  # voter 3 holds the tail
    nq = qm.failover(q._replace(hwm=1), 3)
    # the old-epoch batch is committed only with the new leader's own batch
    nq = qm.replicate(nq, 2)
    assert nq.hwm == 3


def test_local_changes_delete_first_then_create():
    old = im.build((qm.Entry(1, (rc.topic("A", 2), rc.partition(2, 0, (1, 2), (1, 2), 1))),))
    new = im.apply_batch(old, qm.Entry(1, (rc.remove_topic(2),)))
    assert im.local_changes(old, new, 2) == ([(0, 2)], [])
    newer = im.apply_batch(new, qm.Entry(1, (rc.topic("A", 3),
                                             rc.partition(3, 0, (2,), (2,), 2))))
    deletes, changes = im.local_changes(new, newer, 2)
    assert deletes == [] and [(p, t) for p, t, _ in changes] == [(0, 3)]


def _walk(model, w, *wanted):
    for a in wanted:
        assert a in model.actions(w), (a, model.actions(w))
        w = model.next_state(w, a)
    return w


def test_restart_moves_the_stray_log_aside_before_replicas_are_created():
    """The kraft-stray story, step by step: broker-2 is down while A is deleted and
    re-created on it; at restart the old log is stray before the new replica exists."""
    model = api.build("kraft-stray", "kraft")
    (w,) = model.init_states()
    w = _walk(model, w, ("crash", 2), ("delete",), ("create", (2, 1)), ("fence", 2),
              ("restart", 2))
    assert w.brokers[1].status == CATCHING_UP
    assert [x.topic_id for x in w.brokers[1].logs] == [2]  # the old log, on disk
    while ("fetch-metadata", 2) in model.actions(w):
        w = model.next_state(w, ("fetch-metadata", 2))
    w = _walk(model, w, ("load-logs", 2))
    assert w.brokers[1].status == LOGS_LOADED and w.brokers[1].logs == ()
    w = _walk(model, w, ("apply-initial", 2))
    br = w.brokers[1]
    assert br.status == RUNNING and [(x.topic_id, x.records) for x in br.logs] == [(3, ())]
    assert [h.topic_id for h in br.hosted] == [3]


def test_before_kafka_14616_the_new_replica_is_never_created():
    model = api.build("kraft-stray", "stray-after-replicas")
    (w,) = model.init_states()
    w = _walk(model, w, ("crash", 2), ("delete",), ("create", (1, 2)), ("fence", 2),
              ("restart", 2))
    while ("fetch-metadata", 2) in model.actions(w):
        w = model.next_state(w, ("fetch-metadata", 2))
    w = _walk(model, w, ("load-logs", 2))
    assert [x.topic_id for x in w.brokers[1].logs] == [2]  # still there
    w = _walk(model, w, ("apply-initial", 2))
    assert w.brokers[1].logs == () and w.brokers[1].hosted == ()


def test_a_crashed_broker_registers_again_only_once_fenced():
    model = api.build("kraft-stray", "kraft")
    (w,) = model.init_states()
    w = _walk(model, w, ("crash", 1))
    assert w.brokers[0].status == DOWN and ("restart", 1) not in model.actions(w)
    w = _walk(model, w, ("fence", 1))
    img = model.committed_image(w.quorum)
    assert im.fenced(img, 1) and img.topics[0].parts[0].leader == 2
    assert ("restart", 1) in model.actions(w)


@pytest.mark.parametrize("variant", ["kraft", "compare-by-name"])
def test_a_consumer_with_a_lagging_brokers_metadata_reads_only_under_names(variant):
    """kraft-lagging-broker: broker-1 lags; the re-created topic is led by broker-1,
    which still serves the deleted one; broker-2's fresh image sends the consumer
    there."""
    model = api.build("kraft-lagging-broker", variant)
    (w,) = model.init_states()
    w = _walk(model, w, ("delete",), ("create", (1,)), ("fetch-metadata", 2),
              ("fetch-metadata", 2), ("consumer-refresh", 2))
    assert w.consumer.meta == (3, 1, 0)
    w2 = model.next_state(w, ("consumer-fetch",))
    assert w2.ghost.attempts == ((2, 1),)
    assert w2.ghost.reads == (() if variant == "kraft" else ((0, 2, 1),))


def test_missed_heartbeats_have_a_witness_that_a_lost_fence_loses():
    """RunningBrokerFenced is declared with missed heartbeats (``fences``) only, found
    on kraft-stray without crashes, and not found once missing heartbeats fences nobody."""
    names = {p.name for p in api.build("kraft-stray", "kraft", {}).properties()}
    assert "RunningBrokerFenced" not in names
    model = api.build("kraft-stray", "kraft", {"fences": 1, "crashes": 0})
    assert api.check(model).verdicts()["RunningBrokerFenced"] == "witness_found"
    model._steps["miss-heartbeats"] = lambda _m, w, *_args: w._replace(
        budget=w.budget._replace(fences=0))  # the lease runs out, no fence is written
    assert api.check(model).verdicts()["RunningBrokerFenced"] == "witness_missing"


def test_a_crash_with_a_delete_directory_has_a_witness_that_no_window_loses():
    """CrashWithDeleteDir is declared with a crash and a deletion only, found on
    kraft-stray (a broker may go down before its kafka-delete-logs task removed the
    renamed log), and not found once a deletion removes the directory at once."""
    names = {p.name for p in api.build("kraft-stray", "kraft", {"crashes": 0}).properties()}
    assert "CrashWithDeleteDir" not in names
    model = api.build("kraft-stray", "kraft", {})
    assert api.check(model).verdicts()["CrashWithDeleteDir"] == "witness_found"
    model = api.build("kraft-stray", "kraft", {})
    model.delete_window = False  # no -delete directory is ever kept
    assert api.check(model).verdicts()["CrashWithDeleteDir"] == "witness_missing"


def test_budgets_and_the_published_offset_are_checked_on_every_state():
    """BudgetsRespected fails once a step overspends a budget of the scenario (a missed
    heartbeat that takes two fences), MetadataMonotonic once a broker's image is not at
    the highest offset it published (the ghost not raised, or an image gone back)."""
    model = api.build("kraft-stray", "kraft", {"fences": 1, "crashes": 0})
    assert api.check(model).verdict("BudgetsRespected") == "holds"
    (w,) = model.init_states()
    props = {p.name: p for p in model.properties()}
    budgets, monotonic = props["BudgetsRespected"], props["MetadataMonotonic"]
    assert budgets.check(w) and monotonic.check(w)
    assert not budgets.check(w._replace(budget=w.budget._replace(fences=-1)))
    assert not budgets.check(w._replace(producer=w.producer._replace(left=-1)))
    high = w.ghost.high
    assert not monotonic.check(w._replace(ghost=w.ghost._replace(high=(0,) + high[1:])))
    assert not monotonic.check(w._replace(ghost=w.ghost._replace(
        high=(high[0] + 1,) + high[1:])))
    step = model._steps["miss-heartbeats"]

    def overspends(m, w, *args):  # the missed heartbeats take two fences
        out = step(m, w, *args)
        return out._replace(budget=out.budget._replace(fences=w.budget.fences - 2))
    model._steps["miss-heartbeats"] = overspends
    assert api.check(model).verdict("BudgetsRespected") == "violated"


def test_records_reach_a_log_only_after_its_partition_metadata_is_flushed(monkeypatch):
    """MetadataFlushedFirst (shared with the ZooKeeper plane) holds on kraft-crash-window,
    where new logs start unflushed, and fails on a state whose unflushed log holds a
    record, and once a produce leaves the log unflushed."""
    model = api.build("kraft-crash-window", "kraft", {"initial_records": 1})
    assert api.check(model).verdict("MetadataFlushedFirst") == "holds"
    (w,) = model.init_states()
    prop = {p.name: p for p in model.properties()}["MetadataFlushedFirst"]
    br = w.brokers[0]
    assert br.logs[0].records and prop.check(w)
    unflushed = br._replace(logs=(br.logs[0]._replace(flushed=False),) + br.logs[1:])
    assert not prop.check(w._replace(brokers=(unflushed,) + w.brokers[1:]))
    empty = unflushed._replace(logs=(unflushed.logs[0]._replace(records=()),)
                               + unflushed.logs[1:])
    assert prop.check(w._replace(brokers=(empty,) + w.brokers[1:]))
    produce = clients.produce

    def unflushed_produce(m, w, *args):  # the record lands before partition.metadata
        out = produce(m, w, *args)
        return out._replace(brokers=tuple(
            b._replace(logs=tuple(x._replace(flushed=False) for x in b.logs))
            for b in out.brokers))
    monkeypatch.setattr(clients, "produce", unflushed_produce)
    model = api.build("kraft-consumer-recreate", "kraft", {})
    assert api.check(model).verdict("MetadataFlushedFirst") == "violated"


def test_fetches_are_answered_where_followers_or_a_consumer_fetch(monkeypatch):
    """FetchAnswered keeps LeaderEpochFencing from holding vacuously: declared with a
    follower (rf 2) or a consumer, found on kraft-stray, and not found once the
    follower's answered fetches are not recorded."""
    names = {p.name for p in api.build("kraft-crash-window", "kraft", {}).properties()}
    assert "FetchAnswered" not in names  # rf 1, no consumer: nothing fetches
    model = api.build("kraft-stray", "kraft", {"crashes": 0})
    assert api.check(model).verdicts()["FetchAnswered"] == "witness_found"
    step = clients.replica_fetch

    def unrecorded(m, w, *args):  # the follower appends, the answer is not recorded
        return step(m, w, *args)._replace(ghost=w.ghost)
    monkeypatch.setattr(clients, "replica_fetch", unrecorded)
    model = api.build("kraft-stray", "kraft", {"crashes": 0})
    assert api.check(model).verdicts()["FetchAnswered"] == "witness_missing"
