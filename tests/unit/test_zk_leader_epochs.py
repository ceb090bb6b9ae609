"""Records carry their leader epoch on the ZooKeeper plane (``model.kafka.zk.epochs``):
a follower's Fetch that diverged from its leader's log is answered with the leader's end
offset of its last epoch and truncates, and the high watermark counts only what a
follower shares with its leader, so NoAcknowledgedLoss is checked with two crashes and
two records."""
from kmc import api
from kmc.model.kafka import broker as bk
from kmc.model.kafka.zk import datapath, epochs
from kmc.model.kafka.zk.epochs import (
    cache, common_prefix, diverging, end_offset_for, epoch_of, inc_of, label, pack,
    record, truncation_offset, unpack,
)

#: failover-mid-delete reduced to one incarnation, no failover and no deletion: the
#: leader's two crashes and the producer's two records are the whole story
BOUNDS = {"failovers": 0, "deletes": 0, "incarnations": 1, "crashes": 2, "records": 2}


def test_a_record_is_its_incarnation_and_leader_epoch():
    assert record(1, 0) == 1 and record(1, 2) == 201 and record(3, 12) == 1203
    assert (inc_of(201), epoch_of(201)) == (1, 2) and inc_of((0, 1, 0, 2)) is None
    assert label(1) == "1" and label(201) == "1@e2"


def test_end_offsets_as_the_leader_epoch_cache_answers_them():
    leader = cache((1, 1, 201), leading=3)  # epochs 0 and 2 in records; leads epoch 3
    assert leader == [(0, 0), (2, 2), (3, 3)]
    assert end_offset_for(leader, 3, 3) == (3, 3)   # the latest: the log end
    assert end_offset_for(leader, 2, 3) == (2, 3)   # up to the next epoch's start
    assert end_offset_for(leader, 1, 3) == (0, 2)   # the largest epoch below it
    assert end_offset_for(leader, 4, 3) is None     # above every epoch: undefined
    assert end_offset_for(cache((201,)), 1, 1) == (1, 0)  # below every epoch
    assert end_offset_for([], 0, 0) is None


def test_a_lower_epoch_appended_after_a_higher_one_replaces_it_in_the_cache():
    # a stale log (incarnation 1 at epochs 0 and 1) taken over by incarnation 2, whose
    # leader is at epoch 0: LeaderEpochFileCache.assign removes the entries not below it
    assert cache((1, 101, 2)) == [(0, 2)]
    assert cache((1, 101), leading=0) == [(0, 2)]
    assert cache((1, 201), leading=2) == [(0, 0), (2, 1)]  # its own epoch: unchanged
    assert unpack(pack((3, 2))) == (3, 2)


def test_a_follower_that_diverged_at_the_same_length_truncates():
    # the old leader appended at epoch 1 and crashed; the new leader (epoch 2) took
    # another record at that offset
    leader, follower = (1, 201), (1, 101)
    got = diverging(leader, 2, follower)
    assert got == (0, 1)
    assert truncation_offset(follower, got) == 1
    assert diverging(leader, 2, follower[:1]) is None  # a prefix of the leader's log
    assert diverging(leader, 2, ()) is None             # no lastFetchedEpoch
    assert common_prefix(leader, follower) == 1


def test_truncation_that_does_not_know_the_leaders_epoch_goes_in_steps():
    follower = (1, 101, 301)  # epochs 0, 1, 3; the leader has 0 and 2 and leads 4
    got = diverging((1, 201), 4, follower)
    assert got == (2, 2)
    assert truncation_offset(follower, got) == 2  # to the end of its epoch 1 first
    again = diverging((1, 201), 4, follower[:2])
    assert again == (0, 1) and truncation_offset(follower[:2], again) == 1
    # a last epoch above every epoch the leader knows: OFFSET_OUT_OF_RANGE
    assert diverging((1, 201), 2, follower) == "undefined"


def test_the_high_watermark_counts_only_what_a_follower_shares_with_its_leader():
    model = api.build("failover-mid-delete", "zk-3.9", BOUNDS)
    (w,) = model.init_states()
    part = w.store.topics[0].partitions[0]
    leader, follower = part.leader, [b for b in part.isr if b != part.leader][0]

    def with_records(w, b, records):
        br = w.brokers[b - 1]
        log = bk.log_of(br, 0)._replace(records=records)
        brokers = list(w.brokers)
        brokers[b - 1] = bk.with_log(br, log)
        return tuple(brokers)

    brokers = with_records(w, leader, (1, 201))
    assert datapath.high_watermark(w.store, brokers, 1, 0) == 1  # the follower has [1]
    brokers = with_records(w._replace(brokers=brokers), follower, (1, 101))
    assert datapath.high_watermark(w.store, brokers, 1, 0) == 1  # diverged: not 2
    brokers = with_records(w._replace(brokers=brokers), follower, (1, 201))
    assert datapath.high_watermark(w.store, brokers, 1, 0) == 2


def test_a_diverging_fetch_truncates_the_follower_in_the_model():
    """Somewhere in the state space a follower's Fetch diverges; delivering the answer
    leaves the follower with a shorter prefix of its log."""
    model = api.build("failover-mid-delete", "zk-3.9", BOUNDS)
    seen, frontier, found = set(), model.init_states(), 0
    while frontier and found < 5:
        nxt = []
        for s in frontier:
            for a, t in model.successors(s):
                if a[0] == "deliver" and a[1].kind == "FetchResponse" and \
                        a[1].error == "DIVERGING_EPOCH":
                    msg = a[1]
                    before = bk.log_of(s.brokers[msg.dst - 1], msg.partition).records
                    after = bk.log_of(t.brokers[msg.dst - 1], msg.partition).records
                    assert after == before[:len(after)] and len(after) < len(before)
                    found += 1
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    assert found


def test_without_the_truncation_diverged_replicas_never_converge(monkeypatch):
    """ReplicasEventuallyInSync watches the truncation: a leader that never answers a
    divergingEpoch leaves a follower's diverged record in place for good."""
    params = {**BOUNDS, "liveness": True}
    assert api.check("failover-mid-delete", "zk-3.9", params).verdict(
        "ReplicasEventuallyInSync") == "holds"
    monkeypatch.setattr(epochs, "diverging", lambda *_a: None)
    broken = api.check("failover-mid-delete", "zk-3.9", params)
    assert broken.verdict("ReplicasEventuallyInSync") == "violated"


def test_no_acknowledged_loss_is_checked_and_holds_with_two_crashes_and_two_records():
    r = api.check("failover-mid-delete", "zk-3.9", BOUNDS)
    assert r.verdict("NoAcknowledgedLoss") == "holds"
    assert "warnings" not in r.extra
    assert r.coverage["deliver-FetchResponse"] > 0
