"""Which partition owns a state: the top 16 bits of its Spark key.

By default a Spark key is the Core's key (the packed state, or the 128-bit xxh3
fingerprint of the canonical encoding) and its owner is ``mix64(w) mod P``, ``w`` the
key's high 64-bit word (``keyarrays.high_word``; the key itself when packed): uniform,
but a state reached from parents in P partitions is generated, fingerprinted and shipped
up to P times. When the model names a partition key (``Model.partition_key``, the part
most actions leave unchanged), the key is the partition key's fingerprint in its top 16
bits above the state's own fingerprint in the other 112, and the owner is
``mix64(w >> 48) mod P``: the partition key's bits alone, so neighbouring states share an
owner, and states with one partition key still differ in 112 bits of their own (the
collision estimate counts those). On lifecycle-large with 2 partitions that ships 1.09
candidates per new state (uniform owners: 1.9).

Keys stay a function of the state alone, so answers do not change; the owner is a
function of the key (and of the level's owner table, below), so the visited set can be
split without the states.

The price of locality is balance: a level's states fall into a few hundred partition-key
values of unequal weight, so two owners do not split a level 50:50 by hashing. Spark
levels therefore route by an owner table (``balanced_owners``) that the driver weighs on
the frontier's keys, level by level, and that puts values linked by the level's
transitions with one owner where the loads allow. A partition key gets two owner
partitions per core on two cores or more, uniform owners one (``default_partitions``):
more partitions even out the cores but multiply the candidates two owners both ship.
"""
from __future__ import annotations

import numpy as np

# owner bits: high word >> SHIFT; the same layout as the order key every engine sorts by
from kmc.explorers.orderkey import HIGH, LOW, ORDER_SHIFT, OWNER_SHIFT as SHIFT
from kmc.explorers.keyarrays import high_word
from kmc.explorers.spark.level import owners
from kmc.explorers.spark.tuning import env_number
from kmc.model.contract import names_partition_key
from kmc.model.encoding import fingerprint128, hash128


def place_by_partition_key(core) -> None:
    """Give ``core`` locality-preserving keys when its model has a partition key (in
    place: the Spark explorer owns its Core). Packed models keep their keys (the key
    is the state)."""
    m = core.model
    if core.packed or not names_partition_key(m):
        return
    pk = m.partition_key

    def rkey(s):  # s is already its own representative
        return (fingerprint128(s) & LOW) | (fingerprint128(pk(s)) & HIGH)
    if m.partition_fields:
        fast = fieldwise_key(m.partition_fields)
        # the model's word that its partition key is these fields, checked where it is
        # cheap: on the initial states, both ways must give the very same keys
        if all(fast(s) == rkey(s) for _i, s in core.initial()):
            rkey = fast
    core.rkey = rkey
    if core.symmetry:
        rep = m.representative
        core.key = lambda s: rkey(rep(s))
    else:
        core.key = rkey
    core.owner_shift = SHIFT
    core.key_bits = ORDER_SHIFT  # states with one partition key differ in these bits only


def fieldwise_key(fields):
    """The partition-key Spark key of a tuple state with the plain tuple repr whose
    partition key is the fields ``fields``, from one repr per field: the state's repr is
    "(" + ", ".join(field reprs) + ")", and so is the key's. Fingerprinting both took
    16.3 us per lifecycle-large state; this takes 13.0 us (the state alone: 12.7 us)."""
    idx = tuple(fields)

    def rkey(s):
        parts = list(map(repr, s))
        whole = hash128(("(" + ", ".join(parts) + ")").encode())
        part = hash128(("(" + ", ".join([parts[i] for i in idx]) + ")").encode())
        return (whole & LOW) | (part & HIGH)
    return rkey


def balanced_owners(weights: np.ndarray, nparts: int, links=None) -> np.ndarray:
    """The owner of each partition-key value (a table indexed by ``high_word(key) >> SHIFT``) that
    splits ``weights`` (one per value) evenly: the heaviest value first, each to the
    least loaded owner (ties: the lowest partition) — or, given ``links``
    (``value_links``), to the owner already holding most of the values it is linked to,
    among the owners loaded at most AFFINITY_SLACK of an even share above the least.
    Values of weight 0 keep their hashed owner. A function of its arguments alone, so a
    re-run task routes exactly as the first run did.

    Why the links: a state reached from parents with two owners is generated,
    fingerprinted and shipped by both, and Kafka's interleavings are full of such
    diamonds (a -> b -> d and a -> c -> d, where one step changes the partition key).
    Offline on lifecycle-large's levels of 2,000 states or more, with the weights and
    links the driver has (``predicted_weights``, two levels before), 2 partitions:
    12.7% of the new states were shipped twice without links and 6.0% with them, and
    the larger owner's load was 1.024 of the mean without and 1.020 with them (3
    partitions: 16.2% and 8.8%, 1.066 and 1.052; 4: 19.1% and 11.0%, 1.082 and 1.074).
    Joining linked values into groups first cut the duplicates as much but unbalanced
    the owners (offline 1.032-1.049 of the mean on 2 partitions; in a real run the
    larger owner got 52.8% of the levels against 51.4%)."""
    table = owners(np.arange(weights.size, dtype=np.uint64), nparts)
    table = table.astype(np.uint16 if nparts <= 1 << 16 else np.uint32)
    values = np.flatnonzero(weights)
    adjacent = _adjacency(links) if links is not None and nparts > 1 else {}
    slack = AFFINITY_SLACK * float(weights.sum()) / nparts
    loads = [0.0] * nparts
    placed: dict = {}
    for v in values[np.lexsort((values, -weights[values]))].tolist():
        least = min(loads)
        p = loads.index(least)
        near = adjacent.get(v)
        if near:
            pull = [0.0] * nparts
            for u, n in near:
                if u in placed:
                    pull[placed[u]] += n
            # most pull, then least load, then lowest partition
            best = max((pull[q], -loads[q], -q) for q in range(nparts)
                       if loads[q] <= least + slack)
            if best[0] > 0:
                p = -best[2]
        placed[v] = p
        table[v] = p
        loads[p] += float(weights[v])
    return table


