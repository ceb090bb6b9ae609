"""`kmc prove`: every theorem meets its expected verdict, every false twin is refuted by a
counterexample that the plain Python partitioners confirm, the z3 terms and the Python
functions are the same partitioner, and the command's output has the documented shape."""
import json

import pytest
import z3
from hypothesis import given, settings, strategies as st

from kmc.invariants import proofs
from kmc.invariants.hashing import (
    Bounds, shrink_bound, z3_linear_partition, z3_mod_level, z3_modulo_partition,
    z3_split_pointer_partition,
)
from kmc.model.kafka.kip253.partitioners import level, linear_partition, modulo_partition
from kmc.commands import prove
from kmc.errors import UsageError

SMALL = Bounds(1, 3, 8)       # every theorem at this size takes about a second
U32 = st.integers(0, 2**32 - 1)


# --- independent reference: the KIP-253 text, read literally --------------------------------

def kip_partition(h, N, n):
    """L = the largest integer with N*2^L <= n, S = n - N*2^L, Wikipedia's linear hashing."""
    L = max(x for x in range(64) if N * 2**x <= n)
    a = h % (N * 2**L)
    return h % (N * 2**(L + 1)) if a < n - N * 2**L else a


@st.composite
def hash_N_n(draw, growth=16, hi=16):
    N = draw(st.integers(1, hi))
    return draw(U32), N, draw(st.integers(N, growth * N))


def ev(term) -> int:
    return z3.simplify(term).as_long()


@settings(max_examples=300, deadline=None)
@given(hash_N_n())
def test_python_partitioners_match_the_kip_text(args):
    h, N, n = args
    assert linear_partition(h, N, n) == kip_partition(h, N, n)
    assert N << level(N, n) <= n < N << (level(N, n) + 1)
    assert 0 <= linear_partition(h, N, n) < n
    assert modulo_partition(h, n) == h % n


@settings(max_examples=150, deadline=None)
@given(hash_N_n(), st.integers(0, 5))
def test_z3_terms_equal_python_functions(args, k):
    h, N, n = args
    hv, Nv, nv = (z3.BitVecVal(x, 32) for x in (h, N, n))
    want = linear_partition(h, N, n)
    assert ev(z3_linear_partition(hv, Nv, nv)) == want          # symbolic-N shape
    assert ev(z3_linear_partition(hv, N, n)) == want            # int arguments
    assert ev(z3_split_pointer_partition(hv, Nv, nv)) == want
    assert ev(z3_modulo_partition(hv, nv)) == modulo_partition(h, n)
    assert ev(z3_mod_level(hv, Nv, k)) == h % (N << k)


def test_python_partitioners_refuse_bad_input():
    for bad in [(-1, 1, 1), (0, 0, 1), (0, 4, 3)]:
        with pytest.raises(ValueError):
            linear_partition(*bad)
    with pytest.raises(ValueError):
        modulo_partition(5, 0)


def test_shrink_bound_is_the_exact_maximum_by_enumeration():
    # independent of z3: by c5 every hash behaves as its residue mod 32N, so enumerate those
    for N in (1, 2, 3):
        for n in range(N + 1, 16 * N + 1):
            for m in range(N, n):
                feeders = {}
                for h in range(32 * N):
                    d = linear_partition(h, N, n)
                    if d >= m:
                        feeders.setdefault(linear_partition(h, N, m), set()).add(d)
                assert max(map(len, feeders.values())) == shrink_bound(N, n, m), (N, n, m)


# --- the theorems -----------------------------------------------------------------------------

@pytest.mark.parametrize("thm", proofs.THEOREMS, ids=lambda t: t.id)
def test_theorem_meets_expected_verdict_on_a_small_range(thm):
    res = proofs.run_theorem(thm, SMALL)
    assert res.verdict == thm.expected, res.counterexample
    if thm.expected == proofs.REFUTED:
        assert_real_violation(thm.id, res.counterexample, SMALL)


def test_full_default_range_for_claims_1_and_5():
    for tid in ("c1-expand", "c5-key-classes"):
        res = proofs.run_theorem(proofs.BY_ID[tid], proofs.FULL)
        assert res.verdict == proofs.PROVED and res.ok


