"""The one expansion/check core every explorer shares (BFS, DFS, simulation, Spark).

It owns: the successor function (symmetry and boundary folded in), the state key (the
packed state itself, or a 128-bit fingerprint: ``explorers.keyarrays``), property checks
on new states, quiescence/deadlock checks on expanded states, which discovery a property
keeps, coverage bookkeeping and trace rebuilding. Explorers own only their loop.

Which counterexample (or witness) a property keeps, in a level-synchronous engine (BFS,
Spark): among the violating states of the shallowest level where the property is violated,
the one with the smallest order key (``order_key``); its trace runs through the parent
with the smallest order key at every level (the engines expand each level in ascending
order-key order and keep a state's first parent). The engine brackets each level's
checks with ``open_level()`` / ``close_level()``; while a level is open a property decided
in it is still checked, and a later violator replaces the recorded one only when its
order key is smaller (computed only then: a state that violates nothing costs nothing
extra). A property decided at an earlier level is never checked again. Without an open
level (DFS, simulation) the first discovery is kept.

The order key is the Spark explorer's state key, so that every engine orders states
alike: the state key (``rkey``) itself, except for a model that names a partition key,
whose Spark keys carry the partition key's fingerprint in their top 16 bits (from
ORDER_SHIFT up) above 112 bits of the state's own fingerprint (the layout:
``explorers/orderkey.py``; ``explorers/spark/placement.py``), while the local engines
keep the full 128-bit fingerprint as their visited key. Either way a key tells states
apart by at least 112 bits of their own fingerprint; the owner partition comes from the
partition key's bits (or, without one, from a mix of the key), never from bits taken out
of the fingerprint.
"""
from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from kmc.invariants.fused import Checker
from kmc.invariants.properties import ALWAYS, DEADLOCK, QUIESCENT, SOMETIMES
from kmc.model.contract import Model, names_partition_key
from kmc.explorers import keyarrays
from kmc.explorers.orderkey import HIGH, LOW, LOW_WORD, PK_CACHE, partition_high, partitioned_key
from kmc.explorers.rebuilt import rebuilt
from kmc.model.encoding import (
    KEY_BITS, FieldReprs, collision_probability, fieldwise, fields_key, fingerprint128,
)
from kmc.model.trace import Trace
from kmc.model.result import CheckResult, Discovery

