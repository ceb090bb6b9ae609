"""The expected verdicts the quality tests hold the models to, read from kmc's regression
suite (its one source): the complete BFS run of each scenario x variant of a family."""
from kmc import catalog
from kmc.reports.regress.suite import builtin_suite, read_suite

SUITE = read_suite(builtin_suite())


def complete_rows(family: str) -> dict:
    """(scenario, variant) -> Expectation of its plain complete BFS entry (default
    parameters: ``-p plane=kraft`` and other parameter entries are not the plain one)."""
    out = {}
    for e in SUITE.entries:
        sc = catalog.get(e.scenario)
        if sc.family != family or e.params or e.bounds or e.options \
                or e.explorer != "bfs" or e.expect is None:
            continue
        out.setdefault((e.scenario, e.variant or sc.variant_default), e.expect)
    return out
