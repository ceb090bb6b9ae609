"""Instrumenting a mutated file's sites with the baseline's infection probes
(``mutate.probes``): ``instrument`` rewrites each probed site into a call of its probe,
which computes what the original does; ``numbers`` and ``probed`` tell which mutants a
plan's probes watch."""
from __future__ import annotations

import ast
import copy
import operator

from kmc.mutate import probes
from kmc.mutate.probes import UNKNOWN

_OPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
        ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne,
        ast.Is: operator.is_, ast.IsNot: operator.is_not}
#: the flips a probe compares; a flipped ``==`` or ``is`` differs whenever it runs
_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
#: the local names a probe adds: an ``if``'s test, the operand a thunk evaluates
_TEST, _INDEX = "__kmc_test__", "__kmc_i__"


def instrument(tree: ast.Module, numbers: dict) -> tuple[ast.Module, set]:
    """``tree`` with a probe at each site of ``numbers`` ((line, column, operator, n) ->
    the mutant's number) whose value it can compare, in place (compiled, it runs exactly
    as the original), and the numbers of the mutants it probes."""
    probe = _Probe(numbers)
    probe.visit(tree)
    return ast.fix_missing_locations(tree), probe.probed


def _call(fn: str, args, node, keywords=()):
    call = ast.Call(ast.Attribute(ast.Name(probes.NAME, ast.Load()), fn, ast.Load()),
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
        #: the scopes around: "def" (a function's or lambda's body), "class" (a class
        #: body), "comp" / "gen" (a comprehension's / generator expression's own part),
        #: "iter" (a comprehension's iterable)
        self.scopes: list = []
        self.truthy: set = set()  # expressions whose truth alone is read
        self.probed: set = set()  # the numbers of the mutants probed

    def _ids(self, node, op, ns) -> list:
        key = (node.lineno, node.col_offset)
        return [(n, self.numbers[(*key, op, n)]) for n in ns
                if (*key, op, n) in self.numbers]

    def visit_FunctionDef(self, node):
        self.func += 1
        try:
            for field in ("decorator_list", "args", "returns"):
                self._visit_field(node, field)
            self._visit_field(node, "body", "def")
            return node
        finally:
            self.func -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self._visit_field(node, "args")
        self._visit_field(node, "body", "def")
        return node

    def visit_ClassDef(self, node):
        for field in ("decorator_list", "bases", "keywords"):
            self._visit_field(node, field)
        self._visit_field(node, "body", "class")
        return node

    def _comprehension(self, node):
        own = "gen" if isinstance(node, ast.GeneratorExp) else "comp"
        for gen in node.generators:
            self.truthy.update(map(id, gen.ifs))
            self._visit_field(gen, "target")
            self._visit_field(gen, "iter", "iter")
            self._visit_field(gen, "ifs", own)
        for field in ("elt", "key", "value"):
            if hasattr(node, field):
                self._visit_field(node, field, own)
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def _visit_field(self, node, field, scope=None):
        """Visit ``node.field`` (an expression, a list, or arguments) in ``scope``."""
        if scope is not None:
            self.scopes.append(scope)
        try:
            value = getattr(node, field)
            if isinstance(value, list):
                out = []
                for v in value:
                    got = self.visit(v)
                    if got is not None:
                        out.extend(got if isinstance(got, list) else [got])
                setattr(node, field, out)
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
        finally:
            if scope is not None:
                self.scopes.pop()

    def visit_match_case(self, node):  # a pattern takes no call: left as it is
        if node.guard is not None:
            node.guard = self.visit(node.guard)
        self._visit_field(node, "body")
        return node

    def visit_Compare(self, node):
        op = type(node.ops[0])
        # not probed: a chain, or `in` (asked twice, an iterator operand would be read twice)
        if not self.func or len(node.ops) != 1 or op not in _OPS:
            return self.generic_visit(node)
        base = _OPS[op]
        alts = [(k, _OPS[_FLIP[op]], UNKNOWN, UNKNOWN)
                for _n, k in self._ids(node, "cmp", (0,))] if op in _FLIP else []
        alts += [(k, base, value, UNKNOWN)
                 for k, value in _changed_constants(self, node.left)]
        alts += [(k, base, UNKNOWN, value)
                 for k, value in _changed_constants(self, node.comparators[0])]
        node = self.generic_visit(node)
        if not alts:
            return node
        self.probed.update(alt[0] for alt in alts)
        probes.SPECS.append((base, tuple(alts), {}))
        return _call("cmp", [_const(len(probes.SPECS) - 1, node), node.left,
                             node.comparators[0]], node)

    def visit_If(self, node):
        """An ``if`` without ``else`` dropped (``drop-stmt``) differs only where its body
        runs: a true test, or one that raises, infects it. The test is kept in a local
        name first, inside a ``try`` whose handler infects the mutant and raises again;
        the body starts by infecting it."""
        self.truthy.add(id(node.test))
        ids = self._ids(node, "drop-stmt", (0,)) \
            if self.func and self.scopes[-1:] == ["def"] and not node.orelse else []
        node = self.generic_visit(node)
        if not ids:
            return node
        k = ids[0][1]
        self.probed.add(k)

        def hit():
            return _point(ast.Expr(_call("infect", [_const(k, node)], node)), node)
        test = _point(ast.Name(_TEST, ast.Store()), node)
        keep = ast.Try([_point(ast.Assign([test], node.test), node)],
                       [_point(ast.ExceptHandler(None, None, [hit(), ast.Raise()]), node)],
                       [], [])
        node.test = _point(ast.Name(_TEST, ast.Load()), node.test)
        node.body = [hit(), *node.body]
        return [_point(keep, node), node]

    def visit_While(self, node):
        self.truthy.add(id(node.test))
        return self.generic_visit(node)

    visit_Assert = visit_While

    def visit_BoolOp(self, node):
        """``A and B`` becomes ``bend(sid, A and B, A, B)``: each operand is kept in a
        local name as it is evaluated (an assignment expression), those after the first
        set to None first. Where ``bend`` needs an operand the original skipped, the
        code calls ``asked`` with a lambda that evaluates the operands that call nothing
        (copies: no node is in the tree twice). Where an assignment expression would not
        bind in the running function (a generator expression, a comprehension's
        iterable), the whole is evaluated by a lambda of its own; in a class body it is
        not probed."""
        if id(node) in self.truthy:  # an operand's value is then only tested too
            self.truthy.update(map(id, node.values))
        plain = [_plain_operand(v) for v in node.values]
        where = self._binding()
        if where == "wrap" and not _lambda_safe(node):  # before the probes' own names
            where = None
        node = self.generic_visit(node)
        if not self.func or where is None:
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
        later = [i for i in range(1, n) if plain[i]]
        # where only its truth is read (a test), the value an `and` gives does not count
        probes.SPECS.append((id(node) in self.truthy, tuple(alts), word == "and",
                             tuple(later)))
        sid = len(probes.SPECS) - 1
        names = [f"__kmc_{sid}_{i}__" for i in range(n)]
        copies = {i: copy.deepcopy(node.values[i]) for i in later}
        node.values = [_point(ast.NamedExpr(ast.Name(names[i], ast.Store()), v), v)
                       for i, v in enumerate(node.values)]
        first = [ast.NamedExpr(ast.Name(x, ast.Store()), ast.Constant(None))
                 for x in names[1:]]
        result = ast.Subscript(ast.Tuple([*first, node], ast.Load()),
                               ast.Constant(n - 1), ast.Load())
        out = _call("bend", [_const(sid, node), _point(result, node),
                             *[_point(ast.Name(x, ast.Load()), node) for x in names]], node)
        if later:
            i = ast.Name(_INDEX, ast.Load())
            body = copies[later[-1]]
            for j in reversed(later[:-1]):
                body = ast.IfExp(ast.Compare(i, [ast.Eq()], [ast.Constant(j)]),
                                 copies[j], body)
            thunk = ast.Lambda(ast.arguments([], [ast.arg(_INDEX)], None, [], [], None, []),
                               body)
            r = f"__kmc_{sid}__"
            test = ast.Compare(ast.NamedExpr(ast.Name(r, ast.Store()), out), [ast.IsNot()],
                               [ast.Attribute(ast.Name(probes.NAME, ast.Load()), "NEED",
                                              ast.Load())])
            out = _point(ast.IfExp(test, ast.Name(r, ast.Load()),
                                   _call("asked", [_probe_lambda(thunk, node)], node)), node)
        if where == "wrap":
            out = _point(ast.Call(_probe_lambda(ast.Lambda(_no_args(), out), node), [], []),
                         node)
        return out

    def _binding(self):
        """Where an assignment expression here binds: "direct" in the running function,
        "wrap" only inside a lambda of its own (a generator expression may be resumed
        inside another of its kind, a comprehension's iterable takes none), None: in a
        class body or outside any function."""
        direct = True
        for scope in reversed(self.scopes):
            if scope == "comp":
                continue
            if scope in ("gen", "iter"):
                direct = False
                continue
            return None if scope == "class" else "direct" if direct else "wrap"
        return None

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            self.truthy.add(id(node.operand))
        return self.generic_visit(node)

    def visit_IfExp(self, node):
        self.truthy.add(id(node.test))
        return self.generic_visit(node)

    def visit_BinOp(self, node):
        op = _BINOPS.get(type(node.op))
        if not self.func or op is None:
            return self.generic_visit(node)
        alts = [(k, op, value, UNKNOWN) for k, value in _changed_operand(self, node.left)]
        alts += [(k, op, UNKNOWN, value)
                 for k, value in _changed_operand(self, node.right)]
        node = self.generic_visit(node)
        if not alts:
            return node
        self.probed.update(alt[0] for alt in alts)
        probes.SPECS.append((op, tuple(alts), {}))
        return _call("binop", [_const(len(probes.SPECS) - 1, node), node.left, node.right],
                     node)

    def visit_Subscript(self, node):
        at = _constant_index(self, node.slice) if isinstance(node.ctx, ast.Load) else None
        node = self.generic_visit(node)
        if not self.func or at is None or not at[1]:
            return node
        i, alts = at
        self.probed.update(k for k, _j in alts)
        probes.SPECS.append((i, tuple(alts)))
        return _call("index", [_const(len(probes.SPECS) - 1, node), node.value], node)

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if not self.func or not (isinstance(node.func, ast.Attribute)
                                 and node.func.attr == "_replace"):
            return node
        ids = self._ids(node, "drop-field", range(len(node.keywords)))
        if not ids or node.args or any(kw.arg is None for kw in node.keywords):
            return node
        self.probed.update(k for _i, k in ids)
        probes.SPECS.append(tuple((k, node.keywords[i].arg) for i, k in ids))
        return _call("replace", [_const(len(probes.SPECS) - 1, node), node.func.value],
                     node, node.keywords)


def _probe_lambda(lam: ast.Lambda, at) -> ast.Lambda:
    """``lam``, the probe's own: the tracer adds no hook to it (``tracer._Hooks``)."""
    lam.kmc_probe = True
    return _point(lam, at)


def _no_args() -> ast.arguments:
    return ast.arguments([], [], None, [], [], None, [])


def _lambda_safe(expr) -> bool:
    """Does ``expr`` mean the same inside a lambda? Not with an assignment expression
    (it would bind in the lambda), a ``yield`` or ``await``, or ``super()``."""
    return not any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
                   or isinstance(n, ast.Name) and n.id == "super" for n in ast.walk(expr))


