"""Random action sequences through the topic-lifecycle model (hypothesis): after every
step the state is well-typed and canonical, actions() is deterministic, and every action
is drawn in a declared lane. The walk is the replay of a list of choices, so a failure
shrinks to a short, reproducible action sequence."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kmc import api
from kmc.model.encoding import check_canonical
from kmc.model.kafka import broker as bk
from kmc.model.kafka.broker import Broker, Hosted, Log
from kmc.model.kafka.store import FIRST_ID, NO_LEADER, ZERO_ID
from kmc.model.kafka.zk.state import (
    Admin, Budget, Client, Ghost, Memory, Meta, World,
)
from kmc.model.kafka.zk.variants import VARIANT_NAMES

SCENARIOS = ("stale-read", "stale-state", "offline-delete", "failover-mid-delete",
             "recreate-race", "lifecycle-large")
MODELS = {}


def model_for(name, variant):
    if (name, variant) not in MODELS:
        MODELS[name, variant] = api.build(name, variant)
    return MODELS[name, variant]


def is_sorted_set(t) -> bool:
    return isinstance(t, tuple) and list(t) == sorted(set(t))


def assert_well_typed(m, w):
    bd, f = m.bounds, m.flags
    check_canonical(w)
    assert type(w) is World and type(w.mem) is Memory and type(w.admin) is Admin
    assert type(w.budget) is Budget and type(w.ghost) is Ghost
    assert 0 <= w.budget.crashes <= bd.crashes and 0 <= w.budget.failovers <= bd.failovers
    assert 0 <= w.budget.reassign <= bd.reassign
    assert w.ctl.epoch == 1 + bd.failovers - w.budget.failovers
    # store: at most the one name; a marker only on an existing topic (legacy only)
    assert len(w.store.topics) <= 1 and w.store.incarnations <= bd.incarnations
    for t in w.store.topics:
        assert t.topic_id == (FIRST_ID + t.incarnation - 1 if f.topic_ids else ZERO_ID)
        assert len(t.partitions) == bd.partitions
        for p in t.partitions:
            assert set(p.replicas) <= set(m.broker_ids) and len(set(p.replicas)) == \
                len(p.replicas) and p.leader in set(p.replicas) | {NO_LEADER}
    assert set(w.store.delete_markers) <= {t.name for t in w.store.topics}
    assert not (f.immediate_delete and w.store.delete_markers)
    assert len(w.brokers) == bd.brokers
    for b, br in zip(m.broker_ids, w.brokers):
        assert type(br) is Broker and br.status in (bk.UP, bk.DOWN, bk.RESTARTING)
        parts = [x.partition for x in br.logs]
        assert parts == sorted(set(parts)) and all(0 <= p < bd.partitions for p in parts)
        hosted = [h.partition for h in br.hosted]  # online on a log it holds
        assert hosted == sorted(set(hosted)) and set(hosted) <= set(parts)
        assert 0 <= br.ctl_epoch <= w.ctl.epoch and br.applied_epoch <= w.ctl.epoch
        assert is_sorted_set(br.deleting) and (bd.purge_delay or not br.deleting)
        for r in br.logs:
            assert type(r) is Log and 1 <= r.inc <= w.store.incarnations
            assert all(1 <= g <= w.store.incarnations for g in r.records)
            assert f.topic_ids or (r.topic_id == ZERO_ID and r.flushed)
            if f.incremental_id_check:  # partition.metadata is flushed before an append
                assert not r.records or r.flushed
        for h in br.hosted:
            assert type(h) is Hosted and h.leader in set(m.broker_ids) | {-1}
            assert f.topic_ids or h.topic_id == ZERO_ID
    assert is_sorted_set(w.mem.pending)
    for x in m.net.messages(w.net):  # nothing is in flight to or from a down broker
        for end in (x.src, x.dst):
            assert end in m.broker_ids or -end in (1, 2)
            assert end < 0 or w.brokers[end - 1].status != bk.DOWN
    for c in (w.producer, w.consumer):
        assert type(c) is Client and (c.meta is None or type(c.meta) is Meta)
        assert all(p >= 0 for p in c.positions) and 0 <= c.left <= bd.records
    for name in ("reads", "attempts", "wrote", "failovers"):
        assert is_sorted_set(getattr(w.ghost, name))
    assert w.admin.next_op in ("delete", "create", "done")
    assert 0 <= w.admin.creates < bd.incarnations and 0 <= w.admin.deletes <= bd.deletes


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(SCENARIOS), variant=st.sampled_from(VARIANT_NAMES),
       choices=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=45))
def test_random_walks_stay_well_typed(name, variant, choices):
    m = model_for(name, variant)
    lanes = set(m.lanes())
    (w,) = m.init_states()
    assert_well_typed(m, w)
    for c in choices:
        acts = m.actions(w)
        assert acts == m.actions(w)  # deterministic: traces store action indices
        succ = m.successors(w)
        if not succ:
            break
        a, nxt = succ[c % len(succ)]
        assert a in acts and m.next_state(w, a) == nxt
        assert m.action_actor(a) in lanes
        msg = m.action_message(a, w)
        assert msg is None or (msg[0] in lanes and msg[1] in lanes)
        w = nxt
        assert_well_typed(m, w)
        assert m.representative(w) == m.representative(m.representative(w))
