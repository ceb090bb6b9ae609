"""Metadata records of the KRaft metadata log (``__cluster_metadata``).

KIP-516 "Compatibility with KIP-500": brokers no longer receive LeaderAndIsr,
UpdateMetadata or StopReplica; they read these records from the metadata log and learn
topic IDs from them. The record schemas live in Kafka's
metadata/src/main/resources/common/metadata/*.json; the model keeps the fields the topic
lifecycle reads.

Every record is a NamedTuple whose first field is a distinct kind string and whose other
fields are ints or tuples of ints, so records are orderable and canonical.

Simplifications:
- PartitionChangeRecord carries the resolved values (ISR, leader, leader epoch, partition
  epoch) instead of Kafka's optional "changed fields only" encoding; replaying either
  gives the same partition state.
- The fenced flag of a broker registration is one field; Kafka encodes it as
  RegisterBrokerRecord.fenced and BrokerRegistrationChangeRecord.fenced (a tri-state
  "fence / unfence / no change"), or the older FenceBrokerRecord / UnfenceBrokerRecord.
"""
from __future__ import annotations

from typing import NamedTuple


class TopicRecord(NamedTuple):
    """A topic is created: its name and topic ID (TopicRecord.json)."""
    kind: str
    name: str
    topic_id: int


class PartitionRecord(NamedTuple):
    """One partition of a created topic (PartitionRecord.json)."""
    kind: str
    topic_id: int
    partition: int
    replicas: tuple
    isr: tuple
    leader: int
    leader_epoch: int
    partition_epoch: int


class PartitionChangeRecord(NamedTuple):
    """A leader election or ISR change of one partition (PartitionChangeRecord.json)."""
    kind: str
    topic_id: int
    partition: int
    isr: tuple
    leader: int
    leader_epoch: int
    partition_epoch: int


class RemoveTopicRecord(NamedTuple):
    """A topic is deleted, named by its ID only (RemoveTopicRecord.json)."""
    kind: str
    topic_id: int


class RegisterBrokerRecord(NamedTuple):
    """A broker (re)registers with a new broker epoch (RegisterBrokerRecord.json)."""
    kind: str
    broker: int
    broker_epoch: int
    fenced: bool


class BrokerRegistrationChangeRecord(NamedTuple):
    """A broker is fenced or unfenced (BrokerRegistrationChangeRecord.json)."""
    kind: str
    broker: int
    broker_epoch: int
    fenced: bool


class LeaderChangeMessage(NamedTuple):
    """The control record a new quorum leader appends at the start of its epoch
    (KafkaRaftClient.onBecomeLeader; LeaderChangeMessage.json)."""
    kind: str
    leader: int
    epoch: int


def topic(name: str, topic_id: int) -> TopicRecord:
    return TopicRecord("TopicRecord", name, topic_id)


def partition(topic_id, p, replicas, isr, leader, leader_epoch=0, partition_epoch=0):
    return PartitionRecord("PartitionRecord", topic_id, p, tuple(replicas), tuple(isr),
                           leader, leader_epoch, partition_epoch)


def partition_change(topic_id, p, isr, leader, leader_epoch, partition_epoch):
    return PartitionChangeRecord("PartitionChangeRecord", topic_id, p, tuple(isr), leader,
                                 leader_epoch, partition_epoch)


def remove_topic(topic_id: int) -> RemoveTopicRecord:
    return RemoveTopicRecord("RemoveTopicRecord", topic_id)


def register_broker(broker: int, broker_epoch: int, fenced: bool = True):
    return RegisterBrokerRecord("RegisterBrokerRecord", broker, broker_epoch, fenced)


def registration_change(broker: int, broker_epoch: int, fenced: bool):
    return BrokerRegistrationChangeRecord("BrokerRegistrationChangeRecord", broker,
                                          broker_epoch, fenced)


def leader_change(leader: int, epoch: int) -> LeaderChangeMessage:
    return LeaderChangeMessage("LeaderChangeMessage", leader, epoch)
