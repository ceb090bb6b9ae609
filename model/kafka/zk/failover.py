"""The controller's failover: one step for every feature of the cluster (``zk.cluster``).

In ZooKeeper-era Kafka the active controller dies (its ZooKeeper session expires) and
another candidate wins the election: it writes the /controller znode and a higher
/controller_epoch (KafkaController.elect), then becomes active
(KafkaController.onControllerFailover). What every feature sees alike:

- the old controller's in-memory state (its ControllerContext, the model's ``Memory``)
  is gone;
- so are the answers addressed to it: its connections to the brokers close with it;
- the requests it had already sent still arrive, and the brokers' controller-epoch fence
  rejects them (``zk.brokers``).

What the new controller does next is each feature's (``on_elected``): the topic
lifecycle's reads the znodes and resyncs every live broker in the same step
(``zk.control.resync``: onControllerFailover's initializeControllerContext, then the
initial LeaderAndIsr and UpdateMetadata; the deletion resumes from
/admin/delete_topics); KIP-253's procedure resumes from its ``recover`` phase, a step of
its own (``kip253.controller.recover``: the KIP's "this procedure is fault tolerant"
notes, where the new controller reads the topic and partition znodes).

A scenario allows ``m.failovers`` failovers: each raises the controller epoch by one, so
the epoch counts them.
"""
from __future__ import annotations

from kmc.model.kafka import controller as kc
from kmc.model.kafka.messages import controller_endpoint


def allowed(m, w) -> bool:
    """May the active controller still fail over? (``m.failovers`` per run.)"""
    return w.ctl.epoch - kc.FIRST_EPOCH < m.failovers


def candidates(m, w) -> list:
    """``("failover", winner)`` for each candidate that can win the election."""
    if not allowed(m, w):
        return []
    return [("failover", c) for c in kc.successors_of(w.ctl)]


def failover(m, w, winner):
    """Fault: the active controller dies and ``winner`` is elected with the next epoch;
    its memory is empty and the answers to the dead controller are dropped; then each
    feature's new controller takes over from the state the old one left (``old``).
    KIP-516 "DeleteTopics" (the new controller's deletion state); Kafka:
    KafkaController.elect -> onControllerFailover (initializeControllerContext,
    TopicDeletionManager.init), onControllerResignation drops the old channels."""
    if not allowed(m, w):
        return None
    old = w
    dead = controller_endpoint(w.ctl.active)
    w = w._replace(ctl=kc.fail_over(w.ctl, winner), mem=kc.Memory(),
                   net=m.net.drop(w.net, lambda x: x.dst == dead))
    for f in m.features:
        w = f.on_elected(m, old, w)
    return w
