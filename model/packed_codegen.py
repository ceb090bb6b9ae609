"""Code generation for packed models: rule expressions -> bit operations on one int ``s``.

What makes the generated successor function fast (it is the checker's inner loop):
- a field compared with a constant is one masked compare, ``(s & M) == V`` (no shift);
- the equality tests of one guard merge into a single masked compare;
- rules whose guards start with the same test share it: guards form a trie, so e.g. the
  eight ``tmState == 'init' and ...`` rules of TwoPhase test ``tmState`` once;
- updates are ``(s & CLEAR) | CONST`` with masks no wider than the state.
"""
from __future__ import annotations

import ast

from kmc.model.contract import ModelError


class Read:
    """Metadata of a variable read: offset, width, domain."""

    def __init__(self, off, bits, dom):
        self.off, self.bits, self.dom = off, bits, dom


class Expr(ast.NodeTransformer):
    """Rewrites a Python expression over spec variables into bit operations on ``s``."""

    def __init__(self, spec, env: dict):
        self.spec, self.env, self.reads, self.masks = spec, env, {}, {}

    def read(self, var, i=None):
        mask = (1 << var.bits) - 1
        off = var.off(i)
        node = ast.parse(f"((s >> {off}) & {mask})", mode="eval").body
        lo = getattr(var.dom, "lo", 0)
        if lo:
            node = ast.BinOp(node, ast.Add(), ast.Constant(lo))
        self.reads[id(node)] = Read(off, var.bits, var.dom)
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
                sub = Expr(self.spec, {**self.env, comp.target.id: v})
                parts.append(sub.visit(_copy(gen.elt)))
                self.reads.update(sub.reads)
                self.masks.update(sub.masks)
            if not parts:
                return ast.Constant(f == "all")
            return ast.BoolOp(ast.And() if f == "all" else ast.Or(), parts)
        return self.generic_visit(node)

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        operands = [node.left, *node.comparators]
        for k, op in enumerate(node.ops):
            a, b = operands[k], operands[k + 1]
            r = self.reads.get(id(a)) or self.reads.get(id(b))
            if r is None:
                continue
            other = b if id(a) in self.reads else a
            if isinstance(other, ast.Constant):
                repl = ast.Constant(_enc(r.dom, other.value))
            elif isinstance(other, (ast.Tuple, ast.Set, ast.List)) and \
                    isinstance(op, (ast.In, ast.NotIn)):
                repl = ast.Tuple([ast.Constant(_enc(r.dom, e.value)) for e in other.elts],
                                 ast.Load())
            else:
                continue
            operands[k + (1 if other is b else 0)] = repl
        node.left, node.comparators = operands[0], operands[1:]
        mv = _mask_test(node, self.reads)
        if mv is not None and id(node.left) in self.reads:
            # field == constant: one masked compare, no shift (keeps its (M, V) metadata)
            new = ast.parse(f"((s & {mv[0]}) == {mv[1]})", mode="eval").body
            self.masks[id(new)] = mv
            return new
        return node


def _enc(dom, value):
    return value if hasattr(dom, "lo") else dom.encode(value)


def _copy(node):
    return ast.parse(ast.unparse(node), mode="eval").body


def _parse(expr: str):
    try:
        return ast.parse(expr, mode="eval").body
    except SyntaxError as e:
        raise ModelError(f"cannot parse {expr!r}: {e.msg}") from None


def src(spec, expr: str, env: dict) -> str:
    """Plain translation (properties, next_state guards)."""
    return ast.unparse(ast.fix_missing_locations(Expr(spec, env).visit(_parse(expr))))


# ---- guards as conjuncts ------------------------------------------------------------------
def conjuncts(spec, expr: str, env: dict) -> list:
    """A guard as a list of conjuncts: ("mask", M, V) for ``(s & M) == V`` tests, or
    ("expr", source) for anything else."""
    e = Expr(spec, env)
    tree = e.visit(_parse(expr))
    out = []
    for node in _flatten_and(tree):
        mv = e.masks.get(id(node)) or _mask_test(node, e.reads)
        out.append(("mask", *mv) if mv else ("expr", ast.unparse(ast.fix_missing_locations(node))))
    return [c for c in out if c != ("expr", "True")]


def _flatten_and(node):
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [x for v in node.values for x in _flatten_and(v)]
    return [node]


def _mask_test(node, reads):
    """(M, V) when ``node`` is ``field == constant`` or a bare boolean field read."""
    r = reads.get(id(node))
    if r is not None and r.bits == 1 and not hasattr(r.dom, "lo"):
        return (1 << r.off, 1 << r.off)  # truthy 1-bit field
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
            isinstance(node.ops[0], ast.Eq):
        a, b = node.left, node.comparators[0]
        r = reads.get(id(a))
        if r is not None and isinstance(b, ast.Constant) and isinstance(b.value, int):
            code = b.value - getattr(r.dom, "lo", 0)
            if not 0 <= code < (1 << r.bits):
                return (0, 1)  # impossible value: a test that is always false
            return (((1 << r.bits) - 1) << r.off, code << r.off)
    return None


