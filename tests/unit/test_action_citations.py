"""Every action of the Kafka models says what it models: its step's docstring names the
KIP section and the Kafka source (a ``File.java`` / ``File.scala``, or ``Class.method``)
it follows, or says that there is none (a fault: "no Kafka code"; an action outside every
KIP: "no KIP section"). KIP-253's own procedure was never implemented in Kafka (the KIP
is under discussion), so its steps cite the KIP's sections (``§``) only.
"""
from __future__ import annotations

import inspect
import re

import pytest

from kmc.api import build
from kmc.model.kafka.zk.cluster import DELIVER, Cluster

KIP = re.compile(r"KIP-\d+|§\d|no KIP section")
SOURCE = re.compile(r"\b\w+\.(?:java|scala)\b|\b[A-Z][A-Za-z]+\.[a-z]\w+|no Kafka code")

#: one scenario per family of actions: the KRaft plane, the ZooKeeper plane's lifecycle
#: (with CreatePartitions, loss and purge_delay, so every step is listed), KIP-253
SCENARIOS = [
    ("kraft-stray", None, {}),
    ("recreate-during-expansion", "kip516",
     {"plane": "zk", "loss": True, "purge_delay": True}),
    ("split-merge-spark", "kip253", {}),
]


def _steps(model) -> dict:
    steps = dict(model._steps)
    if isinstance(model, Cluster):  # deliveries go to the cluster's handlers
        steps.update({f"deliver-{kind}": fn for kind, fn in DELIVER.items()})
    return {name: inspect.unwrap(fn) for name, fn in steps.items()}


def _kip253_only(fn) -> bool:
    return fn.__module__.startswith("kmc.model.kafka.kip253.")


@pytest.mark.parametrize("scenario,variant,params", SCENARIOS,
                         ids=[s for s, _v, _p in SCENARIOS])
def test_every_step_cites_its_kip_section_and_kafka_source(scenario, variant, params):
    model = build(scenario, variant, params)
    missing = []
    for name, fn in sorted(_steps(model).items()):
        doc = inspect.getdoc(fn) or ""
        if not KIP.search(doc):
            missing.append(f"{name} ({fn.__module__}.{fn.__name__}): no KIP section")
        if not _kip253_only(fn) and not SOURCE.search(doc):
            missing.append(f"{name} ({fn.__module__}.{fn.__name__}): no Kafka source")
    assert not missing, "\n".join(missing)


def test_the_check_tells_a_citation_from_none():
    assert KIP.search('KIP-516 "Deletion"') and KIP.search("§3 bullet 2")
    assert SOURCE.search("ReplicaManager.becomeLeaderOrFollower")
    assert SOURCE.search("LogManager.scala ``loadLogs``")
    assert not KIP.search("A broker crashes.")
    assert not SOURCE.search("The admin sends CreatePartitions for the name.")
