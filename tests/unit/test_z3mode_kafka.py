"""On every state of every small Kafka scenario, each in several variants (every variant
on at least one scenario: tests/catalog_cases.py), z3 mode and fast mode give the same
verdict for every formula-declared property (always, quiescent and
sometimes alike, on every state, not only where the explorer would ask), and z3's
counterexample on a violating state is a real offending tuple.

States are enumerated by BFS through the Model contract (``successors`` and
``within_boundary``); z3 is asked once per distinct view, as in a run."""
import importlib

import pytest
from catalog_cases import covering_cases
from toymodels import reachable

from kmc.invariants.compile import compile_python
from kmc.invariants.logic import Quant
from kmc.invariants.z3mode import deciders, z3_properties
from test_z3mode import assert_violation  # pytest puts this directory on sys.path

#: a scenario with more reachable states than this is checked on its first LIMIT states
#: in BFS order: every scenario and every variant, both control planes (the properties are
#: the same across variants; the variants reach different states)
LIMIT = 2_500

pytestmark = pytest.mark.slow


def kafka_scenarios():
    out = []
    for pkg in ("kmc.model.kafka.zk", "kmc.model.kafka.kip253", "kmc.model.kafka.kraft"):
        try:
            mod = importlib.import_module(pkg)
        except ModuleNotFoundError as e:
            if e.name and pkg.startswith(e.name):
                continue  # the package has not landed
            raise
        out.extend(getattr(mod, "SCENARIOS", ()))
    return out


CASES = covering_cases(kafka_scenarios())


@pytest.mark.skipif(not CASES, reason="no Kafka scenario has landed yet")
@pytest.mark.parametrize("scenario,variant", CASES, ids=[f"{c.name}-{v}" for c, v in CASES])
def test_z3_and_fast_mode_agree_on_every_state(scenario, variant):
    model = scenario.build(*scenario.resolve(variant, {}))
    fast = {p.name: p for p in model.properties() if p.formula is not None}
    assert fast, f"{scenario.name}: no property is declared through a formula"
    # fast mode is what ``declare`` builds: the compiled formula applied to the view
    checks = [(fast[d.name], compile_python(d.formula), d, {})
              for d in deciders(z3_properties(fast.values()))]
    violating = {}
    # states outside, properties inside: views are cached per state
    for s in reachable(model, LIMIT):
        for p, fast_fn, d, verdict_of_key in checks:
            view = p.view(s)
            key = d.key(view)
            if key not in verdict_of_key:
                verdict_of_key[key] = d.decide(view)  # z3, once per distinct view
            got = verdict_of_key[key]
            assert got == fast_fn(view), (scenario.name, variant, p.name, model.format_state(s))
            if not got:
                violating.setdefault(p.name, view)
    for p, _fast, d, _ in checks:
        if p.name in violating and isinstance(p.formula, Quant) and p.formula.op == "forall":
            assert_violation(p.formula, violating[p.name], d.explain_view(violating[p.name]))
