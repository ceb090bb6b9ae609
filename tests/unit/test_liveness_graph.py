"""The recorded graph in compressed sparse row form: node ids are key ranks, edges keep
successor order, edges to states never expanded are dropped, a state expanded twice
keeps its first record — alike for one-word keys (packed models) and two-word keys."""
from array import array
import random

import numpy as np
import pytest

from kmc.explorers.graph import GraphRecorder


class _Core:
    def initial(self):
        return []


def _recorder(records, wide):
    """A recorder holding ``records``: (key, enabled, flags, [(successor key, class)])."""
    rec = object.__new__(GraphRecorder)
    rec.core, rec.wide = _Core(), wide
    rec.src_hi, rec.src_lo, rec.dst_hi, rec.dst_lo = (array("Q") for _ in range(4))
    rec.count, rec.enabled, rec.flags, rec.group = array("I"), array("Q"), array("Q"), \
        array("b")
    for key, en, fl, succ in records:
        rec.src_hi.append(key >> 64)
        rec.src_lo.append(key & (2 ** 64 - 1))
        rec.count.append(len(succ))
        rec.enabled.append(en)
        rec.flags.append(fl)
        for d, g in succ:
            rec.dst_hi.append(d >> 64)
            rec.dst_lo.append(d & (2 ** 64 - 1))
            rec.group.append(g)
    if not wide:
        rec.src_hi, rec.dst_hi = array("Q"), array("Q")
    return rec


def _records(seed, wide):
    rnd = random.Random(seed)
    top = 2 ** 128 if wide else 2 ** 64  # keys above 2^63 too: ranks are unsigned
    keys = list(dict.fromkeys(rnd.randrange(top) for _ in range(40)))
    expanded = keys[:30]  # the other ten are reached but never expanded
    out = [(k, rnd.randrange(8), rnd.randrange(4),
            [(rnd.choice(keys), rnd.randrange(-1, 3)) for _ in range(rnd.randrange(5))])
           for k in expanded]
    out.append((expanded[3], 7, 3, [(keys[0], 1)]))  # expanded again: the first counts
    return out


def _expected(records):
    first = {}
    for r in records:
        first.setdefault(r[0], r)
    nodes = sorted(first)
    at = {k: i for i, k in enumerate(nodes)}
    edges = [[(at[d], g) for d, g in first[k][3] if d in at] for k in nodes]
    return nodes, edges, [first[k][1] for k in nodes], [first[k][2] for k in nodes]


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_the_graph_is_the_records_in_key_order(seed, wide):
    records = _records(seed, wide)
    g = _recorder(records, wide).graph()
    nodes, edges, enabled, flags = _expected(records)
    assert [g.key(v) for v in range(g.n)] == nodes
    got = [list(zip(g.dst[g.offsets[v]:g.offsets[v + 1]].tolist(),
                    g.group[g.offsets[v]:g.offsets[v + 1]].tolist())) for v in range(g.n)]
    assert got == edges
    assert g.enabled.tolist() == enabled and g.flags.tolist() == flags


@pytest.mark.parametrize("seed", range(3))
def test_one_word_keys_give_the_graph_of_two_word_keys_with_a_zero_high_word(seed):
    records = _records(seed, False)
    narrow, wide = _recorder(records, False).graph(), _recorder(records, True).graph()
    for name in ("hi", "lo", "offsets", "dst", "group", "enabled", "flags"):
        assert np.array_equal(getattr(narrow, name), getattr(wide, name)), name
