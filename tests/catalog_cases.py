"""Which scenario x variant pairs a sweep over the catalogue runs when every pair would
cost too much: a cover of both dimensions.

The variants of a family are data for the same step code (a guard on or off, a release
line's choices), so an explorer or a decision procedure meets the same code on every
variant; what a variant changes is which states a scenario reaches. The cover keeps
both: every scenario runs its default variant and its family's first one (the unfixed
protocol: legacy, modulo, kraft), and every variant runs on at least one scenario of
its family, the variants dealt out to the scenarios in turn, so each scenario also runs
a share of the rest. Deterministic: the same catalogue gives the same cases.
"""
from __future__ import annotations


def covering_cases(scenarios) -> list[tuple]:
    """``scenarios``: objects with ``name``, ``family``, ``variants`` (a sequence) and
    ``variant_default``. Returns (scenario, variant) pairs, scenarios in the given
    order, each scenario's variants in its own order."""
    by_family: dict = {}
    for sc in scenarios:
        by_family.setdefault(sc.family, []).append(sc)
    chosen = {sc.name: {sc.variant_default, sc.variants[0]} for sc in scenarios}
    for family in by_family.values():
        variants = sorted({v for sc in family for v in sc.variants},
                          key=lambda v: min(sc.variants.index(v) for sc in family
                                            if v in sc.variants))
        for k, v in enumerate(variants):
            holders = [sc for sc in family if v in sc.variants]
            chosen[holders[k % len(holders)].name].add(v)
    return [(sc, v) for sc in scenarios for v in sc.variants if v in chosen[sc.name]]