def _plain_operand(expr) -> bool:
    """May a probe evaluate ``expr`` where the original did not? When it calls nothing
    (no function, no lambda or comprehension: code the tracer would see run) and means
    the same inside a lambda: names, constants, attributes, subscripts, operators and
    comparisons, as the models' guards are."""
    return _lambda_safe(expr) and not any(
        isinstance(n, (ast.Call, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                       ast.GeneratorExp)) for n in ast.walk(expr))


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


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift,
           ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.BitXor: operator.xor,
           ast.Div: operator.truediv}


def _changed_operand(probe, operand):
    """(mutant number, changed value) for each mutant of a constant operand, or of an
    element of a tuple of constants (``(1,) * n``)."""
    if isinstance(operand, ast.Tuple) and isinstance(operand.ctx, ast.Load) and \
            operand.elts and all(isinstance(e, ast.Constant) for e in operand.elts):
        values = tuple(e.value for e in operand.elts)
        return [(k, values[:i] + (v,) + values[i + 1:])
                for i, e in enumerate(operand.elts) for k, v in _changed_constants(probe, e)]
    return _changed_constants(probe, operand)


def _constant_index(probe, index):
    """(the index, [(mutant number, changed index)]) of an ``int`` constant index, ``-1``
    included; None for any other index."""
    if isinstance(index, ast.Constant) and type(index.value) is int:
        return index.value, _changed_constants(probe, index)
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub) and \
            isinstance(index.operand, ast.Constant) and type(index.operand.value) is int:
        return -index.operand.value, [(k, -v) for k, v in
                                      _changed_constants(probe, index.operand)]
    return None


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
