"""Random action sequences through the KIP-253 model: after every step the state keeps its
structural type invariants, and the Model contract stays consistent (actions() vs
successors(), next_state, canonical encoding). Seeded (derandomize) so every run is the same."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kmc.api import build
from kmc.model.encoding import check_canonical, fingerprint
from kmc.model.kafka.kip253.broker import log_at
from kmc.model.kafka.kip253.channels import BROKER
from kmc.model.kafka.messages import (
    LeaderAndIsr, LeaderAndIsrResponse, StopReplica, UpdateMetadata,
)
from kmc.model.kafka.kip253 import znodes as zn
from kmc.model.kafka.broker import Broker, Hosted, Log
from kmc.model.kafka.store import PartitionRecord

CASES = [("split-merge-spark", "kip253"), ("split-merge-spark", "linear-no-fencing"),
         ("shrink", "linear-no-blocking"), ("expand-failover", "modulo")]
MODELS = {case: build(*case) for case in CASES}


def check_structure(m, w):
    cfg = m.cfg
    check_canonical(w)
    assert fingerprint(w) == fingerprint(type(w)(*w))
    st_, g = w.store, w.group
    (b,) = w.brokers
    pmax = cfg.pmax
    # metadata store: one topic, its partition znodes a prefix of the partition ids
    assert [t.name for t in st_.topics] == [zn.TOPIC] and not st_.delete_markers
    assert cfg.N <= zn.undeleted(st_) <= zn.total(st_) <= pmax
    assert len(zn.znodes(st_)) <= pmax
    # the topic znode's assignment is kept apart only while it differs from the znodes
    assert bool(st_.assignments) == (zn.total(st_) != len(zn.znodes(st_)))
    for p, z in enumerate(zn.znodes(st_)):
        assert isinstance(z, PartitionRecord) and z.leader_epoch >= 0
        assert z.replicas == z.isr == (BROKER,) and z.leader == BROKER
        if p >= zn.total(st_):  # an orphan only mid-removal
            assert w.mem.phase in ("remove-znode", "recover")
        if z.after:
            assert [q for q, _e in z.after] == list(range(len(z.after)))
    # broker
    assert isinstance(b, Broker) and b.count >= cfg.N
    assert [x.partition for x in b.logs] == sorted({x.partition for x in b.logs})
    # it hosts every partition it has a log of, as their leader
    assert [h.partition for h in b.hosted] == [x.partition for x in b.logs]
    for log, h in zip(b.logs, b.hosted):
        assert isinstance(log, Log) and isinstance(h, Hosted) and 0 <= log.partition < pmax
        assert 0 <= log.start <= len(log.records) and h.leader == BROKER
        for key, prod, seq, epoch in log.records:
            assert key in cfg.keys and 0 <= prod < len(cfg.scripts)
            assert 0 <= seq < w.producers[prod].sent and 0 <= epoch <= h.leader_epoch
    # network: only controller <-> broker traffic of the four kinds
    for (src, dst), msgs in w.net:
        for msg in msgs:
            assert (msg.src, msg.dst) == (src, dst)
            if isinstance(msg, LeaderAndIsrResponse):
                assert src == BROKER and dst < 0
            else:
                assert isinstance(msg, (LeaderAndIsr, UpdateMetadata, StopReplica))
                assert src < 0 and dst == BROKER
                assert msg.epoch <= w.ctl.epoch
    # producers
    for i, pr in enumerate(w.producers):
        assert 0 <= pr.sent <= len(cfg.scripts[i]) and pr.count >= cfg.N
    # group: each partition owned at most once, positions within the logs
    owned = [x.p for parts in g.members for x in parts]
    assert len(g.members) == cfg.members and len(owned) == len(set(owned))
    assert all(p < g.basis[1] for p in owned)
    for p in range(pmax):
        assert 0 <= g.reported[p] <= g.committed[p]
        log = log_at(w, p)
        if log is not None:
            assert log.start <= g.committed[p] <= len(log.records)
    # ghost: each acknowledged message delivered at most once
    for prod, per_key in enumerate(w.ghost.delivered):
        seqs = [seq for key_log in per_key for seq, _p in key_log]
        assert len(seqs) == len(set(seqs)) and all(s < w.producers[prod].sent for s in seqs)


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(choices=st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=60))
def test_random_walks_keep_the_structure(case, choices):
    m = MODELS[case]
    w = m.init_states()[0]
    check_structure(m, w)
    for c in choices:
        succ = m.successors(w)
        assert [a for a, _t in succ] == m.actions(w)
        if not succ:
            break
        a, t = succ[c % len(succ)]
        assert m.next_state(w, a) == t
        w = t
        check_structure(m, w)
