"""CreatePartitions on the KRaft plane: the controller's validation, the name resolved
when the request is handled (not when it was sent), brokers creating the new replicas
from their image, and the recreate-during-expansion scenario's witnesses."""
from kmc import api
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import partitions as pt
from kmc.model.kafka.kraft import records as rc
from kmc.model.kafka.kraft.quorum import Entry

OLD, NEW = 2, 3  # topic IDs of the first and the re-created incarnation


def _img(*records, brokers=(1, 2)):
    recs = tuple(rc.register_broker(b, 1, False) for b in brokers) + records
    return im.build((Entry(1, recs),))


def test_the_controller_validates_against_the_topic_it_finds_by_name():
    one = (rc.topic("A", OLD), rc.partition(OLD, 0, (1, 2), (1, 2), 1))
    assert pt.outcomes(_img(), 2) == [(pt.UNKNOWN, ())]
    assert pt.outcomes(_img(*one), 1) == [(pt.INVALID_PARTITIONS, ())]
    grown = pt.outcomes(_img(*one), 2)
    # one outcome per placement of the new partition's two replicas on the two brokers
    assert [e for e, _r in grown] == ["", ""]
    recs = [r for _e, r in grown]
    assert {r[0].replicas for r in recs} == {(1, 2), (2, 1)}
    for (rec,) in recs:  # partition 1 of the same topic ID, rf of partition 0
        assert (rec.topic_id, rec.partition, rec.isr, rec.leader) == \
            (OLD, 1, rec.replicas, rec.replicas[0])
    # placement uses unfenced brokers only: with one left, rf 2 cannot be placed
    fenced = _img(*one, rc.registration_change(2, 1, True))
    assert pt.outcomes(fenced, 2) == [(pt.INVALID_RF, ())]


def _model():
    model = api.build("recreate-during-expansion", "kraft")
    (w,) = model.init_states()
    return model, w


def test_a_request_sent_for_one_incarnation_grows_the_one_live_when_it_is_handled():
    model, w = _model()
    w = model.next_state(w, ("send-create-partitions",))
    assert w.requests == ((2, 1),) and w.adds_left == 0
    w = model.next_state(w, ("delete",))
    # handled now: the name is gone, nothing is written
    gone = model.next_state(w, ("create-partitions", 0, 0))
    assert gone.quorum.log == w.quorum.log and gone.requests == ()
    assert gone.expansions == ((1, 0, pt.UNKNOWN),)
    # handled after the re-creation: the new incarnation gets partition 1
    w = model.next_state(w, ("create", (1, 2)))
    later = model.next_state(w, ("create-partitions", 0, 0))
    assert later.expansions == ((1, 2, ""),)
    (rec,) = later.quorum.log[-1].records
    assert (rec.kind, rec.topic_id, rec.partition) == ("PartitionRecord", NEW, 1)
    t = im.topic_by_name(model.committed_image(later.quorum), "A")
    assert t.topic_id == NEW and len(t.parts) == 2


def test_brokers_create_the_new_partition_from_their_image():
    model, w = _model()
    w = model.next_state(w, ("send-create-partitions",))
    w = model.next_state(w, ("create-partitions", 0, 0))
    (rec,) = w.quorum.log[-1].records
    for b in rec.replicas:
        assert all(h.partition != 1 for h in w.brokers[b - 1].hosted)
        w = model.next_state(w, ("fetch-metadata", b))
        h = [h for h in w.brokers[b - 1].hosted if h.partition == 1]
        assert h and h[0].topic_id == OLD and h[0].leader == rec.leader


def test_the_request_is_offered_once_per_placement_and_only_while_in_flight():
    model, w = _model()
    assert ("create-partitions", 0, 0) not in model.actions(w)
    w = model.next_state(w, ("send-create-partitions",))
    acts = [a for a in model.actions(w) if a[0] == "create-partitions"]
    assert acts == [("create-partitions", 0, 0), ("create-partitions", 0, 1)]
    assert ("send-create-partitions",) not in model.actions(w)  # adds=1 spent


def test_recreate_during_expansion_reaches_its_story():
    r = api.check("recreate-during-expansion", "kraft")
    assert r.complete and r.ok
    for name in ("ExpansionAfterDeletion", "ExpansionOfRecreated", "NameRecreated"):
        assert r.verdict(name) == "witness_found", name