class Core:
    def __init__(self, model, *, symmetry: bool | str = False, deadlock: bool = False,
                 properties=None):
        self.model = model
        props = list(model.properties() if properties is None else properties)
        self.properties = props
        self.always = [p for p in props if p.kind == ALWAYS]
        self.quiescent = [p for p in props if p.kind == QUIESCENT]
        self.pending_witness = [p for p in props if p.kind == SOMETIMES]
        # every property of a kind checked on a state at once (invariants.fused)
        self._always_check = Checker(self.always)
        self._quiescent_check = Checker(self.quiescent)
        self._witness_check = Checker(self.pending_witness)
        self.deadlock = deadlock
        self.discoveries: dict[str, tuple] = {}  # name -> (kind, state, detail, locator)
        # while a level is open: name -> key of the discovery recorded in it (provisional)
        self._open: dict | None = None
        self.packed = bool(model.packed)
        use_sym = bool(symmetry) and model.has_symmetry
        self.symmetry = use_sym
        # symmetry="check": every expansion also expands the state's symmetric images
        # and compares (explorers.symcheck)
        self.check_symmetry = use_sym and symmetry == "check"
        # does the model override within_boundary? (then every successor is filtered)
        self.bounded = type(model).within_boundary is not Model.within_boundary
        self.key = self._make_key(use_sym)
        self.symcheck = None  # with symmetry="check": explorers.symcheck.SymmetryCheck
        # key of a state that is already its own representative (every successor the core
        # hands out is): skips a second representative() call on the hot path
        self.rkey = (lambda s: s) if self.packed else fingerprint128
        self.key_dtype = keyarrays.dtype_of(self)  # arrays of keys (keyarrays)
        self.successors = self._make_successors(use_sym)
        self.by_partition_key = not self.packed and names_partition_key(model)
        self._pk_high: dict = {}  # partition key -> its fingerprint's top bits
        self._pk_by_repr = None  # the same from its fields' reprs (partition_high)
        # bits that tell two keys apart (the collision estimate)
        self.key_bits = 64 if self.packed else KEY_BITS
        # Spark: owner = mix64(high word >> shift) mod P (spark.placement)
        self.owner_shift = 0
        self.needs_settled = bool(self.quiescent) or deadlock
        self._fields = _Cache()  # field_keys' answer, shared by this core's copies
        # the field reprs' memos: values per position (None: encoding.MEMO_LIMIT), and
        # whether the level expander keeps a candidate's changed fields as the memos'
        # first objects (encoding.shared); the Spark explorer's tasks change both
        self.reprs_limit: int | None = None
        self.share_fields = True

    # ---- construction -------------------------------------------------------------------
    def _make_key(self, use_sym):
        rep = self.model.representative
        if self.packed:
            return rep if use_sym else (lambda s: s)
        if use_sym:
            return lambda s: fingerprint128(rep(s))
        return fingerprint128

    def _make_successors(self, use_sym):
        m = self.model
        succ = m.successors
        bounded = self.bounded
        if not use_sym and not bounded:
            return succ  # the hot path: no wrapper at all
        rep, within = m.representative, m.within_boundary

        def wrapped(s):
            out = []
            for a, t in succ(s):
                if bounded and not within(t):
                    continue
                out.append((a, rep(t) if use_sym else t))
            return out
        if self.check_symmetry:
            from kmc.explorers.symcheck import SymmetryCheck
            check = SymmetryCheck(m, self.properties, rep, succ, within if bounded else None)
            self.symcheck = check  # the liveness recorder calls it too
            return lambda s: check.expand(s, succ(s))
        return wrapped

    # ---- the order key ----------------------------------------------------------------
    def order_key(self, s) -> int:
        """The key the level-synchronous engines order states by (module docstring); ``s``
        is its own representative, as every state the core hands out is."""
        if not self.by_partition_key:
            return self.rkey(s)
        return (fingerprint128(s) & LOW) | self._partition_bits(s)

    def order_keys(self, keys: np.ndarray, states, pieces=None) -> np.ndarray:
        """Order keys of ``states`` given their state keys (``rkey``, aligned): the keys
        themselves unless the model names a partition key. ``pieces``: the states' field
        reprs (``Level.pieces``, aligned; None where unknown), from which a partition key
        named by fields is printed without looking its values up."""
        if not self.by_partition_key:
            return keys
        by_value = self._partition_bits
        fields = self.model.partition_fields
        if pieces is not None and fields:
            if self._pk_by_repr is None:
                self._pk_by_repr = partition_high(fields)
            by_repr = self._pk_by_repr
            bits = (by_value(s) if p is None else by_repr(p) for s, p in zip(states, pieces))
        else:
            bits = map(by_value, states)
        high = np.fromiter((b >> 64 for b in bits), dtype=np.uint64, count=len(states))
        out = keys.copy()
        out["hi"] = (keys["hi"] & LOW_WORD) | high
        return out

    def _partition_bits(self, s) -> int:
        pk = self.model.partition_key(s)
        bits = self._pk_high.get(pk)
        if bits is None:
            if len(self._pk_high) >= PK_CACHE:
                self._pk_high.clear()
            bits = self._pk_high[pk] = fingerprint128(pk) & HIGH
        return bits

    def field_keys(self):
        """``(cls, reprs, key)`` when the state keys (``rkey``) of this run can be made
        from memoised field reprs (``model.encoding.FieldReprs``): ``cls`` the states'
        ``fieldwise`` type, ``key(reprs.of(s)) == rkey(s)`` for every ``s`` of type
        ``cls``. None otherwise (packed models, other state types, another key function).
        Checked on the initial states, both ways. The answer is kept while the key
        function and the memos' bound stay (``rkey``, ``owner_shift``,
        ``reprs_limit``), for this core and its copies (a Spark worker's tasks copy one
        core: their reprs memos then stay warm from task to task); a pickled core starts
        without it."""
        kept, now = self._fields.value, (self.rkey, self.owner_shift, self.reprs_limit)
        if kept is None or kept[0] != now:
            kept = self._fields.value = (now, self._field_keys())
        return kept[1]

    def _field_keys(self):
        if self.packed:
            return None
        inits = [s for _i, s in self.initial()]
        cls = type(inits[0]) if inits else None
        if cls is None or not fieldwise(cls):
            return None
        reprs = FieldReprs(len(cls._fields), self.reprs_limit)
        fields = self.model.partition_fields
        if self.rkey is fingerprint128:
            key = fields_key(cls)
        elif self.owner_shift and fields:  # the Spark explorer's partition-keyed keys
            key = partitioned_key(fields, fields_key(cls))
        else:
            return None
        if any(key(reprs.of(s)) != self.rkey(s) for s in inits if type(s) is cls):
            return None
        return cls, reprs, key

    # ---- initial states -----------------------------------------------------------------
    def initial(self) -> list[tuple[int, object]]:
        """(init index, state) for each distinct in-boundary initial state."""
        out, seen = [], set()
        rep = self.model.representative if self.symmetry else None
        for i, s in enumerate(self.model.init_states()):
            if not self.model.within_boundary(s):
                continue
            if rep is not None:
                r = rep(s)
                if self.symcheck is not None:
                    self.symcheck.in_orbit(s, r)
                s = r
            k = self.key(s)
            if k not in seen:
                seen.add(k)
                out.append((i, s))
        return out

    # ---- checks -------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """Nothing left to learn: every property has a discovery. With no property at all
        the run explores everything (the counts are what the user asked for)."""
        wanted = len(self.properties) + (1 if self.deadlock else 0)
        return wanted > 0 and len(self.discoveries) >= wanted

    def violated(self) -> bool:
        """True once any always/quiescent/deadlock property has a counterexample."""
        return any(kind != SOMETIMES for kind, *_ in self.discoveries.values())

    def check_new(self, s, locator, pieces=None) -> bool:
        """Check always/sometimes properties on a newly reached state. ``locator`` lets the
        explorer rebuild the trace later; ``pieces``: the reprs of its fields, if known
        (``invariants.fused.Checker.false_at``). Returns True when something was
        recorded."""
        found = False
        disc, opened = self.discoveries, self._open
        if self.always:
            always = self.always
            for i in self._always_check.false_at(s, pieces):
                p = always[i]
                if p.name not in disc or (opened and p.name in opened):
                    found |= self._record(p, ALWAYS, s, locator)
        pending = self.pending_witness
        if pending:
            chk = self._witness_check
            for i in chk.true_at(s, pieces):
                p = chk.props[i]
                if p in pending and self._record(p, SOMETIMES, s, locator):
                    found = True
                    if opened is None:
                        pending.remove(p)
        return found

    def check_settled(self, s, succs, locator, pieces=None) -> bool:
        """Quiescent properties and deadlock, decided once a state's successors are known
        (``pieces`` as for ``check_new``)."""
        if not self.needs_settled:
            return False
        is_fault = self.model.is_fault
        for a, _t in succs:  # a loop, not any(): mostly the first action settles it
            if not is_fault(a):
                return False
        found = False
        disc, opened = self.discoveries, self._open
        if self.deadlock and not succs and (DEADLOCK not in disc or
                                            (opened and DEADLOCK in opened)):
            found |= self.offer(DEADLOCK, DEADLOCK, s, "no action is enabled", locator)
        quiescent = self.quiescent
        for i in self._quiescent_check.false_at(s, pieces):
            p = quiescent[i]
            if p.name not in disc or (opened and p.name in opened):
                found |= self._record(p, QUIESCENT, s, locator)
        return found

    # ---- which discovery a property keeps ----------------------------------------------
    def open_level(self) -> None:
        """Start a level: discoveries recorded until ``close_level`` are provisional, and
        the one with the smallest state key wins (see the module's docstring)."""
        self._open = {}

    def close_level(self) -> None:
        """End a level: its discoveries become final; a witness found is no longer sought."""
        if self._open:
            self.pending_witness = [p for p in self.pending_witness
                                    if p.name not in self.discoveries]
        self._open = None

    def offer(self, name, kind, state, detail, locator, key=None) -> bool:
        """Record a discovery for ``name`` if the rule keeps it: the property is undecided,
        or it was decided in the open level by a state with a larger key. ``key`` is the
        state's ``order_key`` (computed here when not given). Returns True when recorded."""
        opened = self._open
        if opened is None:
            if name in self.discoveries:
                return False
        else:
            if key is None:
                key = self.order_key(state)
            if name in opened:
                if key >= opened[name]:
                    return False
            elif name in self.discoveries:
                return False  # decided at an earlier level
            opened[name] = key
        self.discoveries[name] = (kind, state, detail, locator)
        return True

    def _record(self, p, kind, s, locator) -> bool:
        key = None
        if self._open is not None:
            key = self.order_key(s)
            if p.name in self._open and key >= self._open[p.name]:
                return False  # the recorded state's key is smaller: skip the explanation
        detail = None if kind == SOMETIMES else _explain(p, s)
        return self.offer(p.name, kind, s, detail, locator, key)

    def coverage_counter(self):
        """Per-action fire counts, incremented on the hot path as ``cov[a] += 1``: a plain
        list for packed models (actions are small ints; 2.6x cheaper than a Counter on
        TwoPhase rm=8), a defaultdict otherwise."""
        n = self.model.n_actions
        return [0] * n if self.packed and n else defaultdict(int)

    # ---- results ------------------------------------------------------------------------
    def new_result(self, explorer: str) -> CheckResult:
        r = CheckResult(explorer=explorer)
        r.properties = {p.name: p.kind for p in self.properties}
        if self.deadlock:
            r.properties[DEADLOCK] = ALWAYS
        return r

    def finish(self, r: CheckResult, coverage, trace_for) -> CheckResult:
        """Fill coverage, collision estimate and traces. ``trace_for(locator)`` rebuilds
        a Trace from an explorer-specific locator."""
        m = self.model
        names = Counter()
        items = enumerate(coverage) if isinstance(coverage, list) else coverage.items()
        for a, n in items:
            if n:
                names[m.action_name(a)] += n
        r.coverage = dict(sorted(names.items()))
        declared = m.action_names()
        if declared is not None:
            r.never_fired = [n for n in declared if n not in names]
            for n in r.never_fired:
                r.coverage[n] = 0
        r.collision_probability = 0.0 if self.packed else \
            collision_probability(r.unique_states, r.generated_states, self.key_bits)
        r.extra["key_bits"] = None if self.packed else self.key_bits  # None: exact keys
        props = {p.name: p for p in self.properties}
        for name in self._declared():  # declaration order, whatever the engine
            if name in self.discoveries:
                kind, _s, detail, loc = self.discoveries[name]
                prop = None if kind == DEADLOCK else props.get(name)
                trace = rebuilt(self, prop, name, kind, lambda: trace_for(loc))
                r.discoveries[name] = Discovery(name, kind, trace, detail)
        return r

    def _declared(self) -> list:
        return [p.name for p in self.properties] + ([DEADLOCK] if self.deadlock else [])

    def rebuild(self, init_index: int, keys: list) -> Trace:
        return Trace.from_keys(self.model, init_index, keys, self.key)


class _Cache:
    """One value a Core computes once per process: the core's shallow copies share it
    (the same object), a pickled core (a Spark broadcast) gets an empty one."""
    __slots__ = ("value",)

    def __init__(self):
        self.value = None

    def __reduce__(self):
        return _Cache, ()


def _explain(p, s):
    if p.explain is None:
        return None
    try:
        return p.explain(s)
    except Exception as e:  # an explanation must never hide the violation itself
        return f"(explain failed: {e})"

