"""z3 proofs of KIP-253's hashing claims, for every 32-bit key hash.

Method (docs/proofs.md): each claim is a list of obligations, each obligation the *negation*
of (part of) the claim. N, n, m and the hashes are all 32-bit bit-vector constants, N ranges
over [lo, hi] and the counts over [N, growth*N] as constraints, so one solver call covers the
whole range at once. All obligations UNSAT -> "proved"; the first SAT one -> "refuted", and its
model is the counterexample (concrete N, counts, key hashes, partitions).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import z3

from kmc.invariants.hashing import (
    Bounds, Space, bv_const as _c, bv_var as _v, modulus_sound, modulus_tight, z3_level,
    z3_mod_level, z3_modulo_partition, z3_split_pointer_partition,
)

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"


FULL = Bounds()
QUICK = Bounds(1, 4, 16)


@dataclass
class Obligation:
    label: str
    assertions: list            # the negated claim: UNSAT means this part holds
    shown: dict                 # name -> term (or list of terms) to report from a model


@dataclass(frozen=True)
class Theorem:
    id: str
    statement: str
    formula: str
    expected: str
    build: Callable            # (Space, twin=False) -> [Obligation]
    witness: Callable | None = None   # Space -> Obligation, a SAT query shown when proved
    uses: tuple = ()           # theorems whose results this proof relies on (run first)


@dataclass
class Result:
    id: str
    statement: str
    formula: str
    expected: str
    verdict: str
    counterexample: dict | None
    solver_s: float
    witness: dict | None = None
    checks: int = 0

    @property
    def ok(self) -> bool:
        return self.verdict == self.expected

    def to_json(self) -> dict:
        return {"id": self.id, "statement": self.statement, "formula": self.formula,
                "expected": self.expected, "verdict": self.verdict,
                "counterexample": self.counterexample, "witness": self.witness,
                "solver_s": round(self.solver_s, 3)}


n, m, h, h1, h2 = (_v(x) for x in ("n", "m", "h", "h1", "h2"))


# --- claim builders: each returns the obligations; twin=True builds the false variant -----

def split_pointer(sp, twin=False):
    # (a) the residue identity behind z3_mod_level, against z3's own URem, for each concrete
    # N and level (a symbolic divisor would cost minutes; constants cost ~0.1 s each)
    N, out = sp.N, []
    for c in [] if twin else [_c(c) for c in range(sp.b.lo, sp.b.hi + 1)]:
        for k in range(1, sp.lmax + 2):  # k = 0 is h mod N itself
            out.append(Obligation(f"residue identity N={c} k={k}", [
                z3.URem(h, c << k) != z3_mod_level(h, c, k, sp.lmax)],
                {"N": c, "hash": h, "k": _c(k)}))
    # (b) the two decisions (b < n versus a < S) pick the same residue
    fast = sp.lin(h, n)
    if twin:  # off by one in the split test: b <= n instead of b < n
        lvl = z3_level(N, n, sp.lmax)
        high = z3_mod_level(h, N, lvl + 1, sp.lmax)
        fast = z3.If(z3.ULE(high, n), high, z3_mod_level(h, N, lvl, sp.lmax))
    slow = z3_split_pointer_partition(h, N, n, sp.lmax)
    out.append(Obligation("same function", sp.counts() + [fast != slow],
                          {"N": N, "n": n, "hash": h, "formula": fast, "split_pointer": slow}))
    if not twin:  # (c) and it names an existing partition: 0 <= p_n(h) < n
        out.append(Obligation("in range", sp.counts() + [z3.UGE(fast, n)],
                              {"N": N, "n": n, "hash": h, "partition": fast}))
    return out


def expand(sp, twin=False):
    p, q = sp.lin(h, n), sp.lin(h, n + 1)
    parent = z3.URem(n, sp.N) if twin else n - sp.base(n)
    holds = z3.Or(q == p, z3.And(p == parent, q == n))
    return [Obligation("all", sp.counts(hi_n=sp.N * sp.b.growth - 1) + [z3.Not(holds)],
                       {"N": sp.N, "n": n, "hash": h, "before": p, "after": q,
                        "parent": parent})]


def delete(sp, twin=False):
    p, q = sp.lin(h, n), sp.lin(h, n - 1)
    target = (n - 1) - sp.base(n if twin else n - 1)  # twin: level of n instead of n-1
    holds = z3.If(p == n - 1, q == target, q == p)
    return [Obligation("all", sp.counts(lo_n=sp.N + 1) + [z3.Not(holds)],
                       {"N": sp.N, "n": n, "hash": h, "before": p, "after": q,
                        "target": target})]


def shrink_one(sp, twin=False):
    # every key of deleted partition d lands in p_m(d), a survivor that depends on d alone;
    # d is itself a key of d, so that survivor does receive keys. One hash instead of two
    # (p_n(h1) == p_n(h2) => p_m(h1) == p_m(h2)) is 2-3x faster and names the survivor.
    d, s = sp.lin(h, n), sp.lin(h, m)
    target = z3.URem(d, sp.base(m)) if twin else sp.lin(d, m)  # twin: d mod K
    shown = {"N": sp.N, "n": n, "m": m, "hash": h, "deleted": d, "lands_in": s,
             "claimed": target}
    out = [Obligation("one survivor", sp.shrink() + [z3.ULE(m, d), s != target], shown)]
    if not twin:
        out.append(Obligation("p_n(d) == d", sp.counts() + [z3.ULT(h, n), sp.lin(h, n) != h],
                              {"N": sp.N, "n": n, "hash": h}))
    return out


def _feeders(sp, count, extra):
    """`count` keys in strictly increasing deleted partitions, all landing in one survivor."""
    hs = [_v(f"k{i}") for i in range(count)]
    ds = [sp.lin(x, n) for x in hs]
    s = sp.lin(hs[0], m)
    cs = sp.shrink() + list(extra) + [z3.ULE(m, ds[0])]
    cs += [z3.ULT(ds[i - 1], ds[i]) for i in range(1, count)]
    cs += [sp.lin(x, m) == s for x in hs[1:]]
    return Obligation(f"{count} feeders", cs,
                      {"N": sp.N, "n": n, "m": m, "survivor": s, "hashes": hs, "deleted": ds})


def _ceil_is(sp, c):
    """ceil((n - m) / K) == c with K = N*2^L(m)."""
    k = sp.base(m)
    return [z3.ULT(_c(c - 1) * k, n - m), z3.ULE(n - m, _c(c) * k)]


def shrink_bound(sp, twin=False):
    g = sp.b.growth
    if twin:  # "at most ceil(...) - 1": refuted by ceil(...) feeders; try 3 first
        return [_feeders(sp, c, _ceil_is(sp, c)) for c in [3, 1, 2] + list(range(4, g)) if c < g]
    # (a) by c3-shrink-one, deleted d feeds exactly survivor p_m(d); two deleted partitions
    # feeding one survivor are at least K apart (d1, d2 are partition indices, not hashes) ...
    d1, d2 = _v("d1"), _v("d2")
    gap = Obligation("feeders are >= K apart", sp.shrink() + [
        z3.ULE(m, d1), z3.ULT(d1, d2), z3.ULT(d2, n), sp.lin(d1, m) == sp.lin(d2, m),
        z3.ULT(d2 - d1, sp.base(m))],
        {"N": sp.N, "n": n, "m": m, "deleted": [d1, d2]})
    # (b) ... so c+1 of them span >= c*K, which [m, n) cannot hold when n - m <= c*K.
    # Integer arithmetic, one query per possible bound c (c <= growth - 1 since K >= N).
    out = [gap]
    for c in range(1, g):
        K, lo, hi = z3.Ints("K m n")
        ds = z3.Ints(" ".join(f"d{i}" for i in range(c + 1)))
        cs = [K >= 1, lo <= ds[0], ds[c] < hi, hi - lo <= c * K]
        cs += [ds[i] >= ds[i - 1] + K for i in range(1, c + 1)]
        out.append(Obligation(f"count {c}", cs, {"K": K, "m": lo, "n": hi, "deleted": ds}))
    return out


def shrink_tight(sp, twin=False):
    # for every j < ceil((n-m)/K), key m + j*K is in deleted partition m + j*K at count n and
    # in survivor m - K at count m: so survivor m - K receives exactly the bound
    k, j = sp.base(m), _v("j")
    bits = (sp.b.growth - 1).bit_length()  # j < growth
    jk = sum((z3.If(z3.Extract(i, i, j) == 1, k << i, _c(0)) for i in range(bits)), _c(0))
    key = m + jk
    survivor = _c(0) if twin else m - k
    holds = z3.And(sp.lin(key, n) == key, sp.lin(key, m) == survivor)
    cs = sp.shrink() + [z3.ULT(j, _c(sp.b.growth)), z3.ULT(jk, n - m), z3.Not(holds)]
    return [Obligation("all", cs, {"N": sp.N, "n": n, "m": m, "hash": key,
                                   "at_n": sp.lin(key, n), "at_m": sp.lin(key, m),
                                   "claimed_survivor": survivor})]


def tight_witness(sp):
    c = min(4, sp.b.growth - 1)
    ob = _feeders(sp, c, _ceil_is(sp, c) + [z3.ULE(_c(min(2, sp.b.hi)), sp.N)])
    ob.shown["bound"] = _c(c)
    return ob


def log_bound(sp, twin=False):
    # the bound proposed for KIP-253 §8: at most floor(log2(n/N)) + 1 = L(n) + 1 feeders
    levels = list(range(1, sp.lmax + 1)) + [0]
    return [_feeders(sp, lv + 2, [z3_level(sp.N, n, sp.lmax) == _c(lv)]) for lv in levels]


def key_classes(sp, twin=False, mult=None, extra_count=0, part=None):
    mult = modulus_tight(sp.b) // 2 if twin else (mult or modulus_sound(sp.b))
    part = part or (lambda x: sp.lin(x, n))
    # h mod N*mult, written as the residue c0 proves equal to URem (~10x faster here)
    r = z3_mod_level(h, sp.N, mult.bit_length() - 1, sp.lmax)
    cs = sp.counts(hi_n=sp.N * sp.b.growth + extra_count) + [part(h) != part(r)]
    return [Obligation("all", cs, {"N": sp.N, "n": n, "hash": h, "class": r,
                                   "partition": part(h), "class_partition": part(r)})]


def key_classes_tight(sp, twin=False):
    # twin: the same modulus stops working once a count may exceed growth*N by one
    return key_classes(sp, mult=modulus_tight(sp.b), extra_count=1 if twin else 0)


def key_classes_nmax(sp, twin=False):
    # what model/kafka/kip253/keys.py uses: for a scenario bound nmax, classes modulo
    # N*2^(L(nmax)+1) serve every count n <= nmax (c5-key-classes is the case nmax = 16N)
    nmax = _v("nmax")
    lvl = z3_level(sp.N, nmax, sp.lmax) + (0 if twin else 1)  # twin: N*2^L(nmax)
    r = z3_mod_level(h, sp.N, lvl, sp.lmax)
    cs = sp.counts() + [z3.ULE(sp.N, nmax), z3.ULE(nmax, sp.N * sp.b.growth),
                        z3.ULE(n, nmax), sp.lin(h, n) != sp.lin(r, n)]
    return [Obligation("all", cs, {"N": sp.N, "nmax": nmax, "n": n, "hash": h, "class": r,
                                   "partition": sp.lin(h, n), "class_partition": sp.lin(r, n)})]


def mod_expand(sp, twin=False):
    p, q = z3_modulo_partition(h, n), z3_modulo_partition(h, n + 1)
    cs = sp.counts(hi_n=sp.N * sp.b.growth - 1) + [q != p, q != n]
    return [Obligation("all", cs, {"N": sp.N, "n": n, "hash": h, "before": p, "after": q})]


def mod_shrink(sp, twin=False):
    d1, d2 = z3_modulo_partition(h1, n), z3_modulo_partition(h2, n)
    s1, s2 = z3_modulo_partition(h1, m), z3_modulo_partition(h2, m)
    cs = sp.shrink() + [d1 == d2, z3.ULE(m, d1), s1 != s2]
    return [Obligation("all", cs, {"N": sp.N, "n": n, "m": m, "hashes": [h1, h2],
                                   "deleted": d1, "lands_in": [s1, s2]})]


def mod_key_classes(sp, twin=False):
    return key_classes(sp, part=lambda x: z3_modulo_partition(x, n))


# --- the theorem list -----------------------------------------------------------------------

C0 = "c0-split-pointer"


def _t(id, expected, statement, formula, build, witness=None, uses=(C0,)):
    return Theorem(id, statement, formula, expected, build, witness, tuple(uses))


THEOREMS = [
    _t(C0, PROVED,
       "the partitioner proved about is KIP-253's linear hashing with split pointer "
       "S = n - N*2^L, and its residues are z3's own h mod N*2^k",
       "h mod N2^k == N*((h div N) mod 2^k) + h mod N;  (b if b < n else a) == "
       "(b if a < S else a) < n, a = h mod N2^L, b = h mod N2^(L+1)", split_pointer, uses=()),
    _t("c1-expand", PROVED,
       "linear hashing, expansion n -> n+1: a key stays, or moves from the single parent "
       "n - N*2^L into the new partition n; no key moves between existing partitions",
       "p' == p  or  (p == n - N2^L(n) and p' == n)", expand),
    _t("c2-delete", PROVED,
       "linear hashing, deletion n -> n-1: only keys of partition n-1 move, all into the one "
       "surviving partition (n-1) - N*2^L(n-1)",
       "p == n-1 ? p' == (n-1) - N2^L(n-1) : p' == p", delete),
    _t("c3-shrink-one", PROVED,
       "linear hashing, shrink n -> m (N <= m < n): all keys of a deleted partition d land in "
       "exactly one surviving partition, p_m(d)",
       "p_n(h) >= m  =>  p_m(h) == p_m(p_n(h));  d < n  =>  p_n(d) == d", shrink_one),
    _t("c3-shrink-bound", PROVED,
       "linear hashing, shrink n -> m: a surviving partition receives keys from at most "
       "ceil((n-m) / K) deleted partitions, K = N*2^L(m)",
       "m <= d1 < d2 < n, p_m(d1) == p_m(d2)  =>  d2 - d1 >= K;  hence #feeders <= "
       "ceil((n-m)/K)", shrink_bound, uses=(C0, "c3-shrink-one")),
    _t("c3-shrink-tight", PROVED,
       "the shrink bound is reached in every case: survivor m - K receives keys from the "
       "deleted partitions m + j*K for every j < ceil((n-m)/K)",
       "j*K < n-m  =>  p_n(m + jK) == m + jK  and  p_m(m + jK) == m - K",
       shrink_tight, witness=tight_witness),
    _t("c3-log-bound", REFUTED,
       "a bound proposed for KIP-253 section 8: a surviving partition receives keys from at "
       "most floor(log2(n/N)) + 1 deleted partitions (false; see c3-shrink-bound)",
       "#feeders <= L(n) + 1", log_bound),
    _t("c4-modulo-expand", REFUTED,
       "modulo hashing, expansion n -> n+1: no key moves between existing partitions",
       "h mod (n+1) == h mod n  or  h mod (n+1) == n", mod_expand, uses=()),
    _t("c4-modulo-shrink", REFUTED,
       "modulo hashing, shrink n -> m: all keys of a deleted partition land in exactly one "
       "surviving partition",
       "h1 mod n == h2 mod n >= m  =>  h1 mod m == h2 mod m", mod_shrink, uses=()),
    _t("c5-key-classes", PROVED,
       "key-class abstraction: under every count in bounds a key's partition depends only on "
       "its hash modulo N*2^(Lmax+1) = 32N, Lmax = L(16N)",
       "p_n(h) == p_n(h mod N2^(Lmax+1))", key_classes),
    _t("c5-key-classes-16N", PROVED,
       "the abstraction is also sound with half the classes, modulo 16N (no smaller modulus "
       "M works: h = M is in partition M at n = 16N, its class in partition 0)",
       "p_n(h) == p_n(h mod 16N)", key_classes_tight),
    _t("c5-key-classes-nmax", PROVED,
       "for any bound nmax in [N, 16N] the classes modulo N*2^(L(nmax)+1) are sound for every "
       "count n in [N, nmax] (the key classes model/kafka/kip253/keys.py uses)",
       "n <= nmax  =>  p_n(h) == p_n(h mod N2^(L(nmax)+1))", key_classes_nmax),
    _t("c5-modulo-key-classes", REFUTED,
       "the same key classes are unsound for modulo hashing",
       "h mod n == (h mod 32N) mod n", mod_key_classes),
]

_TWIN_TEXT = {
    "c0-split-pointer": "split test b <= n instead of b < n",
    "c1-expand": "the parent is n mod N",
    "c2-delete": "the target is (n-1) - N*2^L(n), the level of n instead of n-1",
    "c3-shrink-one": "the survivor of deleted partition d is d mod K(m)",
    "c3-shrink-bound": "at most ceil((n-m)/K) - 1 feeders",
    "c3-shrink-tight": "the witness keys land in survivor 0 instead of m - K",
    "c5-key-classes": "modulo 8N suffices",
    "c5-key-classes-16N": "modulo 16N suffices even for counts up to 16N + 1",
    "c5-key-classes-nmax": "modulo N*2^L(nmax) suffices",
}


def _twin(t: Theorem) -> Theorem:
    """``t`` with one deliberate mistake, its formula shown with the mistake named."""
    return Theorem(t.id + "~false", "FALSE TWIN of " + t.id + ": " + _TWIN_TEXT[t.id],
                   f"{t.formula}, with {_TWIN_TEXT[t.id]}", REFUTED,
                   lambda sp, f=t.build: f(sp, twin=True), uses=t.uses)


TWINS = [_twin(t) for t in THEOREMS if t.id in _TWIN_TEXT]
BY_ID = {t.id: t for t in THEOREMS + TWINS}


# --- the runner -----------------------------------------------------------------------------

def _value(model, term):
    if isinstance(term, list):
        return [_value(model, t) for t in term]
    v = model.eval(term, model_completion=True)
    return v.as_long()


def _solve(ob: Obligation, timeout_s: float):
    s = z3.Solver()
    s.set("timeout", int(timeout_s * 1000))
    s.add(*ob.assertions)
    r = s.check()
    if r == z3.sat:
        model = s.model()
        return r, {k: _value(model, t) for k, t in ob.shown.items()}
    return r, None


def run_theorem(t: Theorem, bounds: Bounds = FULL, timeout_s: float = 300.0) -> Result:
    start = time.perf_counter()
    verdict, cex, checks = PROVED, None, 0
    space = Space(bounds, _v("N"))
    for ob in t.build(space):
        checks += 1
        r, values = _solve(ob, timeout_s)
        if r == z3.sat:
            verdict, cex = REFUTED, values
            break
        if r != z3.unsat:
            verdict, cex = UNKNOWN, {"obligation": ob.label, "reason": str(r)}
            break
    witness = None
    if verdict == PROVED and t.witness is not None:
        _, witness = _solve(t.witness(space), timeout_s)
    return Result(t.id, t.statement, t.formula, t.expected, verdict, cex,
                  time.perf_counter() - start, witness, checks)


def selection(ids=None) -> list:
    """The theorems to run, in list order: all of THEOREMS, or `ids` (twins allowed) plus the
    theorems they use. Raises KeyError on an unknown id."""
    if not ids:
        return list(THEOREMS)
    want, todo = [], list(ids)
    while todo:
        t = BY_ID[todo.pop()]
        if t not in want:
            want.append(t)
            todo.extend(t.uses)
    order = [t.id for t in THEOREMS + TWINS]
    return sorted(want, key=lambda t: order.index(t.id))


def run_all(ids=None, bounds: Bounds = FULL, on_result=None) -> list:
    out = []
    for t in selection(ids):
        res = run_theorem(t, bounds)
        out.append(res)
        if on_result:
            on_result(res)
    return out
