"""The consumer group on the KRaft plane: rebalances triggered by the leader's partition
count, committed offsets kept by name (with their leader epochs) and deleted by the
coordinator's image, auto.offset.reset for partitions without a committed offset, and
the recreate-other-count scenario's verdicts (recorded by running the model)."""
import pytest

from kmc import api
from kmc.model.kafka.kraft import group as gp


def _model(**params):
    model = api.build("recreate-other-count", "kraft", params)
    (w,) = model.init_states()
    return model, w


def _joined(model, w):
    """The member learns the topic from broker-1 and the group joins."""
    w = model.next_state(w, ("member-refresh", 0, 1))
    assert gp.needs_rebalance(w.group)
    return model.next_state(w, ("group-rebalance",))


def test_range_assignor_gives_consecutive_runs():
    assert gp.range_assign(range(2), 1) == ((0, 1),)
    assert gp.range_assign(range(1), 2) == ((0,), ())
    assert gp.range_assign(range(2), 2) == ((0,), (1,))


def test_only_the_leaders_partition_count_triggers_a_rejoin():
    model, w = _model(members=2)
    w = model.next_state(w, ("member-refresh", 1, 1))
    assert not gp.needs_rebalance(w.group)  # a follower's metadata: no assignment snapshot
    w = _joined(model, w)
    assert w.group.snapshot == 1 and [m.pos for m in w.group.members] == [
        ((0, -1, -1, -1),), ()]
    assert not gp.needs_rebalance(w.group)
    # the re-created topic has two partitions: the leader's new count forces a rejoin
    for a in (("delete",), ("create", (2,)), ("fetch-metadata", 2), ("fetch-metadata", 2)):
        w = model.next_state(w, a)
    w = model.next_state(w, ("member-refresh", 1, 2))
    assert not gp.needs_rebalance(w.group)
    w = model.next_state(w, ("member-refresh", 0, 2))
    assert gp.needs_rebalance(w.group)
    w = model.next_state(w, ("group-rebalance",))
    assert w.group.snapshot == 2 and [m.pos for m in w.group.members] == [
        ((0, -1, -1, -1),), ((1, -1, -1, -1),)]
    assert [m.newest for m in w.group.members] == [2, 2]


@pytest.mark.parametrize("reset,pos,reads", [
    ("earliest", 1, 1), ("latest", 1, 0), ("none", gp.STOPPED, 0)])
def test_a_partition_without_committed_offset_is_positioned_by_reset(reset, pos, reads):
    model, w = _model(reset=reset)
    w = model.next_state(_joined(model, w), ("member-fetch", 0, 0))
    assert w.group.members[0].pos[0][1] == pos
    assert len(w.group.consumed) == reads and w.group.skipped == ()


def test_a_committed_offset_is_where_a_member_starts():
    model, w = _model(reset="latest")
    w = _joined(model, w)
    w = w._replace(group=w.group._replace(committed=((0, 0),)))
    w = model.next_state(w, ("member-fetch", 0, 0))
    assert w.group.members[0].pos[0][1] == 1 and w.group.consumed == ((1, 0, 0),)


def _consumed_then_deleted(model):
    (w,) = model.init_states()
    w = _joined(model, w)
    w = model.next_state(w, ("member-fetch", 0, 0))
    w = model.next_state(w, ("delete",))
    return w


def test_the_coordinator_deletes_offsets_when_its_image_drops_the_topic():
    model, _w = _model()
    w = _consumed_then_deleted(model)
    # a rebalance commits the position: broker-1 still knows A-0 by name
    w = w._replace(group=w.group._replace(snapshot=0))
    w = model.next_state(w, ("group-rebalance",))
    assert w.group.committed == ((0, 1),)
    assert w.group.committed_epochs == ((0, 0),)  # the position's epoch goes with it
    w = model.next_state(w, ("fetch-metadata", 1))
    assert w.group.committed == () and w.group.committed_epochs == ()
    # the flag's guard off: the committed offset outlives the topic
    model.flags = model.flags._replace(group_offsets_deleted=False)
    w2 = _consumed_then_deleted(model)
    w2 = model.next_state(w2._replace(group=w2.group._replace(snapshot=0)),
                          ("group-rebalance",))
    assert model.next_state(w2, ("fetch-metadata", 1)).group.committed == ((0, 1),)


def test_an_offset_commit_needs_the_partition_in_the_coordinators_image():
    model, _w = _model()
    w = _consumed_then_deleted(model)
    w = model.next_state(w, ("fetch-metadata", 1))  # the coordinator drops A
    w = model.next_state(w._replace(group=w.group._replace(snapshot=0)),
                         ("group-rebalance",))
    assert w.group.committed == ()  # UNKNOWN_TOPIC_OR_PARTITION


