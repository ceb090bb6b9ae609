"""One BFS level on one partition: expand a frontier, deduplicate candidates against the
partition's visited keys, check properties. Pure Python + numpy, no Spark: the driver runs
the same functions on small levels (as one partition) and the executors run them inside
``mapPartitions`` on large ones, so both paths give identical answers.

Why the results do not depend on the partitioning (or on which levels ran on the driver):
every choice is made by key order, never by arrival order. A frontier is processed in
ascending key order; a candidate reached from several parents keeps the smallest parent key;
new states are checked in ascending key order, so the first discovery of a property in a
partition is its smallest-key violator, and the driver keeps the smallest over partitions.
"""
from __future__ import annotations

import copy
from itertools import repeat

import numpy as np

from kmc.explorers import keyarrays
from kmc.explorers.keyarrays import group_min, high_word, insert_sorted, sort_order, unseen
from kmc.explorers.level import level_expander
from kmc.explorers.spark import statecodec
from kmc.invariants.properties import SOMETIMES

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_DECIDED = ("decided",)  # placeholder: a property already decided by an earlier level


#: values per field-repr memo on the Spark path (``Core.reprs_limit``). A task's states
#: travel pickled, and memos of the local explorers' bound (``encoding.MEMO_LIMIT``),
#: whose keys are older objects spread over the heap, made the level tasks slower
#: (lifecycle-large's tasks played in one process: 4-5% more CPU time), where the local
#: BFS gains from them
TASK_REPRS_LIMIT = 1 << 12


def for_tasks(core) -> None:
    """Set ``core`` up for the Spark explorer's levels (in place: the explorer owns its
    Core): field-repr memos of ``TASK_REPRS_LIMIT`` values, and candidates kept as the
    model made them (``Core.share_fields`` off). A task pickles its candidates (as
    field tables) before anything holds them, so the memos' first objects would save
    no memory there, and putting them in cost lifecycle-large's tasks 3-4% more CPU
    time; the levels the driver runs are the narrow ones."""
    core.reprs_limit = TASK_REPRS_LIMIT
    core.share_fields = False


def pack_states(states, pieces=None) -> bytes | None:
    """A frontier's states as one pickle (None for packed models, whose keys are the
    states), as field tables when ``pieces`` holds their field reprs (``statecodec``).
    Stages that only pass a frontier along (the owner stage reads its block for the
    visited keys) then copy bytes instead of rebuilding every state object, which costs
    ~60 us per Kafka state."""
    return None if states is None else statecodec.pack(states, pieces)


def unpack_batch(blob, core) -> tuple:
    """(states, their field reprs or None) of a ``pack_states`` blob, the reprs looked up
    in ``core``'s memos (``Core.field_keys``); (None, None) for a packed model's."""
    return (None, None) if blob is None else statecodec.unpack(blob, core.field_keys())


def held_frontier(states):
    """A frontier as a block holds it: (blobs, src, pos) — state i is element pos[i] of
    unpickled blob src[i] — or None for packed models. See ``forwarded``."""
    if states is None:
        return None
    n = len(states)
    return ((pack_states(states),), np.zeros(n, dtype=np.int32), np.arange(n, dtype=np.int32))


def forwarded(blobs, sizes, picked: np.ndarray):
    """The new frontier of an owner, made of the candidate blobs it received as they are:
    ``picked`` indexes the concatenated candidates. Pickling the fresh states again cost
    ~8% of a Kafka run's CPU; the blobs' duplicates cost only their unpickling (cheap
    with the cyclic collector off, ``explorers.gcpause``)."""
    offsets = np.cumsum(np.asarray(sizes, dtype=np.int64))
    src = np.searchsorted(offsets, picked, side="right")
    pos = picked - np.concatenate(([0], offsets))[src]
    return tuple(blobs), src.astype(np.int32), pos.astype(np.int32)


def unpack_frontier(held):
    """The states of a held frontier, aligned with its keys (None for packed models)."""
    if held is None:
        return None
    blobs, src, pos = held
    lists = [statecodec.unpack(b)[0] for b in blobs]
    if len(lists) == 1:
        only = lists[0]
        return only if len(only) == pos.size else [only[p] for p in pos.tolist()]
    return [lists[b][p] for b, p in zip(src.tolist(), pos.tolist())]


