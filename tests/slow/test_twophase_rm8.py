import pytest

from kmc.api import check


@pytest.mark.full  # a scale pin, ~20 s: the full tier (`-m full`)
def test_twophase_rm8_has_1745408_states():
    r = check("twophase", params={"rm": 8})
    assert r.complete
    assert r.unique_states == 1_745_408
    assert r.generated_states == 18_507_778  # 18,507,777 successors + the initial state
    assert r.max_depth == 26                  # 25 BFS levels after the initial state
    assert r.verdict("TCConsistent") == "holds"