def test_tightness_witness_reaches_the_bound():
    res = proofs.run_theorem(proofs.BY_ID["c3-shrink-tight"], SMALL)
    w = res.witness
    N, n, m = w["N"], w["n"], w["m"]
    assert len(w["hashes"]) == w["bound"] == shrink_bound(N, n, m)
    assert {linear_partition(x, N, m) for x in w["hashes"]} == {w["survivor"]}
    assert sorted({linear_partition(x, N, n) for x in w["hashes"]}) == w["deleted"]
    assert all(d >= m for d in w["deleted"])


@pytest.mark.parametrize("twin", proofs.TWINS, ids=lambda t: t.id)
def test_false_twin_is_refuted_with_a_real_counterexample(twin):
    res = proofs.run_theorem(twin, SMALL)
    assert res.verdict == proofs.REFUTED, res.counterexample
    assert_real_violation(twin.id, res.counterexample, SMALL)


def _in_bounds(cex, b, extra=0):
    N, n = cex["N"], cex["n"]
    assert b.lo <= N <= b.hi and N <= n <= b.growth * N + extra
    if "m" in cex:
        assert N <= cex["m"] < n


def assert_real_violation(tid, cex, b):
    """Re-check a counterexample with the plain Python partitioners only."""
    lin, K = linear_partition, (lambda N, x: N << level(N, x))
    _in_bounds(cex, b, extra=1 if tid == "c5-key-classes-16N~false" else 0)
    N, n, m = cex["N"], cex["n"], cex.get("m")
    if "hash" in cex:
        h = cex["hash"]
    if tid == "c0-split-pointer~false":
        base = K(N, n)
        high = h % (2 * base)
        buggy = high if high <= n else h % base
        assert buggy != lin(h, N, n) == kip_partition(h, N, n)
    elif tid == "c1-expand~false":
        p, q = lin(h, N, n), lin(h, N, n + 1)
        assert q != p and not (p == n % N and q == n)
    elif tid == "c2-delete~false":
        p, q = lin(h, N, n), lin(h, N, n - 1)
        target = (n - 1) - K(N, n)
        assert (q != target) if p == n - 1 else (q != p)
    elif tid == "c3-shrink-one~false":
        d = lin(h, N, n)
        assert d >= m and lin(h, N, m) != d % K(N, m)
    elif tid in ("c3-shrink-bound~false", "c3-log-bound"):
        hs = cex["hashes"]
        ds = [lin(x, N, n) for x in hs]
        assert len(set(ds)) == len(hs) and min(ds) >= m
        assert len({lin(x, N, m) for x in hs}) == 1
        limit = (shrink_bound(N, n, m) - 1 if tid.endswith("~false")
                 else level(N, n) + 1)  # floor(log2(n/N)) + 1
        assert len(hs) > limit
    elif tid == "c3-shrink-tight~false":
        k, j = K(N, m), (h - m) // K(N, m)
        assert (h - m) % k == 0 and 0 <= j < shrink_bound(N, n, m)
        assert not (lin(h, N, n) == h and lin(h, N, m) == 0)
    elif tid in ("c5-key-classes~false", "c5-key-classes-16N~false"):
        mult = b.growth // 2 if tid.startswith("c5-key-classes~") else b.growth  # 8N, 16N
        assert lin(h, N, n) != lin(h % (N * mult), N, n)
    elif tid == "c5-key-classes-nmax~false":
        nmax = cex["nmax"]
        assert n <= nmax <= b.growth * N
        assert lin(h, N, n) != lin(h % K(N, nmax), N, n)
    elif tid == "c4-modulo-expand":
        p, q = modulo_partition(h, n), modulo_partition(h, n + 1)
        assert q != p and q != n
    elif tid == "c4-modulo-shrink":
        h1, h2 = cex["hashes"]
        assert modulo_partition(h1, n) == modulo_partition(h2, n) >= m
        assert modulo_partition(h1, m) != modulo_partition(h2, m)
    elif tid == "c5-modulo-key-classes":
        assert modulo_partition(h, n) != modulo_partition(h % (N * 2 * b.growth), n)
    else:
        raise AssertionError(f"no re-check written for {tid}")


