"""The explored state graph, kept compactly for liveness checking.

While an explorer expands states, ``GraphRecorder`` takes the place of the core's
successor function and records, per expanded state, its key, the fairness classes of the
actions enabled in it (a bit mask, model/fairness.py), which liveness predicates hold in
it (two bits per property), and one edge per successor: the successor's key and the
fairness class of the action taken (-1: not fair). Everything goes into flat arrays
(``array.array``: a key is one 64-bit word for packed models and two — high and low —
for fingerprints; 1 byte per edge class); no state is kept.

``GraphRecorder.graph()`` then builds a ``StateGraph`` in compressed sparse row form:
node ids are the ranks of the keys (so every explorer numbers the same graph alike), and
an edge to a state that was never expanded (cut off by --max-states, --max-depth or a
stop) is dropped: such a state is not in the graph, and nothing is concluded about it.
The enabled classes of a state are computed from every action enabled in it, including
those leading out of ``within_boundary``: a fair action that leaves the boundary is still
enabled, so a loop that ignores it is not a fair loop.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from kmc.explorers.errors import ExplorerError
from kmc.explorers.level import keyer
from kmc.invariants.fused import Checker
from kmc.model.contract import ModelError
from kmc.model.fairness import FairnessClasses


_M64 = (1 << 64) - 1
#: states whose keys the recorder remembers (then it starts over): the successors of a
#: few levels, which is where a state is reached again
MEMO_STATES = 1 << 17


@dataclass
class StateGraph:
    hi: np.ndarray        # uint64 per node: high word of the state key (0 when narrow)
    lo: np.ndarray        # uint64 per node: low word; node ids are in key order
    offsets: np.ndarray   # int64, n + 1: edges of node v are offsets[v]:offsets[v + 1]
    dst: np.ndarray       # int64 node id per edge
    group: np.ndarray     # int8 fairness class per edge (-1: not fair)
    enabled: np.ndarray   # uint64 per node: fairness classes enabled there
    flags: np.ndarray     # uint64 per node: bit 2i trigger of property i, 2i+1 awaited
    inits: list           # (node id, init index) of the expanded initial states

    @property
    def n(self) -> int:
        return int(self.lo.size)

    def key(self, v: int) -> int:
        """The state key of node ``v``, as the core computes it."""
        return (int(self.hi[v]) << 64) | int(self.lo[v])

    def flag(self, bit: int) -> np.ndarray:
        return (self.flags >> np.uint64(bit)) & np.uint64(1) == 1

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in (self.hi, self.lo, self.offsets, self.dst,
                                         self.group, self.enabled, self.flags)))


class GraphRecorder:
    """Records the graph of one run. ``attach`` replaces ``core.successors``."""

    def __init__(self, core, props):
        self.core = core
        self.props = list(props)
        self.fair = FairnessClasses(core.model)
        self.wide = not core.packed  # fingerprints: two words a key
        self.src_hi, self.src_lo = array("Q"), array("Q")
        self.count = array("I")
        self.enabled = array("Q")
        self.flags = array("Q")
        self.dst_hi, self.dst_lo = array("Q"), array("Q")
        self.group = array("b")

    def attach(self) -> None:
        core = self.core
        model = core.model
        base = model.successors
        rep = model.representative if core.symmetry else None
        within = model.within_boundary if core.bounded else None
        group = self.fair.group
        # record states: keys from field reprs, as the explorers make them
        # (``level.keyer``), the core's key function left to them; any other state: the
        # core's key function memoised by state
        if not core.packed and core.field_keys() is None:
            self._memo_key()
        keyed = keyer(core)
        check = core.symcheck
        src_hi, src_lo = self.src_hi.append, self.src_lo.append
        dst_hi, dst_lo = self.dst_hi.append, self.dst_lo.append
        count_add, en_add, flag_add = self.count.append, self.enabled.append, \
            self.flags.append
        group_add = self.group.append
        flags_of = predicate_flags(self.props)
        wide = self.wide

        def successors(s):
            raw = base(s)
            if check is not None:  # --check-symmetry (explorers.symcheck)
                check.expand(s, raw)
            plain = rep is None and within is None
            out = raw if plain else []
            ks, sp = keyed(s)
            mask = 0
            for a, t in raw:
                g = group(a)
                if g >= 0:
                    mask |= 1 << g
                if not plain:
                    if within is not None and not within(t):
                        continue
                    if rep is not None:
                        t = rep(t)
                    out.append((a, t))
                k = keyed(t, s, sp)[0]
                if wide:
                    dst_hi(k >> 64)
                    dst_lo(k & _M64)
                else:
                    dst_lo(k)
                group_add(g)
            bits = flags_of(s, sp)
            if wide:
                src_hi(ks >> 64)
                src_lo(ks & _M64)
            else:
                src_lo(ks)
            count_add(len(out))
            en_add(mask)
            flag_add(bits)
            return out

        def guarded(s):
            try:
                return successors(s)
            except ModelError as e:  # a fault or an input declared fair: bad input
                raise ExplorerError(str(e)) from None

        core.successors = guarded
        # the packed fast path generates successors without this function: take the
        # generic one (it calls core.successors for every expanded state)
        core.needs_settled = True

    def _memo_key(self):
        """The core's key function, memoized by state, for states that are not field-wise
        records: the recorder keys every successor, the explorer then keys the level's new
        states again, and most states are reached several times. Installed as
        ``core.rkey`` (packed models: the key is the state).
        The memo finds a state by its type and equality only where equal states of one
        type print alike, which field-wise records promise (``model.encoding.
        fieldwise``); any other state by identity (equal states of two NamedTuple types,
        or 1 and True, have two keys)."""
        core = self.core
        rkey = core.rkey
        if core.packed:
            return rkey
        memo: dict = {}
        get = memo.get
        if core.field_keys() is None:  # by identity: the memo holds the state, so its
            def key(s):                # id is not reused while the entry lives
                e = get(id(s))
                if e is None or e[0] is not s:
                    if len(memo) >= MEMO_STATES:
                        memo.clear()
                    e = memo[id(s)] = (s, rkey(s))
                return e[1]
            core.rkey = key
            return key

        def key(s):
            m = (type(s), s)  # a state of another record type is another state
            k = get(m)
            if k is None:
                if len(memo) >= MEMO_STATES:
                    memo.clear()
                k = memo[m] = rkey(s)
            return k
        core.rkey = key
        return key

    @property
    def nbytes(self) -> int:
        return sum(a.itemsize * len(a) for a in (
            self.src_hi, self.src_lo, self.count, self.enabled, self.flags, self.dst_hi,
            self.dst_lo, self.group))

    def graph(self) -> StateGraph:
        """The recorded graph (see the module's docstring)."""
        count = _np(self.count, np.uint32).astype(np.int64)
        n_src = count.size
        lo = np.concatenate((_np(self.src_lo, np.uint64), _np(self.dst_lo, np.uint64)))
        # dense ranks of every key seen (as a source or as a successor), in key order;
        # one-word keys sort alone (no high words: 8 bytes an edge less, twice)
        if self.wide:
            hi = np.concatenate((_np(self.src_hi, np.uint64), _np(self.dst_hi, np.uint64)))
            order = np.lexsort((lo, hi))
            sh, sl = hi[order], lo[order]
            new = np.ones(order.size, dtype=bool)
            new[1:] = (sh[1:] != sh[:-1]) | (sl[1:] != sl[:-1])
            del sh, sl
        else:
            order = np.argsort(lo, kind="stable")
            sl = lo[order]
            new = np.ones(order.size, dtype=bool)
            new[1:] = sl[1:] != sl[:-1]
            del sl
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.cumsum(new) - 1
        n_keys = int(new.sum())
        del order, new
        src_rank, dst_rank = rank[:n_src], rank[n_src:]
        # a state expanded twice (DFS under a depth bound) keeps its first record
        ranks, first = np.unique(src_rank, return_index=True)
        n = ranks.size
        node_of = np.full(n_keys, -1, dtype=np.int64)
        node_of[ranks] = np.arange(n)
        start = np.concatenate(([0], np.cumsum(count)))
        counts = count[first]
        total = int(counts.sum())
        idx = np.repeat(start[first] - np.concatenate(([0], np.cumsum(counts)))[:-1],
                        counts) + np.arange(total)
        edst = node_of[dst_rank[idx]]
        egrp = _np(self.group, np.int8)[idx]
        known = edst >= 0  # edges to states never expanded are dropped
        counts = np.bincount(np.repeat(np.arange(n), counts)[known], minlength=n)
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        del rank, src_rank, dst_rank, idx
        src_hi = hi[:n_src][first] if self.wide else np.zeros(n, dtype=np.uint64)
        g = StateGraph(src_hi, lo[:n_src][first], offsets, edst[known],
                       egrp[known], _np(self.enabled, np.uint64)[first],
                       _np(self.flags, np.uint64)[first], [])
        core = self.core
        for init_index, s in core.initial():
            k = core.rkey(s)
            at = np.flatnonzero((g.lo == np.uint64(k & _M64)) &
                                (g.hi == np.uint64(k >> 64)))
            if at.size:
                g.inits.append((int(at[0]), init_index))
        return g


def predicate_flags(props):
    """``flags(s, pieces) -> int``: two bits per liveness property, which of its
    predicates hold in ``s`` (bit 2i: triggered, bit 2i+1: awaited). The predicates are
    Property values (``LivenessProperty.trigger``, ``.target``), checked together as the
    invariants are (``invariants.fused.Checker``: verdicts looked up by the state's field
    reprs when ``pieces`` holds them). Every liveness property is a ``LivenessProperty``
    (a plain ``Property`` refuses the liveness kinds)."""
    parts, where = [], []
    for p in props:  # (index of the trigger or -1, index of the target) in ``parts``
        t = -1 if p.trigger is None else len(parts)
        parts.extend(([] if p.trigger is None else [p.trigger]) + [p.target])
        where.append((t, len(parts) - 1))
    false_at = Checker(parts).false_at

    def flags(s, pieces=None):
        false = false_at(s, pieces)
        bits = 0
        for i, (t, a) in enumerate(where):
            if t not in false:  # -1 never is: eventually's P always holds
                bits |= 1 << (2 * i)
            if a not in false:
                bits |= 2 << (2 * i)
        return bits
    return flags


def _np(arr: array, dtype) -> np.ndarray:
    return np.frombuffer(arr, dtype=dtype) if len(arr) else np.empty(0, dtype=dtype)
