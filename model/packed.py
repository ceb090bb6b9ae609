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

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from kmc.invariants.properties import always, quiescent, sometimes
from kmc.model import packed_codegen as cg
from kmc.model.contract import Model, ModelError
from kmc.model.packed_checks import check_spec, free_names


#: the ``__module__`` of the generated functions (not an importable module)
GENERATED_MODULE = "<kmc packed model>"


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

    def __post_init__(self):
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in (self.lo, self.hi)):
            raise ModelError(f"Int({self.lo!r}, {self.hi!r}): the bounds must be whole numbers")
        if self.lo > self.hi:
            raise ModelError(f"Int({self.lo}, {self.hi}) is empty: write the lower bound "
                             "first, e.g. Int(0, 3)")

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
        if not isinstance(dom, (Enum, Int)) or dom.size < 1:
            raise ModelError(f"variable {name!r} has domain {dom!r}: give a non-empty "
                             "Enum(...), Int(lo, hi) or Bool()")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool)
                                 or size < 1):
            raise ModelError(f"variable {name!r} has size {size!r}: an array needs a "
                             "positive whole size")
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


class PackedModel(Model):
    """A Model compiled from a ``Spec``. Subclasses implement ``declare(spec)``."""

    packed = True

    def declare(self, spec: Spec) -> None:
        raise NotImplementedError

    def __init__(self):
        spec = Spec()
        self.declare(spec)
        check_spec(spec, self.name)
        self.spec = spec
        self.has_symmetry = spec.symmetry is not None
        self._rules = []  # (name, params, fault, actor) per rule instance = action id
        guards, conj, bodies = [], [], []
        for name, over, when, then, fault, actor in spec.rules:
            for env in _instances(spec, over):
                self._rules.append((name, env, fault, actor))
                with self._blaming(f"rule {name!r}"):
                    guards.append(cg.src(spec, when, env))
                    conj.append(cg.conjuncts(spec, when, env))
                    bodies.append(cg.update_src(spec, then, env))
                    _defined(spec, guards[-1], bodies[-1])
        self._guard_src, self._body_src = guards, bodies
        self.n_actions = len(self._rules)
        lines = [cg.emit_successors(conj, bodies)]
        for a, (g, b) in enumerate(zip(guards, bodies)):
            lines += [f"def g{a}(s): return {g}", f"def u{a}(s): return {b}"]
        if self.has_symmetry:
            lines.append(cg.symmetry_src(spec))
        self.generated_source = "\n".join(lines)
        # a module name no import finds: cloudpickle (the Spark explorer ships the model)
        # then pickles these functions by value at once, instead of searching every
        # loaded module for one that holds them (0.1-0.2 s per check on TwoPhase rm=8)
        ns: dict = {"_chk": cg.chk, "__name__": GENERATED_MODULE}
        exec(compile(self.generated_source, f"<packed {self.name}>", "exec"), ns)  # noqa: S102
        self.successors = ns["successors"]
        self.make_successor_states = ns["make_successor_states"]
        self._g = [ns[f"g{a}"] for a in range(len(guards))]
        self._u = [ns[f"u{a}"] for a in range(len(guards))]
        if self.has_symmetry:
            self.representative = ns["rep"]
        self._props = []
        for kind, pname, expr in spec.props:
            with self._blaming(f"{kind} property {pname!r}"):
                code = cg.src(spec, expr, {})
                _defined(spec, code)
            fn = eval(compile(f"lambda s: {code}", f"<{pname}>", "eval"),  # noqa: S307
                      {"_chk": cg.chk, "__name__": GENERATED_MODULE})
            maker = {"always": always, "sometimes": sometimes, "quiescent": quiescent}[kind]
            self._props.append(maker(pname, fn, description=expr))
        with self._blaming("spec.init"):
            self._inits = [self.pack(v) for v in spec.inits]

    @contextmanager
    def _blaming(self, part: str):
        """A declaration error found while compiling names the model and its part."""
        try:
            yield
        except ModelError as e:
            raise ModelError(f"packed model {self.name!r}: {part}: {e}") from None

    # ---- Model contract ---------------------------------------------------------------
    def init_states(self):
        return list(self._inits)

    def actions(self, s):
        return [a for a, g in enumerate(self._g) if g(s)]

    def next_state(self, s, a):
        return self._u[a](s) if self._g[a](s) else None

    def properties(self):
        return list(self._props)

    def symmetric_images(self, s):
        """``s`` with two neighbouring processes swapped, for each neighbouring pair: the
        transpositions that generate every permutation of the symmetric index set."""
        if not self.has_symmetry:
            return None
        index, arrays = self.spec.symmetry
        fields = [(self.spec.vars[a], (1 << self.spec.vars[a].bits) - 1) for a in arrays]
        out = []
        for i in range(len(self.spec.indexes[index]) - 1):
            t = s
            for v, mask in fields:
                lo, hi = v.off(i), v.off(i + 1)
                a, b = (s >> lo) & mask, (s >> hi) & mask
                t = (t & ~((mask << lo) | (mask << hi))) | (b << lo) | (a << hi)
            out.append(t)
        return out

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
            if len(items) != (var.size or 1):
                raise ModelError(f"init state sets {name!r} to {v!r}: {name}[{var.size}] "
                                 f"needs {var.size} values (or one value for all)")
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


def _defined(spec, *codes) -> None:
    for code in codes:
        unknown = free_names(code)
        if unknown and unknown[0] in spec.indexes:
            raise ModelError(f"index set {unknown[0]!r} is read outside all(...)/any(...): "
                             f"range over it there, e.g. all(x[i] for i in {unknown[0]})")
        if unknown:
            raise ModelError(f"{unknown[0]!r} is not a declared variable, index set, rule "
                             "parameter or builtin: declare it or fix the spelling")


def _instances(spec, over):
    envs = [{}]
    for p, dom in over.items():
        values = spec.indexes[dom] if isinstance(dom, str) else tuple(dom)
        envs = [{**e, p: v} for e in envs for v in values]
    return envs


