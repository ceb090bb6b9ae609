"""The one expansion/check core every explorer shares (BFS, DFS, simulation, Spark).

It owns: the successor function (symmetry and boundary folded in), the state key
(64-bit fingerprint), property checks on new states, quiescence/deadlock checks on expanded
states, coverage bookkeeping and trace rebuilding. Explorers own only their loop.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from kmc.invariants.properties import ALWAYS, DEADLOCK, QUIESCENT, SOMETIMES
from kmc.model.contract import Model
from kmc.model.encoding import collision_probability, fingerprint
from kmc.model.trace import Trace
from kmc.model.result import CheckResult, Discovery


class Core:
    def __init__(self, model, *, symmetry: bool = False, deadlock: bool = False,
                 properties=None):
        self.model = model
        props = list(model.properties() if properties is None else properties)
        self.properties = props
        self.always = [p for p in props if p.kind == ALWAYS]
        self.quiescent = [p for p in props if p.kind == QUIESCENT]
        self.pending_witness = [p for p in props if p.kind == SOMETIMES]
        self.deadlock = deadlock
        self.discoveries: dict[str, tuple] = {}  # name -> (kind, state, detail, locator)
        self.packed = bool(model.packed)
        use_sym = symmetry and model.has_symmetry
        self.symmetry = use_sym
        # does the model override within_boundary? (then every successor is filtered)
        self.bounded = type(model).within_boundary is not Model.within_boundary
        self.key = self._make_key(use_sym)
        # key of a state that is already its own representative (every successor the core
        # hands out is): skips a second representative() call on the hot path
        self.rkey = (lambda s: s) if self.packed else fingerprint
        self.successors = self._make_successors(use_sym)
        self.key_bits = 64  # bits that tell two keys apart (the collision estimate)
        self.owner_shift = 0  # Spark: owner = mix64(key >> shift) mod P (spark.placement)
        self.needs_settled = bool(self.quiescent) or deadlock

    # ---- construction -------------------------------------------------------------------
    def _make_key(self, use_sym):
        rep = self.model.representative
        if self.packed:
            return rep if use_sym else (lambda s: s)
        if use_sym:
            return lambda s: fingerprint(rep(s))
        return fingerprint

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
        return wrapped

    # ---- initial states -----------------------------------------------------------------
    def initial(self) -> list[tuple[int, object]]:
        """(init index, state) for each distinct in-boundary initial state."""
        out, seen = [], set()
        rep = self.model.representative if self.symmetry else None
        for i, s in enumerate(self.model.init_states()):
            if not self.model.within_boundary(s):
                continue
            if rep is not None:
                s = rep(s)
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

    def check_new(self, s, locator) -> bool:
        """Check always/sometimes properties on a newly reached state. ``locator`` lets the
        explorer rebuild the trace later. Returns True when something new was discovered."""
        found = False
        for p in self.always:
            if p.name not in self.discoveries and not p.check(s):
                self.discoveries[p.name] = (ALWAYS, s, _explain(p, s), locator)
                found = True
        if self.pending_witness:
            for p in list(self.pending_witness):
                if p.check(s):
                    self.discoveries[p.name] = (SOMETIMES, s, None, locator)
                    self.pending_witness.remove(p)
                    found = True
        return found

    def check_settled(self, s, succs, locator) -> bool:
        """Quiescent properties and deadlock, decided once a state's successors are known."""
        if not self.needs_settled:
            return False
        is_fault = self.model.is_fault
        if any(not is_fault(a) for a, _t in succs):
            return False
        found = False
        if self.deadlock and not succs and DEADLOCK not in self.discoveries:
            self.discoveries[DEADLOCK] = (DEADLOCK, s, "no action is enabled", locator)
            found = True
        for p in self.quiescent:
            if p.name not in self.discoveries and not p.check(s):
                self.discoveries[p.name] = (QUIESCENT, s, _explain(p, s), locator)
                found = True
        return found

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
        for name, (kind, _s, detail, loc) in self.discoveries.items():
            r.discoveries[name] = Discovery(name, kind, trace_for(loc), detail)
        return r

    def rebuild(self, init_index: int, keys: list) -> Trace:
        return Trace.from_keys(self.model, init_index, keys, self.key)


def _explain(p, s):
    if p.explain is None:
        return None
    try:
        return p.explain(s)
    except Exception as e:  # an explanation must never hide the violation itself
        return f"(explain failed: {e})"

