"""The public API's arguments: a mistyped one is a UsageError naming it, raised before
anything is built or explored, from ``build`` as from ``check``; every value a
scenario's parameter range admits builds; and a Scenario or Param declared so that no
run could use it is a ValueError when it is declared."""
import pytest

import kmc
from kmc import catalog
from kmc.errors import UsageError


@pytest.mark.parametrize("kwargs, words", [
    (dict(scenario=3), "scenario must be a name or a file path"),
    (dict(scenario=None), "scenario must be a name or a file path"),
    (dict(scenario="twophase", params="rm=3"), "params must be a dict"),
    (dict(scenario="twophase", params=[("rm", 3)]), "params must be a dict"),
    (dict(scenario="twophase", variant=["standard"]), "variant must be a variant name"),
])
def test_build_names_a_mistyped_argument(kwargs, words):
    with pytest.raises(UsageError, match=words):
        kmc.build(**kwargs)


@pytest.mark.parametrize("kwargs, words", [
    # a truthy string must not switch z3 mode, symmetry or deadlock checking on
    (dict(z3="no"), "z3 must be True or False"),
    (dict(symmetry="yes"), "symmetry must be True or False"),
    (dict(check_symmetry=1), "check_symmetry must be True or False"),
    (dict(stop_on_violation=2), "stop_on_violation must be True or False"),
    (dict(deadlock="no"), r"deadlock must be True or False \(or None\)"),
    (dict(variant=3), "variant must be a variant name"),
    (dict(progress="bar"), "progress must be a callable"),
    (dict(max_memory="8g"), "max_memory must be a whole number of bytes > 0"),
    (dict(max_memory=-1), "max_memory must be a whole number of bytes > 0"),
    (dict(max_memory=True), "max_memory must be a whole number of bytes > 0"),
])
def test_check_names_a_mistyped_switch_or_option(kwargs, words):
    with pytest.raises(UsageError, match=words):
        kmc.check("twophase", **kwargs)


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
@pytest.mark.parametrize("option", [dict(seed=3), dict(walks=10), dict(walk_length=5)])
def test_simulation_options_with_another_explorer_are_refused(explorer, option):
    # as ``kmc check --seed 3`` without ``--explorer simulate``: never silently ignored
    with pytest.raises(UsageError, match=f"{next(iter(option))} is a simulation option"):
        kmc.check("twophase", explorer=explorer, **option)


def test_simulation_options_take_their_defaults_and_values():
    default = kmc.check("twophase", explorer="simulate", walks=30)
    again = kmc.check("twophase", explorer="simulate", seed=0, walks=30, walk_length=50)
    other = kmc.check("twophase", explorer="simulate", seed=5, walks=30)
    assert default.unique_states == again.unique_states
    assert (default.generated_states, default.unique_states) != \
        (other.generated_states, other.unique_states)


def test_check_takes_its_switches_and_a_progress_function():
    calls = []
    r = kmc.check("twophase", deadlock=None, symmetry=False, max_memory=None,
                  progress=lambda *counts: calls.append(counts))
    assert r.unique_states == 288 and calls


@pytest.mark.parametrize("name", sorted(
    n for n, sc in catalog.builtins().items() if sc.family == "validation"))
def test_each_parameters_largest_value_builds(name):
    """``kmc list`` and the range error offer these values: each must build."""
    sc = catalog.builtins()[name]
    for p in sc.params:
        if isinstance(p.default, int) and not isinstance(p.default, bool) and p.maximum:
            kmc.build(name, params={p.name: p.maximum})


def _build(v, p):
    return (v, p)


@pytest.mark.parametrize("declare, words", [
    (lambda: kmc.Param("n", 0), r"parameter 'n': default 0 is outside its range 1\.\.inf"),
    (lambda: kmc.Param("n", 3, minimum=5, maximum=2), "minimum 5 is above maximum 2"),
    (lambda: kmc.Param("c", "z", choices=("a", "b")), "default 'z' is not one of"),
    (lambda: kmc.Param("x", 0.5), "default must be a bool, an int or a str, got float"),
    (lambda: kmc.Scenario("s", "", _build, variants=()), "scenario 's': variants is empty"),
    (lambda: kmc.Scenario("s", "", _build, variants=("a",), default_variant="b"),
     "default_variant 'b' is not one of its variants a"),
    (lambda: kmc.Scenario("s", "", _build, params=(kmc.Param("n", 1), kmc.Param("n", 2))),
     "parameter 'n' is declared twice"),
    (lambda: kmc.Scenario("s", "", _build, selector="plane",
                          params=(kmc.Param("plane", "zk", choices=("zk",)),)),
     "selector value plane=zk has no VariantSet"),
])
def test_a_scenario_declaration_mistake_is_named_where_it_is_made(declare, words):
    """A plugin's Scenario that no run could use fails when declared (its entry point
    then fails to load with this message), not with an IndexError at the first run."""
    with pytest.raises(ValueError, match=words):
        declare()