def mix64_array(keys: np.ndarray) -> np.ndarray:
    """``model.encoding.mix64`` on a uint64 array (numpy multiplies wrap modulo 2**64)."""
    x = keys.astype(np.uint64, copy=True)
    x ^= x >> _S30
    x *= _M1
    x ^= x >> _S27
    x *= _M2
    x ^= x >> _S31
    return x


def owners(keys: np.ndarray, nparts: int, shift: int = 0, table=None) -> np.ndarray:
    """The partition that owns each key, read from its high word ``w``
    (``keyarrays.high_word``; the key itself when packed): ``table[w >> shift]`` when
    the Spark level was given an owner table (``placement.balanced_owners``), else
    mix64(w >> shift) mod nparts (stable across processes and machines, unlike
    Python's hash()); ``shift`` is the Core's ``owner_shift``
    (``explorers.spark.placement``)."""
    if nparts == 1:
        return np.zeros(keys.size, dtype=np.int64)
    keys = high_word(keys)
    src = keys >> np.uint64(shift) if shift else keys
    if table is not None:
        return table[src.astype(np.int64)].astype(np.int64)
    return (mix64_array(src) % np.uint64(nparts)).astype(np.int64)


def split_by_owner(keys: np.ndarray, nparts: int, shift: int = 0, table=None):
    """Indices into ``keys`` per owning partition, each in the original (ascending) order."""
    if nparts == 1:
        return [np.arange(keys.size)]
    dest = owners(keys, nparts, shift, table)
    if nparts <= 16:  # a mask per owner is cheaper than a sort when owners are few
        return [np.flatnonzero(dest == p) for p in range(nparts)]
    order = np.argsort(dest, kind="stable")
    bounds = np.searchsorted(dest[order], np.arange(nparts + 1))
    return [order[bounds[p]:bounds[p + 1]] for p in range(nparts)]


def task_core(core, decided):
    """A private copy of the shared Core for one task: it records only this task's
    discoveries and skips properties an earlier level already decided."""
    c = copy.copy(core)
    c.discoveries = {n: _DECIDED for n in decided}
    c.pending_witness = [p for p in core.properties
                         if p.kind == SOMETIMES and p.name not in decided]
    return c


def found(c) -> dict:
    """name -> (kind, state, detail, key) for what this task's core discovered."""
    return {n: d for n, d in c.discoveries.items() if d is not _DECIDED}


def expand(core, decided, keys: np.ndarray, states, nparts: int, known=(), table=None,
           pieces=None):
    """Expand a frontier (``keys`` ascending; ``states`` aligned, or None for packed
    models whose state is its key) with the local BFS's level expander
    (``explorers.level``). Returns (batches, generated, coverage, discoveries, shipped):
    batches[p] = (candidate keys, parent keys, candidate states or None, their field
    reprs or None) owned by p; each batch's keys are distinct and ascending.

    ``known``: sorted key arrays known to be visited already — the driver's window of the
    last levels' keys (``Run.window``) or, once that grows too large, the frontier itself
    and what this partition shipped in the last two levels (every one of those was added
    to visited by its owner). Candidates found there are not shipped: on the Kafka models
    that drops nearly all stale candidates, and shipping a state costs more than
    generating it. ``shipped`` (ascending) feeds the next level's fallback ``known``.
    ``pieces``: the frontier's field reprs as ``dedup`` returned them, if it ran in
    this process (else they are looked up again)."""
    chk = task_core(core, decided)
    coverage = chk.coverage_counter()
    expand_level = level_expander(chk, coverage)
    frontier = keys.tolist() if states is None else states
    lvl = expand_level(frontier, None, _never, pieces)
    # the expander keeps the first parent of a candidate; the frontier ascends by key, so
    # that is the parent with the least key
    parents = keys[lvl.parents] if lvl.parents.size else keyarrays.empty(keys.dtype)
    ckeys, cstates = lvl.keys, lvl.states
    if states is None:
        cstates = None
    cpieces = None if cstates is None else lvl.pieces
    if lvl.states is not None:  # the dict expander keeps discovery order: sort by key
        order = sort_order(ckeys)
        ckeys, parents = ckeys[order], parents[order]
        cstates, cpieces = _picked(order, cstates, cpieces)
    if known:
        keep = np.ones(ckeys.size, dtype=bool)
        for arr in known:
            keep &= ~member(arr, ckeys)
        if not keep.all():
            idx = np.flatnonzero(keep)
            ckeys, parents = ckeys[idx], parents[idx]
            cstates, cpieces = _picked(idx, cstates, cpieces)
    batches = []
    for idx in split_by_owner(ckeys, nparts, core.owner_shift, table):
        batches.append((ckeys[idx], parents[idx], *_picked(idx, cstates, cpieces)))
    settled = {n: (kind, s, detail, keyarrays.key_at(keys, loc[1]))
               for n, (kind, s, detail, loc) in found(chk).items()}
    return batches, lvl.generated, as_counts(coverage), settled, ckeys


