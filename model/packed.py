"""Compiled models: a declared state schema packed into one integer, guarded rules compiled
into one generated successor function (the Murphi/TLC-style fast path).

A model author declares variables with finite domains and rules as guarded commands::

    spec.var("tm", Enum("init", "committed", "aborted"))
    spec.var("rm", Enum("working", "prepared", "committed", "aborted"), size=n)
    spec.index("RM", range(n))
    spec.rule("RMPrepare", over={"r": "RM"}, when="rm[r] == 'working'",
              then={"rm[r]": "'prepared'", "prepared[r]": "True"})
    spec.always("Consistent", "not (any(rm[i] == 'committed' for i in RM) and ...)")

Expressions are Python syntax over the variables; ``all``/``any`` over a declared index set
are unrolled, rule parameters become constants, and each variable read becomes a shift and
mask. Updates are simultaneous (every right-hand side reads the old state). The result is a
``Model`` whose states are ints below 2**64, so the state *is* its own collision-free key.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from invariants.properties import always, quiescent, sometimes
from model.contract import Model, ModelError


@dataclass(frozen=True)
class Enum:
    values: tuple

    def __init__(self, *values):
        object.__setattr__(self, "values", tuple(values))

    def encode(self, v):
        try:
            return self.values.index(v)
        except ValueError:
            raise ModelError(f"{v!r} is not one of {self.values}") from None

    def decode(self, c):
        return self.values[c]

    @property
    def size(self):
        return len(self.values)


@dataclass(frozen=True)
class Int:
    lo: int
    hi: int

    def encode(self, v):
        if not self.lo <= v <= self.hi:
            raise ModelError(f"{v} is outside {self.lo}..{self.hi}")
        return v - self.lo

    def decode(self, c):
        return c + self.lo

    @property
    def size(self):
        return self.hi - self.lo + 1


class Bool(Enum):
    def __init__(self):
        super().__init__(False, True)


@dataclass
class _Var:
    name: str
    dom: Any
    size: int | None  # None: scalar; else array length
    offset: int
    bits: int

    def off(self, i=None):
        if self.size is None:
            return self.offset
        if not isinstance(i, int) or not 0 <= i < self.size:
            raise ModelError(f"index {i!r} out of range for {self.name}[{self.size}]")
        return self.offset + i * self.bits


class Spec:
    """What a packed model declares; compiled once by ``PackedModel``."""

    def __init__(self):
        self.vars: dict[str, _Var] = {}
        self.indexes: dict[str, tuple] = {}
        self.inits: list[dict] = []
        self.rules: list[tuple] = []  # (name, params, when, then, fault, actor)
        self.props: list[tuple] = []  # (kind, name, expr)
        self.symmetry: tuple | None = None
        self.bits = 0

    def var(self, name, dom, size=None):
        if name in self.vars or name in self.indexes:
            raise ModelError(f"variable {name!r} declared twice")
        bits = max(1, (dom.size - 1).bit_length())
        self.vars[name] = _Var(name, dom, size, self.bits, bits)
        self.bits += bits * (size or 1)
        if self.bits > 64:
            raise ModelError(f"packed state needs {self.bits} bits; at most 64 fit: use a "
                             "plain Model for larger states")

    def index(self, name, values):
        self.indexes[name] = tuple(values)

    def init(self, **values):
        self.inits.append(values)

    def rule(self, name, when="True", then=None, over=None, fault=False, actor="system"):
        self.rules.append((name, dict(over or {}), when, dict(then or {}), fault, actor))

    def always(self, name, expr):
        self.props.append(("always", name, expr))

    def sometimes(self, name, expr):
        self.props.append(("sometimes", name, expr))

    def quiescent(self, name, expr):
        self.props.append(("quiescent", name, expr))

    def symmetric(self, index, arrays):
        """Elements at the same position of ``arrays`` form one process; processes in
        ``index`` are interchangeable."""
        self.symmetry = (index, tuple(arrays))


class _Expr(ast.NodeTransformer):
    """Rewrites a Python expression over spec variables into bit operations on ``s``."""

    def __init__(self, spec: Spec, env: dict):
        self.spec, self.env, self.dom = spec, env, {}

    def read(self, var: _Var, i=None):
        mask = (1 << var.bits) - 1
        node = ast.parse(f"((s >> {var.off(i)}) & {mask})", mode="eval").body
        if isinstance(var.dom, Int) and var.dom.lo:
            node = ast.BinOp(node, ast.Add(), ast.Constant(var.dom.lo))
        self.dom[id(node)] = var.dom
        return node

    def visit_Name(self, node):
        if node.id in self.env:
            return ast.Constant(self.env[node.id])
        v = self.spec.vars.get(node.id)
        if v is not None:
            if v.size is not None:
                raise ModelError(f"array {node.id} must be indexed, e.g. {node.id}[i]")
            return self.read(v)
        return node

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in self.spec.vars:
            idx = self.visit(node.slice)
            try:
                i = ast.literal_eval(idx)
            except ValueError:
                raise ModelError(f"index of {node.value.id} must be a rule parameter or a "
                                 f"constant, got {ast.unparse(node.slice)!r}") from None
            return self.read(self.spec.vars[node.value.id], i)
        return self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func.id if isinstance(node.func, ast.Name) else None
        if f in ("all", "any") and len(node.args) == 1 and \
                isinstance(node.args[0], ast.GeneratorExp):
            gen = node.args[0]
            comp = gen.generators[0]
            if len(gen.generators) != 1 or comp.ifs or not isinstance(comp.iter, ast.Name) \
                    or comp.iter.id not in self.spec.indexes:
                raise ModelError(f"{f}(...) must range over one declared index set")
            parts = []
            for v in self.spec.indexes[comp.iter.id]:
                sub = _Expr(self.spec, {**self.env, comp.target.id: v})
                parts.append(sub.visit(_copy(gen.elt)))
            if not parts:
                return ast.Constant(f == "all")
            return ast.BoolOp(ast.And() if f == "all" else ast.Or(), parts)
        return self.generic_visit(node)

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        operands = [node.left, *node.comparators]
        for k, op in enumerate(node.ops):
            a, b = operands[k], operands[k + 1]
            dom = self.dom.get(id(a)) or self.dom.get(id(b))
            if dom is None:
                continue
            other = b if id(a) in self.dom else a
            if isinstance(other, ast.Constant):
                enc = _enc(dom, other.value)
                repl = ast.Constant(enc)
            elif isinstance(other, (ast.Tuple, ast.Set, ast.List)) and \
                    isinstance(op, (ast.In, ast.NotIn)):
                repl = ast.Tuple([ast.Constant(_enc(dom, e.value)) for e in other.elts],
                                 ast.Load())
            else:
                continue
            operands[k + (1 if other is b else 0)] = repl
        node.left, node.comparators = operands[0], operands[1:]
        return node


def _enc(dom, value):
    if isinstance(dom, Int):
        return value  # ints compare by value (read adds lo back)
    return dom.encode(value)


def _copy(node):
    return ast.parse(ast.unparse(node), mode="eval").body


class PackedModel(Model):
    """A Model compiled from a ``Spec``. Subclasses implement ``declare(spec)``."""

    packed = True

    def declare(self, spec: Spec) -> None:
        raise NotImplementedError

    def __init__(self):
        spec = Spec()
        self.declare(spec)
        self.spec = spec
        self.has_symmetry = spec.symmetry is not None
        self._rules = []  # (name, params, fault, actor) per rule instance = action id
        guards, bodies = [], []
        for name, over, when, then, fault, actor in spec.rules:
            for env in _instances(spec, over):
                self._rules.append((name, env, fault, actor))
                guards.append(_src(spec, when, env))
                bodies.append(_update_src(spec, then, env))
        self._guard_src, self._body_src = guards, bodies
        ns: dict = {"_chk": _chk}
        lines = ["def successors(s):", "    out = []"]
        for a, (g, b) in enumerate(zip(guards, bodies)):
            lines += [f"    if {g}:", f"        out.append(({a}, {b}))"]
        lines.append("    return out")
        for a, (g, b) in enumerate(zip(guards, bodies)):
            lines += [f"def g{a}(s): return {g}", f"def u{a}(s): return {b}"]
        exec(compile("\n".join(lines), f"<packed {self.name}>", "exec"), ns)  # noqa: S102
        self.successors = ns["successors"]
        self._g = [ns[f"g{a}"] for a in range(len(guards))]
        self._u = [ns[f"u{a}"] for a in range(len(guards))]
        self._props = []
        for kind, pname, expr in spec.props:
            fn = eval(compile(f"lambda s: {_src(spec, expr, {})}", f"<{pname}>", "eval"),  # noqa: S307
                      {"_chk": _chk})
            maker = {"always": always, "sometimes": sometimes, "quiescent": quiescent}[kind]
            self._props.append(maker(pname, fn, description=expr))
        self._inits = [self.pack(v) for v in spec.inits]
        if self.has_symmetry:
            self.representative = _symmetry(spec)

    # ---- Model contract ---------------------------------------------------------------
    def init_states(self):
        return list(self._inits)

    def actions(self, s):
        return [a for a, g in enumerate(self._g) if g(s)]

    def next_state(self, s, a):
        return self._u[a](s) if self._g[a](s) else None

    def properties(self):
        return list(self._props)

    def is_fault(self, a):
        return self._rules[a][2]

    def action_name(self, a):
        return self._rules[a][0]

    def action_names(self):
        return list(dict.fromkeys(r[0] for r in self._rules))

    def action_actor(self, a):
        name, env, _f, actor = self._rules[a]
        return actor.format(**env)

    def format_action(self, a):
        name, env, _f, _a = self._rules[a]
        args = ", ".join(f"{k}={v}" for k, v in env.items())
        return f"{name}({args})" if args else name

    def state_to_json(self, s):
        return self.unpack(s)

    def format_state(self, s):
        return " ".join(f"{k}={v}" for k, v in self.unpack(s).items())

    # ---- packing ----------------------------------------------------------------------
    def pack(self, values: dict) -> int:
        s = 0
        for name, var in self.spec.vars.items():
            if name not in values:
                raise ModelError(f"init state does not set variable {name!r}")
            v = values[name]
            items = [v] * var.size if var.size is not None and not isinstance(v, (list, tuple)) \
                else (list(v) if var.size is not None else [v])
            for i, x in enumerate(items):
                s |= var.dom.encode(x) << var.off(i if var.size is not None else None)
        return s

    def unpack(self, s: int) -> dict:
        out = {}
        for name, var in self.spec.vars.items():
            mask = (1 << var.bits) - 1
            if var.size is None:
                out[name] = var.dom.decode((s >> var.offset) & mask)
            else:
                out[name] = [var.dom.decode((s >> var.off(i)) & mask) for i in range(var.size)]
        return out


def _instances(spec, over):
    envs = [{}]
    for p, dom in over.items():
        values = spec.indexes[dom] if isinstance(dom, str) else tuple(dom)
        envs = [{**e, p: v} for e in envs for v in values]
    return envs


def _src(spec, expr, env) -> str:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ModelError(f"cannot parse {expr!r}: {e.msg}") from None
    out = _Expr(spec, env).visit(tree.body)
    return ast.unparse(ast.fix_missing_locations(out))


def _update_src(spec, then, env) -> str:
    """Simultaneous assignment: clear every target field of ``s``, then OR the values in.
    Constant right-hand sides fold into one mask and one value."""
    clear, const, dynamic = 0, 0, []
    for target, rhs in then.items():
        t = ast.parse(target, mode="eval").body
        if isinstance(t, ast.Subscript):
            var = spec.vars[t.value.id]
            idx = ast.literal_eval(_Expr(spec, env).visit(t.slice))
            off = var.off(idx)
        else:
            var = spec.vars[t.id]
            off = var.off()
        clear |= ((1 << var.bits) - 1) << off
        rhs_tree = ast.parse(rhs, mode="eval").body
        if isinstance(rhs_tree, ast.Constant):
            const |= var.dom.encode(rhs_tree.value) << off
            continue
        src = _src(spec, rhs, env)
        if isinstance(var.dom, Int):
            # a computed integer is range-checked: out of range would corrupt other fields
            src = f"_chk({src}, {var.dom.lo}, {var.dom.hi}, {var.name!r})"
        dynamic.append(f"(({src}) << {off})")
    parts = [f"(s & {~clear & ((1 << 64) - 1)})"]
    if const:
        parts.append(str(const))
    parts += dynamic
    return " | ".join(parts)


def _chk(v, lo, hi, name):
    if not lo <= v <= hi:
        raise ModelError(f"{name} := {v} leaves its domain {lo}..{hi}: bound it in the rule")
    return v - lo


def _symmetry(spec):
    index, arrays = spec.symmetry
    n = len(spec.indexes[index])
    vs = [spec.vars[a] for a in arrays]
    keep = (1 << 64) - 1
    for v in vs:
        for i in range(n):
            keep &= ~(((1 << v.bits) - 1) << v.off(i))
    reads = ", ".join(f"(s >> {{o{k}}}) & {(1 << v.bits) - 1}" for k, v in enumerate(vs))
    lines = ["def rep(s):", "    els = sorted(["]
    for i in range(n):
        lines.append("        (" + reads.format(**{f"o{k}": v.off(i) for k, v in
                                                     enumerate(vs)}) + ",),")
    lines.append("    ])")
    lines.append(f"    n = s & {keep}")
    for i in range(n):
        terms = " | ".join(f"(els[{i}][{k}] << {v.off(i)})" for k, v in enumerate(vs))
        lines.append(f"    n |= {terms}")
    lines.append("    return n")
    ns: dict = {}
    exec("\n".join(lines), ns)  # noqa: S102
    return ns["rep"]
