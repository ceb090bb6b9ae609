"""A consumer reads below the high watermark only (FetchIsolation.HIGH_WATERMARK), on the
ZooKeeper-era plane: with two replicas, a record only the leader holds is not served to
the consumer until the follower has it; the mutant that serves up to the log end is
caught by ConsumerReadsCommitted."""
from kmc import api
from kmc.model.kafka.zk import datapath

RF2 = {"rf": 2}


def _replica_logs(w, p=0):
    return [len(x.records) for br in w.brokers for x in br.logs if x.partition == p]


def test_the_log_end_mutant_reads_a_record_only_the_leader_holds():
    r = api.check("recreate-race", "kip516-consumer-reads-log-end", RF2,
                  stop_on_violation=True)
    assert r.verdicts()["ConsumerReadsCommitted"] == "violated"
    trace = r.discoveries["ConsumerReadsCommitted"].trace
    before, after = trace.states[-2], trace.states[-1]
    assert not before.ghost.consumed and after.ghost.consumed == ((1, 0, 0),)
    assert sorted(_replica_logs(before)) == [0, 1]  # the follower does not have it yet
    # the same step on the fixed model serves nothing from that state
    model = api.build("recreate-race", "kip516", RF2)
    fixed = datapath.consumer_fetch(model, before, 0)
    assert fixed is None or not fixed.ghost.consumed


def test_with_two_replicas_the_consumer_still_reads_every_committed_record():
    r = api.check("recreate-race", "kip516", RF2)
    assert r.complete
    verdicts = r.verdicts()
    assert verdicts["ConsumerReadsCommitted"] == "holds"
    assert verdicts["ConsumerReadsAll"] == "holds"
    assert verdicts["NoAcknowledgedLoss"] == "holds"


def test_high_watermark_is_the_smallest_in_sync_log_end():
    model = api.build("recreate-race", "kip516", RF2)
    w = model.init_states()[0]
    w = datapath.producer_refresh(model, w) or w
    w = datapath.produce(model, w, 0)
    inc = datapath.live_inc(w.store)
    assert sorted(_replica_logs(w)) == [0, 1]
    assert datapath.high_watermark(w.store, w.brokers, inc, 0) == 0
    assert datapath.high_watermark(w.store, w.brokers, inc + 1, 0) is None
