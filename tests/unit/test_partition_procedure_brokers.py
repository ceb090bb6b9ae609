"""The KIP-253 procedure's requests on a cluster of several brokers
(model/kafka/kip253/controller.py, channels.py): one LeaderAndIsr per broker holding a
replica, every answer awaited, UpdateMetadata to every live broker, the drained check at
the partition's leader, StopReplica to each replica. The scenarios run one broker; these
states give the topic's partitions two replicas each."""
import pytest

from kmc.api import build
from kmc.model.kafka import broker as bk
from kmc.model.kafka.kip253 import controller as ctrl
from kmc.model.kafka.kip253 import znodes
from kmc.model.kafka.kip253.broker import the_broker
from kmc.model.kafka.messages import LAIR, STOP, UM, lair_response


@pytest.fixture(scope="module")
def model():
    return build("expand", "kip253")


def _two_brokers(w):
    """``w`` with every partition on brokers 1 (leader) and 2, both holding its log."""
    zn = tuple(z._replace(replicas=(1, 2), isr=(1, 2)) for z in znodes.znodes(w.store))
    br = the_broker(w)
    return w._replace(store=znodes.written(w.store, parts=zn), brokers=(br, br))


def _messages(m, w):
    return list(m.net.messages(w.net))


def _step(m, w, name):
    t = ctrl.STEPS[name](m, w)
    assert t is not None, name
    return t


def test_each_replica_broker_gets_the_leader_and_isr_and_every_answer_is_awaited(model):
    m = model
    w = _two_brokers(m.init_states()[0])
    w = m.next_state(w, ("admin-alter",))  # 2 -> 3 partitions
    for name in ("ctrl-expand-count", "ctrl-expand-bump", "ctrl-expand-leader-and-isr"):
        w = _step(m, w, name)
    lairs = [x for x in _messages(m, w) if x.kind == LAIR]
    assert [x.dst for x in lairs] == [1, 2]
    assert all([s.partition for s in x.parts] == [0, 1] and x.count == 3 for x in lairs)
    assert ctrl.awaited(w) == [1, 2]
    one = w._replace(net=m.net.send(w.net, lair_response(lairs[0])))
    assert ctrl.expand_create(m, one) is None  # broker 2 has not answered
    both = one._replace(net=m.net.send(one.net, lair_response(lairs[1])))
    done = ctrl.expand_create(m, both)
    assert done is not None and done.mem.phase == "expand-online"
    left = [x for x in _messages(m, done) if x.kind != LAIR]
    assert left == []  # both answers taken, the requests still on their way
    online = _step(m, done, "ctrl-expand-online")
    assert sorted(x.dst for x in _messages(m, online) if x.kind == UM) == [1, 2]


def test_update_metadata_skips_a_broker_that_is_down(model):
    w = _two_brokers(model.init_states()[0])
    down = w._replace(brokers=(w.brokers[0], w.brokers[1]._replace(status=bk.DOWN)))
    assert [x.dst for x in ctrl._um(down)] == [1]
    assert [x.dst for x in ctrl._um(w)] == [1, 2]


def test_the_drained_check_reads_the_leader_and_stops_every_replica():
    m = build("shrink", "kip253")
    w = _two_brokers(m.init_states()[0])
    w = m.next_state(w, ("admin-alter",))
    w = _step(m, w, "ctrl-shrink-record")
    w = _step(m, w, "ctrl-shrink-bump")
    zn = znodes.znodes(w.store)
    zn = zn[:2] + (zn[2]._replace(leader=2),)  # broker 2 leads the marked partition 2
    w = w._replace(mem=w.mem._replace(phase="idle"),
                   store=znodes.written(w.store, parts=zn))
    follower, leader = w.brokers
    data = bk.with_log(leader, bk.log_of(leader, 2)._replace(records=((2, 0, 0, 0),)))
    assert ctrl.check_drained(m, w._replace(brokers=(follower, data))) is None
    stopped = ctrl.check_drained(m, w._replace(brokers=(data, leader)))
    assert stopped is not None  # the follower's copy is not what ListOffsets reads
    stops = [x for x in _messages(m, stopped) if x.kind == STOP]
    assert [(x.dst, x.partition) for x in stops] == [(1, 2), (2, 2)]


def test_responses_awaited_allows_one_answer_per_broker():
    m = build("expand", "kip253", {"bookkeeping": True})
    (p,) = [x for x in m.properties() if x.name == "ResponsesAwaited"]
    w = _two_brokers(m.init_states()[0])
    w = w._replace(mem=w.mem._replace(phase="expand-create"))
    first, second = ctrl._lair(w, 3, (0, 1), True)
    both = w._replace(net=m.net.send_all(w.net, (lair_response(first),
                                                  lair_response(second))))
    assert p.check(both)
    twice = both._replace(net=m.net.send(both.net, lair_response(first)))
    assert not p.check(twice)
