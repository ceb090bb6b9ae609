"""The controller's procedures, one action per step (KIP-253 "Proposed Changes" §2 and §3).

Each step is its own action so that a controller failover (a fault action) can fall between
any two of them; the new controller finds its way back from the metadata store alone
(``recover``), as the KIP's "this procedure is fault tolerant" notes claim it can.

The controller's in-memory ``Memory.phase`` (``model.kafka.controller``) names the step
that runs next:

- ``idle``: the topic-znode listener fires on pending work (expansion, shrink) and the
  periodic deleted-partition check runs;
- ``expand-bump`` -> ``expand-lair`` -> ``expand-create`` -> ``expand-online``;
- ``shrink-bump`` -> ``shrink-lair`` -> ``shrink-um``;
- ``remove-assignment`` -> ``remove-znode``;
- ``recover`` (after a failover), ``resync-um`` (the failover resync's UpdateMetadata).

Every function takes (model config, world) and returns the next world, or None when the step
is not enabled.
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka import controller as election
from kmc.model.kafka.canon import replace_at, set_add, set_union
from kmc.model.kafka.kip253.channels import (
    head_from, hosts, stop_replica_requests, update_metadata_requests,
)
from kmc.model.kafka.messages import LAIR_RESP, controller_endpoint, lair
from kmc.model.kafka.zk.control import parts_for
from kmc.model.kafka.kip253.state import log_end
from kmc.model.kafka.kip253.znodes import (
    beyond_count, bumped, new_znode, record, total, undeleted, written, znode, znodes,
)

IDLE = election.IDLE


# ---- what the store says is pending (all a new controller can know) ----------------------
def expansion_pending(st) -> bool:
    """A partition of the assignment has no znode yet (KIP-253 §2: the admin wrote the new
    assignment, the controller has not created every partition znode)."""
    rec = record(st)
    return total(st, rec) > len(rec.partitions)


def unrecorded_marks(st) -> list:
    """Partitions >= undeleted_partition_count whose leaderEpochBeforeDeletion is still empty
    (KIP-253 §3, second bullet)."""
    zn, ps = beyond_count(st)
    return [p for p in ps if not zn[p].before]


def marked(st) -> list:
    """Partitions marked for deletion and still in the assignment."""
    zn, ps = beyond_count(st)
    return [p for p in ps if zn[p].before]


def orphans(st) -> list:
    """Partition znodes left behind by a removal the old controller did not finish."""
    return list(range(total(st), len(znodes(st))))


def advertised(st) -> int:
    """Partitions an UpdateMetadata advertises: the assignment's prefix that has partition
    znodes (a partition the controller has not created yet is not online)."""
    return min(total(st), len(znodes(st)))


def _um(w) -> tuple:
    """UpdateMetadata with the count in memory to every live broker."""
    return update_metadata_requests(w.ctl, w.mem.count, advertised(w.store),
                                    bk.live_ids(w.brokers))


def _send(m, w, *msgs):
    return m.net.send_all(w.net, msgs)


def _lair(w, count, parts, ack) -> tuple:
    """LeaderAndIsr about ``parts`` with KIP-253's undeleted_partition_count ``count``: one
    request per broker holding a replica of them (``hosts``), naming the partitions it
    holds with their leader and leader epoch as the topic lifecycle's controller does
    (``zk.control.parts_for``; ControllerChannelManager.scala, 2.8:
    ControllerBrokerRequestBatch.addLeaderAndIsrRequestForBrokers keeps a controller
    event's partition states per broker, one request each). KIP-253's era has no
    LeaderAndIsr type. ``ack``: the controller waits for the responses."""
    ctl, st = w.ctl, w.store
    me = controller_endpoint(ctl.active)
    return tuple(lair(me, b, ctl.epoch, "", parts_for(st, b, parts), count, ack)
                 for b in hosts(znodes(st), parts))


def _epochs(st, parts):
    zn = znodes(st)
    return tuple((p, zn[p].leader_epoch) for p in parts)


def _goto(w, phase, **kw):
    return w.mem._replace(phase=phase, **kw)


def awaited(w) -> list:
    """The brokers whose LeaderAndIsrResponse the controller waits for in its phase: those
    its last LeaderAndIsr went to (``hosts`` of the partitions it named; no other step
    writes those znodes' replicas in between)."""
    ph, st = w.mem.phase, w.store
    if ph == "expand-create":
        parts = [p for p, _e in w.mem.recorded]
    elif ph == "shrink-um":
        parts = range(w.mem.count)
    elif ph == "resync-um":
        parts = range(advertised(st))
    else:
        return []
    return hosts(znodes(st), parts)


def _await(m, w):
    """The network without the LeaderAndIsrResponses this controller waits for (one from
    each broker ``awaited`` names, each the oldest on its channel), taken together once
    all have arrived; None before."""
    ctl = w.ctl
    me = controller_endpoint(ctl.active)
    net = w.net
    for b in awaited(w):
        msg = head_from(net, b, me, m.net)
        if msg is None or msg.kind != LAIR_RESP or msg.epoch != ctl.epoch:
            return None
        net = m.net.deliver(net, msg)
    return net


# ---- expansion (KIP-253 §2) ---------------------------------------------------------------
def expand_count(m, w):
    """§2 bullet 2: "Controller updates the topic znode with the new
    undeleted_partition_count" (the listener fired on the admin's new assignment)."""
    st = w.store
    if w.mem.phase != IDLE or not expansion_pending(st) or unrecorded_marks(st):
        return None
    n = total(st)
    return w._replace(store=written(st, undeleted_=n), mem=_goto(w, "expand-bump", count=n))


def expand_bump(m, w):
    """§2 bullet 3: "For those partitions of this topic which already have the partition
    znode, controller increments their leaderEpoch by 1 in the partition znode" (the epochs
    before the increment are recorded in memory for leaderEpochAfterCreation)."""
    cfg = m.cfg
    if w.mem.phase != "expand-bump":
        return None
    st = w.store
    zn = znodes(st)
    have = range(advertised(st))
    recorded = _epochs(st, have)
    for p in have if cfg.flags.bump_before_split else ():
        zn = replace_at(zn, p, bumped(zn[p]))
    return w._replace(store=written(st, parts=zn),
                      mem=_goto(w, "expand-lair", recorded=recorded))


def expand_leader_and_isr(m, w):
    """§2 bullet 3: "Controller sends LeaderAndIsrRequest [with] the new leaderEpoch for each
    partition and the updated undeleted_partition_count", then waits for the response."""
    if w.mem.phase != "expand-lair":
        return None
    msgs = _lair(w, w.mem.count, [p for p, _e in w.mem.recorded], True)
    return w._replace(net=_send(m, w, *msgs), mem=_goto(w, "expand-create"))


def expand_create(m, w):
    """§2 bullet 4: on the LeaderAndIsrResponse, "for each partition of this topic which does
    not have the partition znode, controller creates the partition znode" with
    leaderEpochAfterCreation = the epochs recorded before the increment."""
    if w.mem.phase != "expand-create":
        return None
    net = _await(m, w)
    if net is None:
        return None
    st = w.store
    zn = znodes(st)
    zn = zn + tuple(new_znode(0, w.mem.recorded) for _p in range(len(zn), total(st)))
    return w._replace(store=written(st, parts=zn), net=net,
                      mem=_goto(w, "expand-online", recorded=()))


def expand_online(m, w):
    """§2 bullets 5-6: "Controller propagates the UpdateMetadataRequest with the latest
    undeleted_partition_count" and "continues the existing logic of partition expansion"
    (the new partitions come online: a LeaderAndIsr naming them, sent first)."""
    cfg = m.cfg
    if w.mem.phase != "expand-online":
        return None
    st = w.store
    lair = _lair(w, w.mem.count, range(total(st)), not cfg.flags.ack_only_awaited)
    return w._replace(net=_send(m, w, *lair, *_um(w)), mem=_goto(w, IDLE))


# ---- deletion (KIP-253 §3) ----------------------------------------------------------------
def shrink_record(m, w):
    """§3 bullet 2, first half: for a partition P1 >= undeleted_partition_count whose
    leaderEpochBeforeDeletion is empty, write it: every undeleted P2 -> P2's leaderEpoch."""
    if w.mem.phase not in (IDLE, "shrink-bump"):
        return None
    st = w.store
    if w.mem.phase == IDLE and expansion_pending(st):
        return None
    todo = unrecorded_marks(st)
    if not todo:
        return None
    p = todo[0]
    u = undeleted(st)
    before = _epochs(st, range(u))
    zn = znodes(st)
    zn = replace_at(zn, p, zn[p]._replace(before=before))
    return w._replace(store=written(st, parts=zn), mem=_goto(w, "shrink-bump", count=u))


def shrink_bump(m, w):
    """§3 bullet 2: "Controller also increments the leaderEpoch by 1 for partition znode of
    every P2" (every undeleted partition), once every partition the deletion removes has
    its leaderEpochBeforeDeletion written: all of them record the epochs before the bump."""
    if w.mem.phase != "shrink-bump" or \
            (m.cfg.flags.bump_after_marks and unrecorded_marks(w.store)):
        return None
    st = w.store
    zn = znodes(st)
    for p in range(w.mem.count):
        zn = replace_at(zn, p, bumped(zn[p]))
    return w._replace(store=written(st, parts=zn), mem=_goto(w, "shrink-lair"))


def shrink_leader_and_isr(m, w):
    """§3 bullet 2: "Then controller sends LeaderAndIsrRequest with the updated
    undeleted_partition_count for this topic and the updated leaderEpoch for P2". The
    controller then waits for the responses (``shrink_update_metadata``), as §2 has it
    for an expansion. §3's text has no wait (``shrink_awaits_lair`` off): UpdateMetadata
    follows at once and the controller is idle, so the drained check may find a marked
    partition empty before its leader applied the new count (docs: Findings)."""
    if w.mem.phase != "shrink-lair":
        return None
    f = m.cfg.flags
    if f.shrink_awaits_lair:
        msgs = _lair(w, w.mem.count, range(w.mem.count), True)
        return w._replace(net=_send(m, w, *msgs), mem=_goto(w, "shrink-um"))
    msgs = _lair(w, w.mem.count, range(w.mem.count), not f.ack_only_awaited)
    return w._replace(net=_send(m, w, *msgs, *_um(w)), mem=_goto(w, IDLE))


def shrink_update_metadata(m, w):
    """§3 bullet 3: on the LeaderAndIsrResponse, "Controller propagates the
    UpdateMetadataRequest with the latest undeleted_partition_count"."""
    if w.mem.phase != "shrink-um":
        return None
    net = _await(m, w)
    if net is None:
        return None
    return w._replace(net=m.net.send_all(net, _um(w)), mem=_goto(w, IDLE))


def check_drained(m, w):
    """§3 bullet 4: the periodic task "sends ListOffsetRequest to check the size of those
    partitions which have been marked for deletion"; at size 0 "controller sends
    StopReplicaRequest with delete=true". Only the highest partition can leave the
    assignment (partition ids stay a prefix 0..n-1)."""
    st = w.store
    if w.mem.phase != IDLE or expansion_pending(st) or unrecorded_marks(st):
        return None
    p = total(st) - 1
    if p < undeleted(st) or p not in marked(st):
        return None
    z = znode(st, p)
    log = bk.log_of(bk.get(w.brokers, z.leader), p)  # ListOffsets goes to the leader
    if log is not None and log.start < log_end(log):
        return None
    return w._replace(net=_send(m, w, *stop_replica_requests(w.ctl, p, z.replicas)),
                      mem=_goto(w, "remove-assignment"))


def remove_assignment(m, w):
    """§3 bullet 4: "removes the partition from the assignment in the topic znode"."""
    if w.mem.phase != "remove-assignment":
        return None
    st = w.store
    return w._replace(store=written(st, total_=total(st) - 1), mem=_goto(w, "remove-znode"))


def remove_znode(m, w):
    """§3 bullet 4: "and removes the partition znode". Then UpdateMetadata, so that clients
    see the partition gone (the KIP leaves this implicit)."""
    cfg = m.cfg
    if w.mem.phase != "remove-znode":
        return None
    st = w.store
    gone = orphans(st)
    w = w._replace(store=written(st, parts=znodes(st)[:total(st)]))
    ghost = w.ghost._replace(removed=set_union(w.ghost.removed, gone))
    net = _send(m, w, *_um(w)) if cfg.flags.um_after_removal else w.net
    return w._replace(net=net, mem=_goto(w, IDLE), ghost=ghost)


# ---- failover (the KIP's "this procedure is fault tolerant" notes) ------------------------
def on_elected(m, old, w):
    """After a failover (``zk.failover``: the new controller's memory is empty, the
    answers to the dead one are gone, requests already on the wire still arrive): the
    new controller's next step is ``recover``. ``old``: the state the dead controller
    left, whose unfinished procedure the witnesses name."""
    ghost = w.ghost._replace(failover_in=set_add(w.ghost.failover_in, procedure_kind(old)))
    return w._replace(mem=w.mem._replace(phase="recover"), ghost=ghost)


def procedure_kind(w) -> str:
    """Which procedure a failover interrupts: what the witnesses talk about."""
    ph = w.mem.phase
    if ph.startswith("expand") or expansion_pending(w.store):
        return "expand"
    if ph.startswith(("shrink", "remove")) or unrecorded_marks(w.store):
        return "shrink"
    return "idle"


def recover(m, w):
    """The new controller reads the topic and partition znodes and resumes: an unfinished
    expansion or mark restarts through the listener (idle); a marked partition re-drives the
    deletion from the epoch bump (§3: "the new controller can continue to read the
    undeleted_partition_count from the topic znode, update partition znode and sends
    LeaderAndIsrRequest"); an orphan znode finishes its removal; otherwise the usual failover
    resync: LeaderAndIsr with the current epochs and count, then UpdateMetadata."""
    cfg = m.cfg
    if w.mem.phase != "recover":
        return None
    st = w.store
    w = w._replace(mem=w.mem._replace(count=undeleted(st)))  # read the topic znode
    if expansion_pending(st) or unrecorded_marks(st):
        return w._replace(mem=_goto(w, IDLE))
    if marked(st) and cfg.flags.recovery_rebump:
        return w._replace(mem=_goto(w, "shrink-bump"))
    if orphans(st) and cfg.flags.recovery_removes_orphans:
        return w._replace(mem=_goto(w, "remove-znode"))
    msgs = _lair(w, undeleted(st), range(advertised(st)), True)
    return w._replace(net=_send(m, w, *msgs), mem=_goto(w, "resync-um"))


def resync_update_metadata(m, w):
    """The failover resync's second half (§2 and §3: "this procedure is fault tolerant"):
    on the LeaderAndIsrResponse, UpdateMetadata with the count the new controller read."""
    if w.mem.phase != "resync-um":
        return None
    net = _await(m, w)
    if net is None:
        return None
    return w._replace(net=m.net.send_all(net, _um(w)), mem=_goto(w, IDLE))


#: action name -> step, in the order actions are listed (traces store indices)
STEPS = {
    "ctrl-expand-count": expand_count,
    "ctrl-expand-bump": expand_bump,
    "ctrl-expand-leader-and-isr": expand_leader_and_isr,
    "ctrl-expand-create": expand_create,
    "ctrl-expand-online": expand_online,
    "ctrl-shrink-record": shrink_record,
    "ctrl-shrink-bump": shrink_bump,
    "ctrl-shrink-leader-and-isr": shrink_leader_and_isr,
    "ctrl-shrink-update-metadata": shrink_update_metadata,
    "ctrl-check-drained": check_drained,
    "ctrl-remove-assignment": remove_assignment,
    "ctrl-remove-znode": remove_znode,
    "ctrl-recover": recover,
    "ctrl-resync-update-metadata": resync_update_metadata,
}
