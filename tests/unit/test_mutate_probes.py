"""The baseline's infection probes (kmc.mutate.probes): the instrumented code computes
what the original does, and an evaluation that no probe marks for a mutant gives that
mutant's own result."""
import ast
import itertools

import pytest

from kmc.mutate import probes, sites
from kmc.mutate.isolation import mutants_of, mutated_tree
from kmc.mutate.runner import make_plan
from kmc.mutate.worker import baseline_task
from kmc.reports.regress.suite import Entry
from mutate_toy import line_of, toy_file

SOURCE = '''from typing import NamedTuple


class P(NamedTuple):
    a: int
    b: int


def f(x, y, p, items):
    out = []
    if x > 0 and y:
        out.append(1)
    if x == 1 or y > 2:
        out.append(2)
    if not (x < 2):
        out.append(3)
    q = p._replace(a=x, b=p.b)
    v = x if y > 1 else -x
    if 0 <= x < 3:
        out.append(4)
    else:
        out.append(5)
    w = (y and x) or 7
    if x in items:
        out.append(6)
    pad = (1,) * max(x, 0)
    head = items[0] + items[-1] * 2 + (y & 1)
    single = (x,)[0] + (x,)[-1]
    return out, q, v, w, g(x), x >= y, pad, head, single, h(x, y, items)
    

def g(n):
    return n > 0 and (g(n - 1) or n)


def h(x, y, items):
    seen = [v for v in items if v > x and v != y]
    some = any(v < x or v == y for v in items)
    kept = tuple(v for v in items if v > 0 and y != 3 and (x == 0 or v < y))
    try:
        if items[x] > y:
            seen.append(0)
    except IndexError:
        seen.append(-1)
    t = x > 0 and items[x % 2] > y or y > 2

    class K:
        z = x > 1 and y
        if x > 1:
            z = 2
    return seen, some, kept, t, K.z
'''
PATH = "/probe-test/probed.py"


def _load(tree):
    names = {probes.NAME: probes, "__name__": "probed"}
    exec(compile(tree, PATH, "exec"), names)
    return names["f"], names["P"]