#: how far above the least loaded owner (a fraction of an even share) a value may go to
#: join the values it is linked to (``balanced_owners``); measured offline on
#: lifecycle-large: 0.01 and 0.05 cut fewer duplicates or balanced worse than 0.02
AFFINITY_SLACK = env_number("KMC_SPARK_AFFINITY", 0.02)


def _adjacency(links) -> dict:
    """value -> [(linked value, count)], both ways."""
    out: dict = {}
    for a, b, n in zip(*(x.tolist() for x in links)):
        out.setdefault(a, []).append((b, float(n)))
        out.setdefault(b, []).append((a, float(n)))
    return out


def _values(keys: np.ndarray, shift: int) -> np.ndarray:
    return (high_word(keys) >> np.uint64(shift)).astype(np.int64)


def _flows(keys: np.ndarray, parents: np.ndarray, shift: int):
    """(src, dst, count): how many states of ``keys`` of partition-key value dst came
    from a parent (``parents``, aligned) of value src."""
    size = 1 << (64 - shift)
    flows, count = np.unique(_values(parents, shift) * size + _values(keys, shift),
                             return_counts=True)
    return flows // size, flows % size, count


def value_links(keys: np.ndarray, parents: np.ndarray, shift: int = SHIFT):
    """``_flows`` between two different values (src != dst)."""
    src, dst, count = _flows(keys, parents, shift)
    moved = src != dst
    return src[moved], dst[moved], count[moved]


#: rates read off fewer states than this (in the level before the frontier) are too
#: noisy to guess by; the frontier's own weights are used instead
FLOW_MIN = 3000


def predicted_weights(keys: np.ndarray, parents=None, before=None, shift: int = SHIFT,
                      steps: int = 2) -> np.ndarray:
    """How many states of each partition-key value the level ``steps`` levels after
    ``keys`` will hold. A Spark level routes its candidates — the states two levels
    after the frontier the driver last saw — so it must guess their weights. Each
    value's states lead to states of some values at the next level; how many, per
    state, the driver reads off the last level: ``keys``' values against their
    ``parents``' values, per state of ``before`` (the level before). Those rates,
    applied twice to ``keys``' weights, are the guess; a value no state of ``keys``
    came from keeps its weight.

    Offline on lifecycle-large's 15 levels of 2,000 states or more, 2 partitions: the
    larger owner got 50.1-52.6% of each level (mean 51.2%) by these guesses, against
    50.7-58.1% (mean 52.7%) by the frontier's own weights (and 50.1-54.6%, mean 51.5%,
    guessing from levels under FLOW_MIN states too)."""
    size = 1 << (64 - shift)
    w = np.bincount(_values(keys, shift), minlength=size).astype(np.float64)
    if parents is None or before is None or before.size < FLOW_MIN:
        return w
    src, dst, counts = _flows(keys, parents, shift)
    seen = np.bincount(_values(before, shift), minlength=size)
    rate = counts / np.maximum(seen[src], 1)  # states of dst per state of src
    kept = np.ones(size, dtype=bool)
    kept[src] = False
    for _ in range(steps):
        w = np.bincount(dst, weights=w[src] * rate, minlength=size) + np.where(kept, w, 0.0)
    return w


def default_partitions(parallelism: int, lumpy: bool = False) -> int:
    """Owner partitions when --partitions is not given: one per core, or two per core
    for lumpy owners (a partition key) on two cores or more.

    Each extra owner adds the candidates that two owners both ship, which one core
    cannot win back: local[1] with 2 partitions used 32.6-33.3 worker CPU s on
    lifecycle-large against 30.3-32.1 s with one (two alternating runs each). On more
    cores, lumpy owners are uneven and a core's speed moves from second to second on a
    shared machine; with two tasks per core the core that is done first takes the next
    one. With the owner table keeping linked values together (1.09 candidates per new
    state with 2 partitions, 1.14 with 4), lifecycle-large on local[2] takes 17.4-23.2 s
    (median 18.9 s) with 4 partitions against 19.3-24.1 s (median 22.8 s) with 2, faster
    in 7 of 9 adjacent pairs of runs (without the links, 2 partitions are faster)."""
    if parallelism <= 1:
        return 1
    return 2 * parallelism if lumpy else parallelism
