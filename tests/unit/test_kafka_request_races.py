"""Where Kafka's code drops what a request or a response would do, checked over the
states the models reach.

- ZooKeeper era: a follower whose fetch state was made anew while its fetch was in
  flight (a LeaderAndIsr with a newer leader epoch, or a new log after the topic was
  deleted and created again) over a log without a leader epoch drops the response
  (AbstractFetcherThread.partitionFetchState starts such a state in Truncating, and
  processFetchRequest applies a response only to a state ready to fetch).
- ZooKeeper era, release lines: a LeaderAndIsr partition state at the leader epoch the
  broker has changes nothing but a missing topic ID (becomeLeaderOrFollower answers
  STALE_CONTROLLER_EPOCH).
- KRaft: DeleteTopics resolves the name in the committed state (QuorumController.
  findTopicIds at the last stable offset), so a topic whose creation is not committed
  yet cannot be deleted.
"""
from __future__ import annotations

from kmc.api import build
from kmc.model.kafka.broker import hosted_of, log_of
from kmc.model.kafka.zk.datapath import live_inc, on_fetch_response


def _states(model, max_depth: int):
    """(state, its successors) for every state within ``max_depth`` steps (BFS)."""
    frontier = list(model.init_states())
    seen = set(frontier)
    for _ in range(max_depth):
        nxt = []
        for s in frontier:
            succ = model.successors(s)
            yield s, succ
            for _a, t in succ:
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt


def test_a_refetched_replica_without_a_leader_epoch_drops_the_old_response():
    """Over a log without a leader epoch (no record, never led: the store never named
    the follower its leader) a fetch state made anew is Truncating and the old response
    is dropped."""
    m = build("stale-read", "zk-3.0", {"initial_records": 0, "records": 1})
    dropped = 0
    for s, succ in _states(m, 22):
        for a, t in succ:
            if a[0] != "deliver" or a[1].kind != "FetchResponse" or not a[1].records:
                continue
            msg = a[1]
            follower = s.brokers[msg.dst - 1]
            h, before = hosted_of(follower, msg.partition), log_of(follower, msg.partition)
            if h is None or before is None or before.records or h.leader != msg.src:
                continue
            if h.leader_epoch == msg.leader_epoch and before.inc == msg.asked_inc:
                continue  # the same fetch state
            led = any(x[0] == before.inc and x[1] == msg.partition and x[3] == msg.dst
                      for x in s.ghost.leaders)
            after = log_of(t.brokers[msg.dst - 1], msg.partition)
            if before.inc == live_inc(s.store) and not led:
                assert after.records == (), (s, msg)
                dropped += 1
                # had the store named the follower its leader, the log may have a leader
                # epoch (Partition.makeLeader): Fetching at offset 0, the response applies
                named = s.ghost._replace(leaders=tuple(sorted(s.ghost.leaders + (
                    (before.inc, msg.partition, 0, msg.dst),))))
                t2 = on_fetch_response(m, s._replace(ghost=named), msg)
                assert log_of(t2.brokers[msg.dst - 1], msg.partition).records == msg.records
    assert dropped  # the race is reached: such responses exist and are dropped


def test_an_equal_leader_epoch_changes_nothing_on_the_release_lines():
    m = build("failover-mid-delete", "zk-3.0", {})
    equal = 0
    for s, succ in _states(m, 20):
        for a, t in succ:
            if a[0] != "deliver" or a[1].kind != "LeaderAndIsr":
                continue
            b = a[1].dst
            before, after = s.brokers[b - 1], t.brokers[b - 1]
            for ps in a[1].parts:
                h, log = hosted_of(before, ps.partition), log_of(before, ps.partition)
                if h is None or log is None or h.leader_epoch != ps.leader_epoch \
                        or not log.topic_id or a[1].epoch < before.ctl_epoch:
                    continue
                equal += 1
                assert hosted_of(after, ps.partition) == h, (s, a)
                assert log_of(after, ps.partition) == log, (s, a)
    assert equal  # such requests are delivered


def _committed_topic(q) -> bool:
    """Whether the committed log names the topic: a TopicRecord not removed since."""
    live = False
    for e in q.log[:q.hwm]:
        for r in e.records:
            if r.kind == "TopicRecord":
                live = True
            elif r.kind == "RemoveTopicRecord":
                live = False
    return live


def test_deletetopics_never_deletes_a_creation_not_yet_committed():
    m = build("kraft-failover", "kraft", {"deletes": 2, "incarnations": 3})
    uncommitted = 0
    for s, succ in _states(m, 8):
        if not _committed_topic(s.quorum):
            uncommitted += 1
            assert not [a for a, _t in succ if a[0] == "delete"], s
    assert uncommitted  # states whose topic is created but not committed are reached