def test_recreate_other_count_verdicts_as_recorded():
    r = api.check("recreate-other-count", "kraft")
    assert r.complete and r.unique_states == 23446
    assert {n for n, v in r.verdicts().items() if v == "violated"} == {
        "NoWriteToDeletedTopic", "GroupNoRecordSkipped", "GroupNoStaleIncarnation"}
    r.assert_violated("GroupNoStaleIncarnation", 9)
    r.assert_violated("GroupNoRecordSkipped", 12)
    assert r.verdict("GroupAssignedRecreated") == "witness_found"


def test_without_a_lagging_broker_no_member_goes_back_to_the_deleted_topic():
    r = api.check("recreate-other-count", "kraft", {"brokers": 1})
    assert r.complete and r.verdict("GroupNoStaleIncarnation") == "holds"
    assert r.verdict("GroupAssignedRecreated") == "witness_found"


def test_latest_skips_what_was_written_before_the_first_fetch_and_earliest_does_not():
    params = {"members": 1, "records": 1, "deletes": 0, "incarnations": 1}
    r = api.check("recreate-during-expansion", "kraft", params)
    assert r.complete and r.ok and r.verdict("GroupOwnsNewPartition") == "witness_found"
    r = api.check("recreate-during-expansion", "kraft", dict(params, reset="latest"))
    assert {n for n, v in r.verdicts().items() if v == "violated"} == {
        "GroupNoRecordSkipped"}
    # the record is written and replicated (below the high watermark) before the
    # member's first fetch, which starts at the high watermark
    r.assert_violated("GroupNoRecordSkipped", 7)


def _group_property(model, name):
    (prop,) = [p for p in model.properties() if p.name == name]
    return prop


def test_the_assignment_splits_the_leaders_partitions_exactly_once():
    """GroupAssignmentExact holds on the scenario, and each way of breaking the range
    assignment (a partition twice, one left out, one beyond the count) violates it."""
    model, w = _model(members=2, brokers=1)
    r = api.check(model)
    assert r.complete and r.verdict("GroupAssignmentExact") == "holds"
    exact = _group_property(model, "GroupAssignmentExact")
    for _ in range(2):
        w = model.next_state(w, ("member-refresh", _, 1))
    w = model.next_state(w, ("group-rebalance",))
    assert w.group.snapshot == 1 and exact.check(w)
    g = w.group

    def owning(*parts, snapshot=1):
        mems = tuple(m._replace(pos=tuple((p, -1, -1, -1) for p in mine))
                     for m, mine in zip(g.members, parts))
        return w._replace(group=g._replace(members=mems, snapshot=snapshot))

    assert exact.check(owning((0,), (1,), snapshot=2))
    assert not exact.check(owning((0,), (0,)))        # one partition, two owners
    assert not exact.check(owning((0,), (), snapshot=2))  # partition 1 owned by nobody
    assert not exact.check(owning((0, 1), ()))        # beyond the leader's count


def test_an_assignment_that_gives_a_partition_twice_is_found_by_exploration(monkeypatch):
    monkeypatch.setattr(gp, "range_assign", lambda parts, k: tuple(
        tuple(parts) for _ in range(k)))
    r = api.check("recreate-other-count", "kraft", {"members": 2, "brokers": 1})
    r.assert_violated("GroupAssignmentExact", 3)  # init, the leader's refresh, the rebalance


def test_only_positions_are_committed_and_a_commit_is_found():
    """GroupCommitsPositions holds on the scenario and fails for a committed position
    that no member held (a negative offset); GroupOffsetsCommitted is found, declared
    only where a count change makes the group commit."""
    model, w = _model()
    r = api.check(model)
    assert r.verdict("GroupCommitsPositions") == "holds"
    assert r.verdict("GroupOffsetsCommitted") == "witness_found"
    commits = _group_property(model, "GroupCommitsPositions")
    committed = _group_property(model, "GroupOffsetsCommitted")
    assert commits.check(w) and not committed.check(w)
    w0 = w._replace(group=w.group._replace(committed=((0, 0),)))
    assert commits.check(w0) and committed.check(w0)
    assert not commits.check(w._replace(group=w.group._replace(committed=((0, -1),))))
    names = {p.name for p in api.build(
        "recreate-other-count", "kraft", {"reset": "none"}).properties()}
    assert "GroupCommitsPositions" in names and "GroupOffsetsCommitted" not in names


def test_committing_a_members_missing_position_is_found_by_exploration(monkeypatch):
    """A rebalance that commits -1 (no position) in place of a member's position
    violates GroupCommitsPositions."""
    real = gp.map_put
    monkeypatch.setattr(gp, "map_put", lambda c, p, pos: real(c, p, min(pos, -1)))
    r = api.check("recreate-other-count", "kraft", {"brokers": 1})
    assert r.verdict("GroupCommitsPositions") == "violated"


