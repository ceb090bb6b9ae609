"""Key classes and the partitioners of the KIP-253 model (model/kafka/kip253/keys.py)."""
import pytest

from kmc.model.kafka.kip253.partitioners import linear_partition, modulo_partition
from kmc.model.kafka.kip253.keys import KeySpace, class_modulus
from kmc.model.kafka.kip253.variants import LINEAR, MODULO


def test_class_modulus_covers_both_partitioners():
    # N=2, counts 2..3: linear needs residues mod N*2^(Lmax+1) = 4, modulo also mod 3
    assert class_modulus(2, range(2, 4)) == 12
    # N=2, counts 2..4: Lmax = 1, so 8; lcm with 3 -> 24
    assert class_modulus(2, range(2, 5)) == 24


@pytest.mark.parametrize("hashing", [LINEAR, MODULO])
def test_a_key_class_stands_for_every_hash_with_its_residue(hashing):
    """Every hash congruent to a class's representative modulo M lands in the same
    partition under every count in bounds: the abstraction the model relies on."""
    N, counts = 2, range(2, 6)
    ks = KeySpace(hashing, N, counts, [])
    for h in range(ks.M):
        for n in counts:
            for k in range(1, 6):
                big = h + k * ks.M + 7 * ks.M * k * k
                want = linear_partition(big, N, n) if hashing == LINEAR \
                    else modulo_partition(big, n)
                assert ks.partition(h, n) == want


def test_scenario_key_moves_from_partition_0_to_2_under_both_partitioners():
    for hashing in (LINEAR, MODULO):
        ks = KeySpace(hashing, 2, range(2, 4), [2])
        assert (ks.partition(2, 2), ks.partition(2, 3)) == (0, 2)


@pytest.mark.parametrize("N,nmax", [(1, 4), (2, 5), (3, 7)])
def test_linear_hashing_gives_each_new_partition_exactly_one_parent(N, nmax):
    ks = KeySpace(LINEAR, N, range(N, nmax + 1), [])
    for p in range(N, nmax):
        for old in range(N, p + 1):
            assert len(ks.parents(p, old, p + 1)) == 1, (p, old)


def test_modulo_hashing_gives_a_new_partition_several_parents():
    ks = KeySpace(MODULO, 2, range(2, 4), [])
    assert ks.parents(2, 2, 3) == (0, 1)


def test_shrink_feeders_under_linear_hashing():
    ks = KeySpace(LINEAR, 2, range(2, 5), [])
    assert ks.feeders(0, 2, 3) == (2,)   # 3 -> 2: partition 2's keys go back to 0
    assert ks.feeders(1, 2, 3) == ()
    assert ks.feeders(1, 2, 4) == (3,)   # 4 -> 2: partition 3's keys go back to 1


def test_a_key_class_out_of_range_is_refused():
    with pytest.raises(ValueError, match="not a residue modulo 12"):
        KeySpace(LINEAR, 2, range(2, 4), [12])