def test_every_twin_and_refutation_has_a_recheck():
    ids = [t.id for t in proofs.TWINS] + [t.id for t in proofs.THEOREMS
                                          if t.expected == proofs.REFUTED]
    src = open(__file__).read()
    assert all(f'"{i}"' in src for i in ids)
    assert {t.id.split("~")[0] for t in proofs.TWINS} == {
        t.id for t in proofs.THEOREMS if t.expected == proofs.PROVED}


# --- the command ------------------------------------------------------------------------------

def _args(argv):
    import argparse
    p = argparse.ArgumentParser()
    prove.add_arguments(p)
    return p.parse_args(argv)


def test_json_output_shape(capsys):
    rc = prove.run(_args(["--json", "--only", "c4-modulo-expand", "--only", "c1-expand",
                          "--quick"]))
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["ok"] is True and out["quick"] is True
    assert isinstance(out["elapsed_s"], float)
    # c1 relies on c0, so c0 runs too, first
    assert [t["id"] for t in out["theorems"]] == ["c0-split-pointer", "c1-expand",
                                                  "c4-modulo-expand"]
    for t in out["theorems"]:
        assert {"id", "statement", "expected", "verdict", "counterexample",
                "solver_s"} <= set(t)
        assert t["verdict"] == t["expected"]
    cex = out["theorems"][2]["counterexample"]
    assert modulo_partition(cex["hash"], cex["n"]) == cex["before"]


def test_human_output_shows_verdicts_and_the_key_hash(capsys):
    rc = prove.run(_args(["--only", "c4-modulo-shrink", "--twins"]))
    text = capsys.readouterr().out
    assert rc == 0
    assert "[ok] c4-modulo-shrink: refuted in" in text and "key hashes [" in text
    assert "(0x" in text and "verdicts as expected" in text


def test_twins_flag_adds_the_twins(capsys):
    rc = prove.run(_args(["--json", "--quick", "--only", "c2-delete", "--twins"]))
    ids = [t["id"] for t in json.loads(capsys.readouterr().out)["theorems"]]
    # twins of the chosen theorems only, not of the ones they rely on
    assert rc == 0 and ids == ["c0-split-pointer", "c2-delete", "c2-delete~false"]


def test_unknown_id_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown theorem 'c9'"):
        prove.run(_args(["--only", "c9"]))


def test_cli_dispatches_prove(capsys):
    from kmc.cli import main
    assert main(["prove", "--only", "c4-modulo-expand", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["theorems"][0]["verdict"] == "refuted"
    assert main(["prove", "--only", "nope"]) == 2


@pytest.mark.slow
def test_full_prove_run_meets_every_expected_verdict(capsys):
    rc = prove.run(_args(["--json"]))
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["ok"] and out["quick"] is False
    assert len(out["theorems"]) == len(proofs.THEOREMS)


def test_an_unmet_expectation_exits_1(capsys, monkeypatch):
    import dataclasses
    wrong = dataclasses.replace(proofs.BY_ID["c4-modulo-expand"], expected=proofs.PROVED)
    monkeypatch.setitem(proofs.BY_ID, wrong.id, wrong)
    assert prove.run(_args(["--only", wrong.id])) == 1
    assert "[FAIL] c4-modulo-expand: refuted" in capsys.readouterr().out


def test_a_twin_runs_after_what_its_theorem_relies_on_and_a_missing_twin_is_named(capsys):
    from kmc.cli import main

    assert [t.id for t in proofs.selection(["c1-expand~false"])] == \
        [t.id for t in proofs.selection(["c1-expand"])][:-1] + ["c1-expand~false"]
    assert "c0-split-pointer" in [t.id for t in proofs.selection(["c1-expand~false"])]
    assert main(["prove", "--quick", "--only", "c3-log-bound~false"]) == 2
    assert "c3-log-bound has no false twin: those with one are c0-split-pointer~false" in \
        capsys.readouterr().err


def test_a_false_twin_shows_its_mistake_beside_the_formula():
    from kmc.invariants.proofs import BY_ID, TWINS

    for twin in TWINS:
        real = BY_ID[twin.id.removesuffix("~false")]
        assert twin.formula != real.formula and twin.formula.startswith(real.formula)
