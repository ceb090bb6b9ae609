"""The SCC-based liveness check against a brute force on small random graphs: a
violation exists exactly when some fair stop or some fair strongly connected set of
states lies in the waiting region, reachable through it from an entry."""
import random
from itertools import combinations

import pytest

from kmc import Model, eventually, leads_to
from kmc.explorers.bfs import bfs
from kmc.explorers.dfs import dfs
from kmc.reports.lasso import judge_lasso

NAMES = ("a", "b", "c")


class Random(Model):
    name = "random"

    def __init__(self, seed):
        rng = random.Random(seed)
        self.n = n = rng.randint(2, 6)
        self.edges = {s: sorted({(rng.choice(NAMES), rng.randrange(n))
                                 for _ in range(rng.randint(0, 3))}) for s in range(n)}
        kinds = {x: rng.choice(("weak", "strong", None)) for x in NAMES}
        self.weakly_fair = tuple(x for x in NAMES if kinds[x] == "weak")
        self.strongly_fair = tuple(x for x in NAMES if kinds[x] == "strong")
        self.p = {s for s in range(n) if rng.random() < 0.4}
        self.q = {s for s in range(n) if rng.random() < 0.4}
        self.kind = rng.choice(("eventually", "leads_to"))

    def init_states(self):
        return [0]

    def actions(self, s):
        return self.edges[s]

    def next_state(self, s, a):
        return a[1]

    def action_name(self, a):
        return a[0]

    def properties(self):
        if self.kind == "eventually":
            return [eventually("L", lambda s: s in self.q)]
        return [leads_to("L", lambda s: s in self.p, lambda s: s in self.q)]


def brute_force(m) -> bool:
    """True when some fair behaviour violates the model's property."""
    reach, todo = {0}, [0]
    while todo:
        s = todo.pop()
        for _x, t in m.edges[s]:
            if t not in reach:
                reach.add(t)
                todo.append(t)
    region = {s for s in reach if s not in m.q}
    entries = {0} & region if m.kind == "eventually" else m.p & region
    inside, todo = set(entries), list(entries)
    while todo:
        s = todo.pop()
        for _x, t in m.edges[s]:
            if t in region and t not in inside:
                inside.add(t)
                todo.append(t)
    fair = set(m.weakly_fair) | set(m.strongly_fair)
    if any(not {x for x, _t in m.edges[s]} & fair for s in inside):
        return True  # a fair stop
    for k in range(1, len(inside) + 1):
        for sub in combinations(sorted(inside), k):
            if _fair_cycle(m, set(sub)):
                return True
    return False


def _fair_cycle(m, sub) -> bool:
    inner = [(s, x, t) for s in sub for x, t in m.edges[s] if t in sub]
    if not inner or not _strongly_connected(sub, inner):
        return False
    taken = {x for _s, x, _t in inner}
    for x in m.weakly_fair:
        if all(x in {y for y, _t in m.edges[s]} for s in sub) and x not in taken:
            return False
    for x in m.strongly_fair:
        if any(x in {y for y, _t in m.edges[s]} for s in sub) and x not in taken:
            return False
    return True


def _strongly_connected(sub, inner) -> bool:
    start = min(sub)
    for edges in (inner, [(t, x, s) for s, x, t in inner]):
        seen, todo = {start}, [start]
        while todo:
            s = todo.pop()
            for a, _x, b in edges:
                if a == s and b not in seen:
                    seen.add(b)
                    todo.append(b)
        if seen != sub:
            return False
    return True


@pytest.mark.parametrize("use_scipy", [True, False])
@pytest.mark.parametrize("block", range(2))
def test_the_checker_agrees_with_a_brute_force(block, use_scipy, monkeypatch):
    import kmc.explorers.liveness as liveness
    monkeypatch.setattr(liveness, "USE_SCIPY", use_scipy)
    for seed in range(block * 200, block * 200 + 200):
        m = Random(seed)
        want = brute_force(m)
        for engine in (bfs, dfs):
            r = engine(m)
            assert (r.verdict("L") == "violated") == want, (seed, engine.__name__)
            if want:  # and the lasso it gives is a fair violating behaviour
                t = r.discoveries["L"].trace
                ok, _k, words = judge_lasso(m, m.properties()[0], t, t.loop_start)
                assert ok, (seed, words)
