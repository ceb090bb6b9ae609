"""Where each mutant would change a value: the baseline runs the mutated files with a
probe at the mutation sites whose value it can compare, and each expansion records the
mutants it *infected*.

A mutant changes one expression. Until the first time the mutated code gives another
value than the original, the mutant's process runs exactly the baseline's steps: an
expansion in which no evaluation of the site differs gives the baseline's successors.
A probe returns the original value and computes what each mutant of the site would have
given on the same operand values; a mutant whose value differs goes into ``SINK``, which
the Recorder empties at the start of each expansion and adds to the functions the
expansion called (``recorder.Recorder``). A probed mutant's replay then asks again only
the expansions it infected, not every expansion that called its function
(``steps.untouched``). Probed:

- a comparison with one ``<``, ``<=``, ``>`` or ``>=`` (``cmp``), or with an ``int`` or
  ``bool`` constant operand (``const``, ``bool``; ``in`` excepted): the flipped operator,
  or the changed constant, on the same operands;
- ``and``/``or`` (``drop-and``, ``drop-or``, ``and-or``): the mutated operator or operand
  list folded over the operand values the original evaluated; an operand the original
  never evaluated makes the mutant infected (its value is not known). Where only the
  truth of the result is read (a test of ``if``, ``while``, ``assert``, a conditional
  expression, a comprehension's ``if``, ``not``), only the truth is compared;
- a ``_replace`` update (``drop-field``): infected when the new value differs from the
  field's current one (dropping an update to the value already there changes nothing).

Every other mutant (a flipped ``==``, a constant elsewhere, a dropped statement, a
swapped branch: they differ whenever they run) is asked again wherever its function
ran. Values are "the same" when they are of one type and equal (``_same``); an exception
while computing a mutant's value counts as infection. Only sites inside a function are
probed (a site outside one changes what the module defines: ``replay.affected``), and
a probe records only what it infects, so the recorded sets stay small.
"""
from __future__ import annotations

import ast
import operator

#: the numbers of the mutants infected since the Recorder last emptied it (at the start
#: of each expansion)
SINK: set = set()
#: the numbers of every mutant infected in this process, wherever (set-up, expansions,
#: properties, cached functions): a probed mutant not among them after a run gives every
#: value the original gave, so that run is the baseline's (``worker.baseline_task``)
EVER: set = set()
#: site number -> what its probe computes (filled while the instrumented files compile)
SPECS: list = []
#: per ``and``/``or`` site: the operands its last evaluation evaluated, as a chain of
#: (index, previous link, value); each operand links itself in right after it is
#: evaluated, having read its previous link before, so that an evaluation of the same
#: site nested inside an operand does not break the chain
LAST: dict = {}
NAME, LAST_NAME = "__kmc_probes__", "__kmc_last__"

_OPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
        ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne,
        ast.Is: operator.is_, ast.IsNot: operator.is_not}
#: the flips a probe compares; a flipped ``==`` or ``is`` differs whenever it runs
_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_UNKNOWN = object()


def _infected(k) -> None:
    SINK.add(k)
    EVER.add(k)


def _same(a, b) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _same_truth(a, b) -> bool:
    try:
        return bool(a) == bool(b)
    except Exception:
        return False


# ---- what the instrumented code calls ---------------------------------------------------
def cmp(sid, a, b):
    op, alts = SPECS[sid]
    r = op(a, b)
    for k, alt_op, x, y in alts:
        try:
            if not _same(r, alt_op(a if x is _UNKNOWN else x, b if y is _UNKNOWN else y)):
                _infected(k)
        except Exception:
            _infected(k)
    return r


