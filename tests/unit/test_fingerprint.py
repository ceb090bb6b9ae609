"""Fingerprints are stable across processes, hash seeds and machines: never Python's
salted hash(). A subprocess with another PYTHONHASHSEED must compute the same values."""
import enum
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import NamedTuple

import pytest
from hypothesis import given, strategies as st

from kmc.model.encoding import NonCanonicalState, check_canonical, fingerprint, mix64


class Color(enum.Enum):
    RED = 1
    BLUE = 2


class Rec(NamedTuple):
    topic: str
    epoch: int
    ids: tuple


STATES_SRC = """
from typing import NamedTuple
class Rec(NamedTuple):
    topic: str
    epoch: int
    ids: tuple
STATES = [
    ("broker-1", ("t", 0), True, None),
    Rec("orders", 3, (1, 2, 3)),
    (Rec("a", 1, ()), Rec("b", 2, ("x", "y"))),
    "ünïcode topic", -7, 2**70, b"raw",
    tuple((f"topic-{i}", i) for i in range(50)),
]
"""


def _fps_in_subprocess(seed: str):
    code = STATES_SRC + (
        "\nimport json\nfrom kmc.model.encoding import fingerprint\n"
        "print(json.dumps([fingerprint(s) for s in STATES]))")
    env = {**os.environ, "PYTHONHASHSEED": seed,
           "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.dirname(__file__)))}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def test_fingerprints_identical_across_processes_with_different_hash_seeds():
    a, b = _fps_in_subprocess("1"), _fps_in_subprocess("4242")
    assert a == b
    assert len(set(a)) == len(a)
    ns: dict = {}
    exec(STATES_SRC, ns)
    assert [fingerprint(s) for s in ns["STATES"]] == a  # and the same in this process


def test_fingerprint_is_64_bit_and_distinguishes_types():
    fps = {fingerprint(x) for x in (1, "1", (1,), True, None, Color.RED, Color.BLUE)}
    assert len(fps) == 7
    assert all(0 <= f < 2**64 for f in fps)


@pytest.mark.parametrize("bad, word", [
    ({1, 2}, "set"), ({"a": 1}, "dict"), ([1], "list"), ((1, frozenset()), "frozenset"),
    (float("nan"), "NaN"), (object(), "object"),
])
def test_non_canonical_states_are_refused_with_a_fix(bad, word):
    with pytest.raises(NonCanonicalState, match=word):
        check_canonical(bad)


def test_a_shared_seen_skips_checked_parts_and_still_refuses_a_new_bad_one():
    good = (1, ("a", 2))
    seen = {}
    check_canonical(good, seen=seen)
    assert id(good) in seen and id(good[1]) in seen
    with pytest.raises(NonCanonicalState, match=r"state\[1\]\[0\] is a list"):
        check_canonical((good, ([1],)), seen=seen)


def test_mutable_dataclass_refused_frozen_accepted():
    @dataclass
    class M:
        x: int

    @dataclass(frozen=True)
    class F:
        x: int
    with pytest.raises(NonCanonicalState, match="frozen=True"):
        check_canonical(M(1))
    check_canonical(F(1))


@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1), unique=True, max_size=200))
def test_mix64_is_a_bijection_on_samples(xs):
    assert len({mix64(x) for x in xs}) == len(xs)