def test_the_coordinator_holds_offsets_only_for_partitions_its_image_knows():
    """CommittedOffsetsKnown holds on the scenario; a coordinator that keeps a deleted
    topic's offsets (onPartitionsDeleted not called) violates it, and so does an
    offset for a partition beyond the image's count, unless the coordinator is down."""
    params = {"records": 0}
    model, w = _model(**params)
    assert api.check(model).verdict("CommittedOffsetsKnown") == "holds"
    known = _group_property(model, "CommittedOffsetsKnown")
    assert known.check(w._replace(group=w.group._replace(committed=((0, 0),))))
    beyond = w._replace(group=w.group._replace(committed=((1, 0),)))
    assert not known.check(beyond)
    down = beyond.brokers[0]._replace(status="down")
    assert known.check(beyond._replace(brokers=(down,) + beyond.brokers[1:]))
    model = api.build("recreate-other-count", "kraft", params)
    model.flags = model.flags._replace(group_offsets_deleted=False)
    r = api.check(model)
    assert r.verdict("CommittedOffsetsKnown") == "violated"
    # the group consumed, rebalanced (committing), and the coordinator dropped the topic
    assert r.discoveries["CommittedOffsetsKnown"].trace.actions[-1] == ("fetch-metadata", 1)


def test_a_settled_group_has_read_every_record_of_the_live_topic(monkeypatch):
    """GroupReadsAll holds on the scenario (the reset policies' exceptions included);
    a leader that answers no member's fetch leaves the record unread once nothing is
    left to do, and a member that can still fetch is not settled."""
    for reset in ("earliest", "latest", "none"):
        r = api.check("recreate-other-count", "kraft", {"brokers": 1, "reset": reset})
        assert r.verdict("GroupReadsAll") == "holds", reset
    model, w = _model(brokers=1)
    reads_all = _group_property(model, "GroupReadsAll")
    w = _joined(model, w)
    assert reads_all.check(w)  # the member has a fetch to do: not settled yet
    monkeypatch.setattr(gp.clients, "serve", lambda *_a, **_k: (None, None))
    assert not reads_all.check(w)
    r = api.check("recreate-other-count", "kraft", {"brokers": 1})
    assert r.verdict("GroupReadsAll") == "violated"


def test_a_settled_group_owns_every_partition_of_the_live_topic(monkeypatch):
    """GroupOwnsLivePartitions holds on the scenario; a group that never rejoins on a
    partition count change leaves the re-created topic's second partition unowned
    once nothing is left to do (no record needs to be written there)."""
    r = api.check("recreate-other-count", "kraft", {"brokers": 1})
    assert r.verdict("GroupOwnsLivePartitions") == "holds"
    model, w = _model(brokers=1)
    owns = _group_property(model, "GroupOwnsLivePartitions")
    assert owns.check(w)  # the member has a refresh and a rebalance to do
    count = gp._count
    monkeypatch.setattr(gp, "needs_rebalance",
                        lambda g: g.gen == 0 and count(g.members[0]) > 0)
    r = api.check("recreate-other-count", "kraft", {"brokers": 1})
    assert r.verdict("GroupOwnsLivePartitions") == "violated"


def _recommitted(leader_epoch):
    """recreate-other-count with the deleted topic at ``leader_epoch``: the member read
    partition 0, the name was created again (epoch 0, two partitions) and the member
    took broker-2's metadata of it; the rebalance commits its old position by name,
    with its epoch, to a coordinator that still knows the old topic."""
    model, w = _model(leader_epoch=leader_epoch)
    for a in [("member-refresh", 0, 1), ("delete",), ("group-rebalance",),
              ("member-fetch", 0, 0), ("create", (2,)), ("fetch-metadata", 2),
              ("fetch-metadata", 2), ("member-refresh", 0, 2), ("group-rebalance",)]:
        w = model.next_state(w, a)
    assert w.group.committed == ((0, 1),)
    assert w.group.committed_epochs == ((0, leader_epoch),)
    return model, w


def test_a_committed_epoch_above_the_cached_one_leaves_no_current_leader():
    """ConsumerUtils.refreshCommittedOffsets raises the last seen epoch to the committed
    one; the re-created topic's own metadata (same ID, epoch 0) is refused from then on,
    from either broker: the member never fetches partition 0 again."""
    model, w = _recommitted(1)
    tid = w.group.members[0].meta[0]
    w = model.next_state(w, ("member-fetch", 0, 0))
    assert w.group.members[0].meta == (tid, ((-1, 1), (2, 0)))
    assert w.group.members[0].pos[0] == (0, 1, -1, 1)  # the committed offset, to validate
    for _ in range(2):  # broker-1 catches up: the coordinator drops the old offsets
        w = model.next_state(w, ("fetch-metadata", 1))
    assert w.group.committed == ()
    for b in (1, 2):
        assert model.next_state(w, ("member-refresh", 0, b)) is w
    assert model.next_state(w, ("member-fetch", 0, 0)) is w


def test_a_committed_epoch_not_above_the_cached_one_is_validated():
    """The same story at epoch 0: the committed offset is validated against the new
    leader (OffsetsForLeaderEpoch answers its log end), and the member reads on."""
    model, w = _recommitted(0)
    t = model.next_state(w, ("member-fetch", 0, 0))
    assert t.group.members[0].meta == w.group.members[0].meta
    assert t.group.members[0].pos[0][1] >= 0 and t.group.members[0].pos[0][2] == 2