def bend(sid, result):
    """An ``and``/``or`` evaluated to ``result``; ``LAST[sid]``: the chain of the
    operands it evaluated, (index, previous link, value), the last first."""
    seen = {}
    link = LAST[sid]
    while link is not None:
        seen[link[0]] = link[2]
        link = link[1]
    n_seen = len(seen)
    truth = SPECS[sid][0]
    for k, order, is_and in SPECS[sid][1]:
        last = len(order) - 1
        for pos, i in enumerate(order):
            if i >= n_seen:  # an operand the original never evaluated
                _infected(k)
                break
            v = seen[i]
            if pos == last or (not v if is_and else v):
                if not (_same_truth(v, result) if truth else _same(v, result)):
                    _infected(k)
                break
    return result


def replace(sid, obj, **kw):
    for k, name in SPECS[sid]:
        try:
            if not _same(getattr(obj, name), kw[name]):
                _infected(k)
        except Exception:
            _infected(k)
    return obj._replace(**kw)


# ---- instrumenting a file ---------------------------------------------------------------
def instrument(tree: ast.Module, numbers: dict) -> tuple[ast.Module, set]:
    """``tree`` with a probe at each site of ``numbers`` ((line, column, operator, n) ->
    the mutant's number) whose value it can compare, in place (compiled, it runs exactly
    as the original), and the numbers of the mutants it probes."""
    probe = _Probe(numbers)
    probe.visit(tree)
    return ast.fix_missing_locations(tree), probe.probed


def _call(fn: str, args, node, keywords=()):
    call = ast.Call(ast.Attribute(ast.Name(NAME, ast.Load()), fn, ast.Load()),
                    list(args), list(keywords))
    return _point(call, node)


def _const(value, node):
    return _point(ast.Constant(value), node)


def _point(new, at):
    """Locate the probe's own nodes in ``new`` (those without a location) at the first
    position of ``at``: a probe adds no line event on a line its site does not start on
    (Python gives a method call the line its name ends on)."""
    todo = [new]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.expr_context) or getattr(n, "lineno", None) is not None:
            continue  # an original node keeps its place
        n.lineno = n.end_lineno = at.lineno
        n.col_offset = n.end_col_offset = at.col_offset
        todo.extend(ast.iter_child_nodes(n))
    return new