def _call(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # a mutant may raise: its result is the exception's type
        return ("raised", type(e).__name__)


@pytest.fixture(scope="module")
def mutants():
    ms = mutants_of(PATH, "probed.py", "probed", SOURCE)
    numbers = sites.numbers(ms)
    tree, watched = sites.instrument(ast.parse(SOURCE), numbers[PATH])
    probed, P = _load(tree)
    original, _P = _load(ast.parse(SOURCE))
    own = {k: _load(mutated_tree(m, SOURCE))[0] for k, m in enumerate(ms) if k in watched}
    assert {ms[k].operator for k in watched} == {"cmp", "const", "drop-and", "drop-or",
                                                  "and-or", "drop-field", "drop-stmt"}
    return ms, probed, original, own, P


INPUTS = [(x, y, (1, 2)) for x, y in itertools.product(range(-1, 4), range(0, 4))]


def _infected(probed, P, x, y, items):
    probes.SINK.clear()
    got = _call(probed, x, y, P(1, 2), items)
    return got, set(probes.SINK)


def test_the_probed_code_computes_what_the_original_does(mutants):
    _ms, probed, original, _own, P = mutants
    for x, y, items in INPUTS:
        assert _infected(probed, P, x, y, items)[0] == _call(original, x, y, P(1, 2), items)


def test_a_mutant_no_probe_marks_gives_the_original_result(mutants):
    ms, probed, original, own, P = mutants
    checked = 0
    for x, y, items in INPUTS:
        want = _call(original, x, y, P(1, 2), items)
        _got, infected = _infected(probed, P, x, y, items)
        for k, fn in own.items():
            if k not in infected:
                assert _call(fn, x, y, P(1, 2), items) == want, (ms[k].id, x, y)
                checked += 1
    assert checked > len(INPUTS) * len(own) // 3  # many are not infected at most inputs


def _number(ms, text, operator, n=0):
    line = line_of(text, SOURCE)
    (k,) = [k for k, m in enumerate(ms) if m.line == line and m.operator == operator
            and m.n == n]
    return k


def _where_infected(mutants, k):
    ms, probed, _original, _own, P = mutants
    return {(x, y) for x, y, items in INPUTS if k in _infected(probed, P, x, y, items)[1]}


def test_a_boundary_flip_is_infected_only_on_the_boundary(mutants):
    ms = mutants[0]
    assert _where_infected(mutants, _number(ms, "if x > 0 and y", "cmp")) == \
        {(0, y) for y in range(4)}
    assert _where_infected(mutants, _number(ms, "x >= y", "cmp")) == \
        {(x, x) for x in range(0, 4)}


def test_a_dropped_conjunct_is_infected_only_where_it_decides(mutants):
    ms = mutants[0]
    # `x > 0 and y` without `y`: differs where x > 0 and y == 0
    assert _where_infected(mutants, _number(ms, "if x > 0 and y", "drop-and", 1)) == \
        {(x, 0) for x in range(1, 4)}
    # without `x > 0`: where x <= 0 the original never asks `y`; the probe asks it, and
    # the mutant differs only where y holds
    assert _where_infected(mutants, _number(ms, "if x > 0 and y", "drop-and", 0)) == \
        {(x, y) for x in (-1, 0) for y in range(1, 4)}


def test_a_dropped_if_is_infected_only_where_its_body_runs(mutants):
    ms, _probed, _original, own, _P = mutants
    assert _where_infected(mutants, _number(ms, "if not (x < 2)", "drop-stmt")) == \
        {(x, y) for x in (2, 3) for y in range(4)}
    # with an `else` one branch always runs: not probed
    k = _number(ms, "if 0 <= x < 3", "drop-stmt")
    assert k not in own


def test_a_dropped_if_whose_test_raises_is_infected(mutants):
    """`if items[x] > y` inside a `try`: at x == 2 or 3 the test raises and the handler
    runs; without the statement nothing raises."""
    ms = mutants[0]
    assert _where_infected(mutants, _number(ms, "if items[x] > y", "drop-stmt")) == \
        {(x, y) for x, y, _i in INPUTS if x in (2, 3) or x in (-1, 0, 1)
         and (1, 2)[x] > y}


def test_and_or_in_comprehensions_and_generators_is_probed_but_not_in_a_class_body(
        mutants):
    ms, _probed, _original, own, _P = mutants
    for text, operator in [("seen = [v for v", "drop-and"), ("some = any(", "drop-or"),
                           ("some = any(", "and-or"), ("kept = tuple(", "drop-and"),
                           ("t = x > 0 and", "drop-and")]:
        assert _number(ms, text, operator) in own, text
    assert _number(ms, "z = x > 1 and y", "drop-and") not in own
    assert _number(ms, "        if x > 1:", "drop-stmt") not in own
    # `any(v < x or v == y ...)` without `v < x`: differs at a v < x that is not y,
    # among the items `any` asks (up to the first that holds)
    def differs(x, y):
        for v in (1, 2):
            if v < x or v == y:
                return v != y
        return False
    assert _where_infected(mutants, _number(ms, "some = any(", "drop-or", 0)) == \
        {(x, y) for x, y, _i in INPUTS if differs(x, y)}


def test_an_update_to_the_value_already_there_is_no_infection(mutants):
    ms = mutants[0]
    assert _where_infected(mutants, _number(ms, "p._replace", "drop-field", 1)) == set()
    assert _where_infected(mutants, _number(ms, "p._replace", "drop-field", 0)) == \
        {(x, y) for x, y, _i in INPUTS if x != 1}


def test_an_operation_giving_the_original_value_is_no_infection(mutants):
    ms = mutants[0]
    everywhere = {(x, y) for x, y, _i in INPUTS}

    def at(text, col_text, n):
        line = line_of(text, SOURCE)
        col = SOURCE.splitlines()[line - 1].index(col_text)
        (k,) = [k for k, m in enumerate(ms) if (m.line, m.col, m.operator, m.n) ==
                (line, col, "const", n)]
        assert k in mutants[3]  # probed
        return _where_infected(mutants, k)

    assert at("single = ", "0]", 0) == everywhere  # (x,)[1]: IndexError
    assert at("single = ", "1]", 1) == set()       # (x,)[-0] is (x,)[0]: the same value
    assert at("single = ", "1]", 0) == everywhere  # (x,)[-2]: IndexError
    assert at("pad = ", "1,)", 1) == {(x, y) for x, y in everywhere if x > 0}  # (0,) * n
    assert at("head = ", "1)", 0) == {(x, y) for x, y in everywhere if y in (1, 2, 3)}
    assert at("head = ", "1)", 1) == {(x, y) for x, y in everywhere if y % 2}


def test_an_operand_with_its_own_operator_is_infected_and_asked_once():
    source = "def h(c):\n    return c + 1\n"
    ms = mutants_of(PATH, "probed.py", "probed", source)
    tree, watched = sites.instrument(ast.parse(source), sites.numbers(ms)[PATH])
    assert len(watched) == 2
    names = {probes.NAME: probes, "__name__": "probed"}
    exec(compile(tree, PATH, "exec"), names)

    class Counted:
        calls = 0

        def __add__(self, other):
            Counted.calls += 1
            return other

    probes.SINK.clear()
    assert names["h"](Counted()) == 1
    assert Counted.calls == 1 and probes.SINK == watched


def test_the_baseline_records_where_a_guard_mutant_is_infected(tmp_path_factory):
    """The toy's `x > 1` -> `x > 2` runs in every expansion with y == 0, and differs only
    at x == 2: the recorded graph marks that expansion alone."""
    toy = toy_file(tmp_path_factory)
    plan = make_plan([Entry(id="toy", scenario=f"{toy}:make")])
    numbers = sites.numbers(plan.mutants)
    line = line_of("if s.y == 0 and s.x > 1")
    (k,) = [k for k, m in enumerate(plan.mutants) if m.line == line
            and m.operator == "const" and m.n == 0 and m.description == "1 -> 2"]
    served = {plan.mutants[0].module: (toy, plan.sources[toy])}
    from kmc.mutate.pool import run_one

    out = run_one(baseline_task, (plan.entries[0], plan.files, served, None, numbers))
    states, expanded, _succ, _calls, touched = out["graph"][:5]
    marked = {tuple(states[i]) for i, t in zip(expanded, touched) if k in t}
    assert marked == {(2, 0)}


def _memos():
    """The probes' memos: the ``and``/``or`` sites' (by site) and each comparison's or
    operation's (the third part of its spec)."""
    return [probes._BOOLS] + [spec[2] for spec in probes.SPECS
                              if len(spec) == 3 and isinstance(spec[2], dict)]


def test_memoised_answers_infect_what_a_fresh_answer_does(mutants):
    """An ``and``/``or`` whose operands are bools (also with the operands it asked), and
    a comparison or operation on ints, is answered from a memo by the values: every
    input infects the same mutants with the memos cold and warm."""
    _ms, probed, _original, _own, P = mutants
    cold = []
    for x, y, items in INPUTS:
        for memo in _memos():
            memo.clear()
        cold.append(_infected(probed, P, x, y, items)[1])
    # the toy has such sites: `x == 1 or y > 2`, `x > 0 and y`, `y & 1`
    assert any(isinstance(key[0], tuple) for memo in probes._BOOLS.values() for key in memo)
    assert any(_memos()[1:])
    warm = [_infected(probed, P, x, y, items)[1] for x, y, items in INPUTS]
    assert warm == cold