def _merge(conj: list) -> str:
    """One rule's remaining conjuncts as one condition; equality tests merged."""
    m = v = 0
    rest = []
    for c in conj:
        if c[0] == "mask" and not (m & c[1]):
            m, v = m | c[1], v | c[2]
        elif c[0] == "mask":
            rest.append(f"(s & {c[1]}) == {c[2]}")
        else:
            rest.append(f"({c[1]})")
    parts = ([f"(s & {m}) == {v}"] if m else []) + rest
    return " and ".join(parts) if parts else "True"


def _cond(c) -> str:
    return f"(s & {c[1]}) == {c[2]}" if c[0] == "mask" else f"({c[1]})"


def emit_successors(guards: list, bodies: list) -> str:
    """Two functions over a trie of shared leading conjuncts:
    ``successors(s)`` -> [(action, next)], the Model contract's fast path; and
    ``make_successor_states(c)`` -> ``f(s)`` -> [next], which counts each rule firing in
    the list ``c`` instead of building pairs (BFS's level expansion uses it)."""
    rules = list(range(len(guards)))
    lines = ["def successors(s):", "    out = []", "    add = out.append"]
    _emit(rules, guards, bodies, 0, 1, lines, "add(({a}, {x}))")
    lines += ["    return out", "def make_successor_states(c):", "    def states(s):",
              "        out = []", "        add = out.append"]
    _emit(rules, guards, bodies, 0, 2, lines, "c[{a}] += 1; add({x})")
    lines += ["        return out", "    return states"]
    return "\n".join(lines)


def _emit(rules, guards, bodies, depth, indent, lines, add):
    pad = "    " * indent
    i = 0
    while i < len(rules):
        a = rules[i]
        conj = guards[a][depth:]
        if not conj:
            lines.append(pad + add.format(a=a, x=bodies[a]))
            i += 1
            continue
        j = i + 1  # consecutive rules sharing this leading conjunct (order is preserved)
        while j < len(rules) and guards[rules[j]][depth:depth + 1] == conj[:1]:
            j += 1
        if j - i > 1:
            lines.append(f"{pad}if {_cond(conj[0])}:")
            _emit(rules[i:j], guards, bodies, depth + 1, indent + 1, lines, add)
        else:
            lines.append(f"{pad}if {_merge(conj)}:")
            lines.append(f"{pad}    " + add.format(a=a, x=bodies[a]))
        i = j


# ---- updates --------------------------------------------------------------------------------
def update_src(spec, then: dict, env: dict) -> str:
    """Simultaneous assignment: clear every target field of ``s``, then OR the values in.
    Constant right-hand sides fold into one mask and one value."""
    width = (1 << spec.bits) - 1
    clear, const, dynamic = 0, 0, []
    for target, rhs in then.items():
        t = _parse(target)
        if isinstance(t, ast.Subscript):
            var = spec.vars[t.value.id]
            off = var.off(ast.literal_eval(Expr(spec, env).visit(t.slice)))
        else:
            var = spec.vars[t.id]
            off = var.off()
        clear |= ((1 << var.bits) - 1) << off
        rhs_tree = _parse(rhs)
        if isinstance(rhs_tree, ast.Constant):
            const |= var.dom.encode(rhs_tree.value) << off
            continue
        value = src(spec, rhs, env)
        if hasattr(var.dom, "lo"):
            # a computed integer is range-checked: out of range would corrupt other fields
            value = f"_chk({value}, {var.dom.lo}, {var.dom.hi}, {var.name!r})"
        dynamic.append(f"(({value}) << {off})")
    parts = [f"(s & {~clear & width})"] + ([str(const)] if const else []) + dynamic
    return " | ".join(parts)


def chk(v, lo, hi, name):
    if not lo <= v <= hi:
        raise ModelError(f"{name} := {v} leaves its domain {lo}..{hi}: bound it in the rule")
    return v - lo


def symmetry_src(spec) -> str:
    """``rep(s)``: sort the per-process tuples of the symmetric arrays (an exact canonical
    form of the state's orbit under permutations of the index set)."""
    index, arrays = spec.symmetry
    n = len(spec.indexes[index])
    vs = [spec.vars[a] for a in arrays]
    keep = (1 << spec.bits) - 1
    for v in vs:
        for i in range(n):
            keep &= ~(((1 << v.bits) - 1) << v.off(i))
    lines = ["def rep(s):", "    els = sorted(["]
    for i in range(n):
        reads = ", ".join(f"(s >> {v.off(i)}) & {(1 << v.bits) - 1}" for v in vs)
        lines.append(f"        ({reads},),")
    lines += ["    ])", f"    n = s & {keep}"]
    for i in range(n):
        terms = " | ".join(f"(els[{i}][{k}] << {v.off(i)})" for k, v in enumerate(vs))
        lines.append(f"    n |= {terms}")
    lines.append("    return n")
    return "\n".join(lines)