class _Probe(ast.NodeTransformer):
    def __init__(self, numbers):
        self.numbers = numbers
        self.func = 0  # depth of function bodies
        self.truthy: set = set()  # expressions whose truth alone is read
        self.probed: set = set()  # the numbers of the mutants probed

    def _ids(self, node, op, ns) -> list:
        key = (node.lineno, node.col_offset)
        return [(n, self.numbers[(*key, op, n)]) for n in ns
                if (*key, op, n) in self.numbers]

    def visit_FunctionDef(self, node):
        self.func += 1
        try:
            return self.generic_visit(node)
        finally:
            self.func -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_match_case(self, node):  # a pattern takes no call: left as it is
        if node.guard is not None:
            node.guard = self.visit(node.guard)
        node.body = [self.visit(st) for st in node.body]
        return node

    def visit_Compare(self, node):
        op = type(node.ops[0])
        # not probed: a chain, or `in` (asked twice, an iterator operand would be read twice)
        if not self.func or len(node.ops) != 1 or op not in _OPS:
            return self.generic_visit(node)
        base = _OPS[op]
        alts = [(k, _OPS[_FLIP[op]], _UNKNOWN, _UNKNOWN)
                for _n, k in self._ids(node, "cmp", (0,))] if op in _FLIP else []
        alts += [(k, base, value, _UNKNOWN) for k, value in _changed_constants(self, node.left)]
        alts += [(k, base, _UNKNOWN, value)
                 for k, value in _changed_constants(self, node.comparators[0])]
        node = self.generic_visit(node)
        if not alts:
            return node
        self.probed.update(alt[0] for alt in alts)
        SPECS.append((base, tuple(alts)))
        return _call("cmp", [_const(len(SPECS) - 1, node), node.left,
                             node.comparators[0]], node)

    def visit_If(self, node):
        self.truthy.add(id(node.test))
        return self.generic_visit(node)

    visit_While = visit_Assert = visit_If

    def visit_comprehension(self, node):
        self.truthy.update(map(id, node.ifs))
        return self.generic_visit(node)

    def visit_BoolOp(self, node):
        if id(node) in self.truthy:  # an operand's value is then only tested too
            self.truthy.update(map(id, node.values))
        node = self.generic_visit(node)
        if not self.func:
            return node
        word = "and" if isinstance(node.op, ast.And) else "or"
        n = len(node.values)
        alts = [(k, tuple(j for j in range(n) if j != i), word == "and")
                for i, k in self._ids(node, f"drop-{word}", range(n))]
        alts += [(k, tuple(range(n)), word != "and")
                 for _i, k in self._ids(node, "and-or", (0,))]
        if not alts:
            return node
        self.probed.update(alt[0] for alt in alts)
        # where only its truth is read (a test), the value an `and` gives does not count
        SPECS.append((id(node) in self.truthy, tuple(alts)))
        sid = len(SPECS) - 1
        node.values = [_link(sid, i, v) for i, v in enumerate(node.values)]
        return _call("bend", [_const(sid, node), node], node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            self.truthy.add(id(node.operand))
        return self.generic_visit(node)

    def visit_IfExp(self, node):
        self.truthy.add(id(node.test))
        return self.generic_visit(node)

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if not self.func or not (isinstance(node.func, ast.Attribute)
                                 and node.func.attr == "_replace"):
            return node
        ids = self._ids(node, "drop-field", range(len(node.keywords)))
        if not ids or node.args or any(kw.arg is None for kw in node.keywords):
            return node
        self.probed.update(k for _i, k in ids)
        SPECS.append(tuple((k, node.keywords[i].arg) for i, k in ids))
        return _call("replace", [_const(len(SPECS) - 1, node), node.func.value], node,
                     node.keywords)


def _link(sid, i, value):
    """``(LAST.__setitem__(sid, (i, previous, value)), LAST[sid][2])[1]``: ``value``,
    linked into the site's chain (C-level calls only)."""
    def last():
        return ast.Name(LAST_NAME, ast.Load())

    prev = ast.Constant(None) if i == 0 else \
        ast.Call(ast.Attribute(last(), "get", ast.Load()), [ast.Constant(sid)], [])
    link = ast.Tuple([ast.Constant(i), prev, value], ast.Load())
    put = ast.Call(ast.Attribute(last(), "__setitem__", ast.Load()),
                   [ast.Constant(sid), link], [])
    read = ast.Subscript(ast.Subscript(last(), ast.Constant(sid), ast.Load()),
                         ast.Constant(2), ast.Load())
    pair = ast.Tuple([put, read], ast.Load())
    return _point(ast.Subscript(pair, ast.Constant(1), ast.Load()), value)


def _changed_constants(probe, operand):
    """(mutant number, changed value) for each mutant of a constant operand."""
    if not isinstance(operand, ast.Constant):
        return []
    v = operand.value
    if type(v) is int:
        return [(k, v + (1, -1)[n]) for n, k in probe._ids(operand, "const", (0, 1))]
    if type(v) is bool:
        return [(k, not v) for _n, k in probe._ids(operand, "bool", (0,))]
    return []


def numbers(mutants) -> dict:
    """path -> (line, column, operator, n) -> number, for the mutants inside a function
    whose site is unique (the number: the mutant's position in ``mutants``)."""
    out: dict = {}
    shared = {(m.path, m.line, m.col, m.operator, m.n) for m in mutants if "#" in m.id}
    for k, m in enumerate(mutants):
        if m.function and (m.path, m.line, m.col, m.operator, m.n) not in shared:
            out.setdefault(m.path, {})[(m.line, m.col, m.operator, m.n)] = k
    return out


def probed(numbers: dict, sources: dict) -> set:
    """The numbers of the mutants ``instrument`` probes in the files of ``numbers``
    (``sources``: path -> text); every other mutant is asked again wherever its
    function ran."""
    out: set = set()
    for path, mine in numbers.items():
        out |= instrument(ast.parse(sources[path], path), mine)[1]
    return out
