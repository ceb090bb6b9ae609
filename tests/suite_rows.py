"""The expected verdicts the quality tests hold the models to, read from kmc's regression
suite (its one source): the complete BFS run of each scenario x variant of a family."""
import pytest

from kmc import catalog
from kmc.reports.regress.suite import builtin_suite, read_suite

SUITE = read_suite(builtin_suite())


def _plain_entries(family: str) -> dict:
    """(scenario, variant) -> its plain complete BFS entry (default parameters:
    ``-p plane=kraft`` and other parameter entries are not the plain one)."""
    out = {}
    for e in SUITE.entries:
        sc = catalog.get(e.scenario)
        if sc.family != family or e.params or e.bounds or e.options \
                or e.explorer != "bfs" or e.expect is None:
            continue
        out.setdefault((e.scenario, e.variant or sc.variant_default), e)
    return out


def complete_rows(family: str) -> dict:
    """(scenario, variant) -> Expectation of its plain complete BFS entry."""
    return {k: e.expect for k, e in _plain_entries(family).items()}


def in_smoke(family: str) -> set:
    """The (scenario, variant) pairs whose plain entry is in the suite's smoke tier: CI's
    `kmc regress --tier smoke` compares those runs with their records already."""
    smoke = {e.id for e in SUITE.select("smoke")}
    return {k for k, e in _plain_entries(family).items() if e.id in smoke}


def row_params(rows, smoke: set, ids=None) -> list:
    """``pytest.param`` per (scenario, variant) of ``rows``; a pair of ``smoke`` is in
    the test suite's full tier (``-m full``): its record is checked in CI by the smoke
    tier, and the quality test's own checks on it run with the full tier."""
    return [pytest.param(*k, id=None if ids is None else ids(k),
                         marks=[pytest.mark.full] if k in smoke else [])
            for k in sorted(rows)]
