"""Pinned counts of the validation models: TLC, Spin and Stateright publish these."""
import itertools

import pytest

from kmc.explorers.bfs import bfs
from kmc.api import check
from kmc.model.validation.diehard import DieHard
from kmc.model.validation.tcommit import TCommit
from kmc.model.validation.twophase import TwoPhase
from toymodels import reachable


@pytest.mark.parametrize("rm, unique, generated, depth", [
    (3, 288, 1146, 11),
    (4, 1568, None, None),
    (5, 8832, None, None),
])
def test_twophase_published_counts(rm, unique, generated, depth):
    r = check("twophase", params={"rm": rm})
    assert r.complete
    assert r.unique_states == unique
    if generated is not None:
        assert r.generated_states == generated  # TLC counts the initial state as generated
        assert r.max_depth == depth             # diameter, initial state = depth 1
    assert r.verdicts() == {"TCConsistent": "holds", "SomeCommit": "witness_found"}


def test_tcommit_published_counts():
    r = check("tcommit", params={"rm": 3})
    assert (r.unique_states, r.generated_states, r.max_depth) == (34, 94, 7)
    assert r.verdict("TCConsistent") == "holds"


def test_diehard_shortest_counterexample_has_seven_states():
    r = check("diehard")
    r.assert_violated("NotSolved", length=7)
    last = r.discoveries["NotSolved"].trace.last
    assert DieHard().unpack(last)["big"] == 4


def _orbits(model, n):
    """Brute force: the number of orbits of the reachable states under all permutations of
    the n resource managers (what an exact symmetry reduction must count)."""
    seen = reachable(model)

    def permute(s, p):
        u = model.unpack(s)
        for k in ("rmState", "tmPrepared", "msgPrepared"):
            u[k] = [u[k][p[i]] for i in range(n)]
        return model.pack(u)
    perms = list(itertools.permutations(range(n)))
    return len({min(permute(s, p) for p in perms) for s in seen})


@pytest.mark.parametrize("rm", [3, 4])
def test_symmetry_reduction_counts_exact_orbits(rm):
    m = TwoPhase(rm)
    r = bfs(m, symmetry=True)
    assert r.unique_states == _orbits(m, rm)
    assert r.verdict("TCConsistent") == "holds"


def test_twophase_rm5_symmetry_is_exact_not_stateright_665():
    # Stateright reports 665 for rm=5 with symmetry: its representative sorts by rm_state
    # only and its DFS explores the original states, which leaves some orbits split. The
    # exact orbit count is 314 (brute force over all 120 permutations agrees, see above).
    assert bfs(TwoPhase(5), symmetry=True).unique_states == 314


def test_tcommit_symmetry_and_plain_agree_on_verdicts():
    a, b = bfs(TCommit(4)), bfs(TCommit(4), symmetry=True)
    assert b.unique_states < a.unique_states
    assert a.verdicts() == b.verdicts()


def test_visited_set_is_eight_bytes_per_state():
    r = check("twophase", params={"rm": 5})
    assert r.visited_bytes == 8 * r.unique_states
