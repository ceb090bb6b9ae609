"""How actions look: text for traces, lanes and arrows for message-sequence pictures."""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka.broker import lane as broker_lane
from kmc.model.kafka.controller import lane as controller_lane
from kmc.model.kafka.messages import delivery_text
from kmc.model.kafka.messages import endpoint_lane as endpoint
from kmc.model.kafka.messages import id_text as _tid
from kmc.model.kafka.messages import label as message_label
from kmc.model.kafka.zk import expansion


def action_name(action) -> str:
    kind = action[0]
    if kind in ("deliver", "lose"):
        return f"{kind}-{action[1].kind}"
    return kind


def format_action(action) -> str:
    kind = action[0]
    if kind in ("deliver", "lose"):
        return delivery_text(action[1], "deliver" if kind == "deliver" else "LOSE")
    if kind == "create":
        return f"admin CreateTopics A replicas={list(action[1])}"
    if kind == "delete":
        return f"admin DeleteTopics A by {action[1]}"
    if kind == "reassign":
        return f"admin reassign A-{action[1]} away from down broker-{action[2]}"
    if kind == "retry-stop":
        _, c, b, p, tid, _inc = action
        return f"controller-{c} retries StopReplica A-{p} {_tid(tid)} to broker-{b}"
    if kind == "fetch":
        return f"broker-{action[1]} fetches A-{action[2]} from its leader"
    if kind == "purge":
        return f"broker-{action[1]} purges deleting/"
    if kind in ("crash", "restart"):
        return f"broker-{action[1]} {'crashes' if kind == 'crash' else 'restarts'}"
    if kind == "failover":
        return f"controller failover: controller-{action[1]} elected"
    if kind in ("produce", "consumer-fetch"):
        who = "producer produces to" if kind == "produce" else "consumer fetches"
        return f"{who} A-{action[1]}"
    if kind in EXPANSION:
        return format_expansion(action)
    return kind.replace("-", " ")


EXPANSION = frozenset(expansion.KINDS)


def action_actor(action) -> str:
    kind = action[0]
    if kind == "deliver":
        return endpoint(action[1].dst)
    if kind == "lose":
        return endpoint(action[1].src)
    if kind in ("create", "delete", "reassign", "send-create-partitions"):
        return "admin"
    if kind in EXPANSION:  # the controller (or its broker) that takes the step
        return controller_lane(action[1])
    if kind in ("fetch", "purge", "crash", "restart"):
        return broker_lane(action[1])
    if kind == "failover":
        return controller_lane(action[1])
    if kind in ("produce", "producer-refresh"):
        return "producer"
    if kind in ("consumer-fetch", "consumer-refresh"):
        return "consumer"
    if kind == "retry-stop":
        return controller_lane(action[1])
    return "system"


def action_message(action, state, flags=None):
    """(from lane, to lane, label) for sends and deliveries, else None. ``flags`` (the
    variant) decides whether Fetch and Produce carry a topic ID."""
    fetch_id = flags is None or flags.fetch_topic_id
    produce_id = flags is None or (flags.topic_ids and flags.produce_topic_id)
    kind = action[0]
    if kind in ("deliver", "lose"):
        m = action[1]
        label = message_label(m) + (" (lost)" if kind == "lose" else "")
        return endpoint(m.src), endpoint(m.dst), label
    if state is None:
        return None
    ctl = controller_lane(state.ctl.active)
    if kind == "create":
        return "admin", ctl, f"CreateTopics A replicas={list(action[1])}"
    if kind == "delete":
        return "admin", ctl, f"DeleteTopics A by {action[1]}"
    if kind == "reassign":
        return "admin", ctl, f"AlterPartitionReassignments A-{action[1]} -broker-{action[2]}"
    if kind == "retry-stop":
        _, _c, b, p, tid, _inc = action
        return ctl, broker_lane(b), f"StopReplica delete A-{p} {_tid(tid)} (retry)"
    if kind == "fetch":
        b, p = action[1], action[2]
        br = state.brokers[b - 1]
        h, r = bk.hosted_of(br, p), bk.log_of(br, p)
        if h is None or h.leader < 1:
            return None
        tid = r.topic_id if fetch_id else 0
        return broker_lane(b), broker_lane(h.leader), \
            f"Fetch A-{p} {_tid(tid)} le={h.leader_epoch} offset={len(r.records)}"
    if kind in ("produce", "consumer-fetch"):
        who = "producer" if kind == "produce" else "consumer"
        meta = state.producer.meta if kind == "produce" else state.consumer.meta
        if meta is None or action[1] >= len(meta.leaders) or meta.leaders[action[1]][0] < 1:
            return None
        lead, le = meta.leaders[action[1]]
        if kind == "produce":
            tid = meta.topic_id if produce_id else 0
            return who, broker_lane(lead), f"Produce A-{action[1]} {_tid(tid)}"
        tid = meta.topic_id if fetch_id else 0
        pos = state.consumer.positions[action[1]]
        return who, broker_lane(lead), f"Fetch A-{action[1]} {_tid(tid)} le={le} offset={pos}"
    if kind in ("producer-refresh", "consumer-refresh"):
        return "store", kind.split("-")[0], "Metadata A"
    if kind in EXPANSION:
        return expansion_message(action, state)
    return None


# ---- CreatePartitions (model.kafka.zk.expansion) ------------------------------------------
def expansion_message(action, w):
    """(from lane, to lane, label) of an expansion step in ``w``, for sequence pictures."""
    kind, ctl = action[0], controller_lane(w.ctl.active)
    if kind == "send-create-partitions":
        return "admin", ctl, "CreatePartitions A"
    if kind == "partition-modifications":
        return "store", controller_lane(action[1]), "watch: /brokers/topics/A changed"
    req = w.requests[action[2]]
    lane = controller_lane(action[1])
    if kind == "create-partitions-read":
        return lane, "store", f"read /brokers/topics/A (CreatePartitions count={req[0]})"
    if kind == "create-partitions-read-id":
        return lane, "store", "read the topic ID of /brokers/topics/A"
    existing, new = req[2][:2]
    written = "" if len(req[2]) < 3 else f" id={req[2][2]}" if req[2][2] else " no id"
    return lane, "store", ("setData /brokers/topics/A any version: "
                           f"{[list(r) for r in existing + new]}{written}")


_STEPS = {"create-partitions-read": "reads", "create-partitions-read-id": "reads the ID of"}


def format_expansion(action) -> str:
    """One line of trace text for an expansion step."""
    kind = action[0]
    if kind == "send-create-partitions":
        return "admin sends CreatePartitions A"
    if kind == "partition-modifications":
        return f"controller-{action[1]} handles the change of /brokers/topics/A"
    step = _STEPS.get(kind, "writes")
    return f"controller-{action[1]}'s broker {step} /brokers/topics/A for " \
           f"CreatePartitions (request {action[2]})"
