"""Liveness on a real Spark standalone cluster on 127.0.0.1 (one master, two workers,
started with explorers.spark.cluster and stopped by PID): the fair-cycle search runs on
the cluster's executors and gives BFS's verdicts and lassos."""
from __future__ import annotations

import pytest

from kmc.api import check
from kmc.explorers.spark import cluster

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    state = str(tmp_path_factory.mktemp("cluster"))
    try:
        yield cluster.start(state, workers=2, cores=1, memory="1g", port=0, wait_s=120)
    finally:
        from kmc.explorers.spark.session import shutdown_gateway

        shutdown_gateway()
        cluster.stop(state)
        assert cluster.alive_pids(state) == {}


def test_liveness_on_the_standalone_cluster(standalone):
    b = check("lossy", "weak")
    s = check("lossy", "weak", explorer="spark", master=standalone.master_url)
    assert s.extra["spark"]["master"] == standalone.master_url
    assert s.extra["liveness"]["on"] == "spark"
    assert s.verdicts() == b.verdicts() == {"EventuallyDelivered": "violated"}
    assert {n: (d.trace.action_indices, d.trace.loop_start)
            for n, d in s.discoveries.items()} == \
        {n: (d.trace.action_indices, d.trace.loop_start) for n, d in b.discoveries.items()}
