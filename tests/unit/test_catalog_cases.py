"""The cover the catalogue sweeps run (tests/catalog_cases.py): every scenario on its
default variant and its family's first, every variant of a family on some scenario."""
from catalog_cases import covering_cases

from kmc import catalog


def test_every_scenario_and_every_variant_is_covered():
    scenarios = [sc for _n, sc in sorted(catalog.scenarios().items())]
    cases = covering_cases(scenarios)
    assert len(set((sc.name, v) for sc, v in cases)) == len(cases)
    for sc in scenarios:
        mine = {v for s, v in cases if s is sc}
        assert {sc.variant_default, sc.variants[0]} <= mine <= set(sc.variants)
    for family in {sc.family for sc in scenarios}:
        variants = {v for sc in scenarios if sc.family == family for v in sc.variants}
        assert variants == {v for sc, v in cases if sc.family == family}
    assert len(cases) < sum(len(sc.variants) for sc in scenarios)
