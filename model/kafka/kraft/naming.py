"""What each KRaft action is called in a trace, and which lane of a picture takes it
(``Model.format_action``, ``Model.action_actor`` of ``model.KRaftModel``)."""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka.kraft import group, partitions
from kmc.model.kafka.kraft import quorum as qm
from kmc.model.kafka.kraft.state import TOPIC


def format_action(action) -> str:
    k = action[0]
    if k == "replicate":
        return f"controller-{action[1]} fetches the metadata log"
    if k == "failover":
        return f"controller-{action[1]} wins the election (failover)"
    if k == "lease-expires":
        return f"broker-{action[1]}'s heartbeat lease runs out at the controller"
    if k == "register":
        return f"broker-{action[1]} registers again (the failover lost its registration)"
    if k == "create":
        return f"CreateTopics {TOPIC} replicas={list(action[1])}"
    if k == "delete":
        return f"DeleteTopics {TOPIC}"
    if k == "delete-logs":
        return (f"broker-{action[1]} removes the -delete directory of {TOPIC}-"
                f"{action[2]} (topic ID {action[3]})")
    if k == "flush-metadata":
        return f"broker-{action[1]} flushes partition.metadata of {TOPIC}-{action[2]}"
    if k == "replica-fetch":
        return f"broker-{action[1]} fetches {TOPIC}-{action[2]} from its leader"
    if k == "consumer-refresh":
        return f"consumer: Metadata answered by broker-{action[1]}"
    if k == "consumer-fetch":
        return "consumer fetches from the leader it knows"
    if k == "producer-refresh":
        return f"producer: Metadata answered by broker-{action[1]}"
    if k == "produce":
        return "producer writes a record to the leader it knows"
    if k == "produce-hint":
        return ("producer: NOT_LEADER_OR_FOLLOWER, takes the answer's CurrentLeader "
                "(KIP-951)")
    if k in ("send-create-partitions", "create-partitions"):
        return partitions.format_action(action)
    if k in ("member-refresh", "group-rebalance", "member-fetch"):
        return group.format_action(action)
    return f"{k} broker-{action[1]}"


def action_actor(action) -> str:
    k = action[0]
    if k in ("replicate", "failover"):
        return qm.lane(action[1])
    if k in ("create", "delete", "send-create-partitions"):
        return "admin"
    if k == "create-partitions":
        return "controller"
    if k in ("member-refresh", "group-rebalance", "member-fetch"):
        return "group"
    if k.startswith("consumer"):
        return "consumer"
    if k.startswith("produce"):
        return "producer"
    if k in ("fence", "unfence", "lease-expires"):
        return "controller"
    return bk.lane(action[1])