def _picked(idx: np.ndarray, states, pieces) -> tuple:
    """The states and field reprs (each a list, or None) at positions ``idx``."""
    at = idx.tolist()
    return (None if states is None else [states[i] for i in at],
            None if pieces is None else [pieces[i] for i in at])


def member(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """True where keys[i] is in the sorted array ``sorted_keys``."""
    return ~unseen(sorted_keys, keys)


def as_counts(coverage) -> dict:
    """Per-action counts as a plain dict (the core's counter is a list for packed models)."""
    items = enumerate(coverage) if isinstance(coverage, list) else coverage.items()
    return {a: n for a, n in items if n}


def _never(_i):
    return False  # a level on an executor is not aborted from inside (see SparkFrontier)


def dedup(core, decided, visited: np.ndarray, batches, commit: bool):
    """Merge candidate batches owned by this partition, drop the visited ones, check the
    new states. Returns (visited', new keys, new parents, new states, discoveries, picked,
    pieces); new keys ascend; ``picked`` indexes each new state in the concatenated
    batches; ``pieces`` holds the new states' field reprs for ``expand`` (those that
    came with the batches, else looked up for the checks; None where there are none).
    With ``commit`` False (the depth bound) nothing is checked or added."""
    packed = core.packed
    if batches:
        keys = np.concatenate([b[0] for b in batches])
        parents = np.concatenate([b[1] for b in batches])
    else:
        keys = parents = keyarrays.empty(core.key_dtype)
    if len(batches) == 1:  # one source: its candidates are already distinct and sorted
        idx, least = np.arange(keys.size), parents
    else:
        # each batch ascends, so a stable sort is a cheap merge of sorted runs; a key
        # reached from several sources keeps its least parent
        order = sort_order(keys)
        ks = keys[order]
        starts = np.flatnonzero(np.concatenate(([True], ks[1:] != ks[:-1]))) \
            if ks.size else np.empty(0, dtype=np.int64)
        idx = order[starts]
        least = group_min(parents[order], starts) if starts.size else parents[:0]
    fresh = _unseen(visited, keys[idx])
    idx = idx[fresh]
    new_keys, new_parents = keys[idx], least[fresh]
    new_states = pieces = None
    if not packed:
        at = idx.tolist()
        flat = [s for b in batches for s in b[2]]
        new_states = [flat[i] for i in at]
        if all(b[3] is not None for b in batches):  # their reprs came along
            flat = [p for b in batches for p in b[3]]
            pieces = [flat[i] for i in at]
    if not commit:
        return visited, new_keys, new_parents, new_states, {}, idx, None
    chk = task_core(core, decided)
    fields = None if pieces is not None or not new_states else chk.field_keys()
    if fields is not None:  # the memos stay warm from task to task (Core.field_keys)
        cls, of = fields[0], fields[1].of
        pieces = [of(s) if type(s) is cls else None for s in new_states]
    if chk.always or chk.pending_witness:
        check_new = chk.check_new
        ints = keyarrays.to_ints(new_keys)
        for s, k, p in zip(ints if packed else new_states, ints,
                           repeat(None) if pieces is None else pieces):
            check_new(s, k, p)
    return _inserted(visited, new_keys), new_keys, new_parents, new_states, found(chk), \
        idx, pieces


def _unseen(visited, keys: np.ndarray) -> np.ndarray:
    """True where ``keys[i]`` is not visited: ``visited`` a sorted key array, or a
    partition's visited set partly on disk (``spill.PartitionVisited``)."""
    if isinstance(visited, np.ndarray):
        return unseen(visited, keys)
    return visited.unseen_mask(keys)


def _inserted(visited, new_keys: np.ndarray):
    if isinstance(visited, np.ndarray):
        return insert_sorted(visited, new_keys)
    visited.add_new(new_keys)
    return visited
