"""KIP-253 partitioners on plain Python ints: what the producers of the explicit model
call. ``invariants.hashing`` writes the same functions as z3 bit-vector terms for `kmc
prove`; tests/unit/test_proofs.py checks that the two agree on random hashes.

KIP-253, section "5) Changes in how producer constructs ProduceRequest":

    "Producer should determine the partition for both keyed and unkeyed message using Linear
    Hashing (see https://en.wikipedia.org/wiki/Linear_hashing), where N =
    initial_partition_count, L is the largest integer that satisfies N*2^L <=
    undeleted_partition_count, and S can similariy [sic] be derived using N, L and
    undeleted_partition_count."

With n = undeleted_partition_count the split pointer is S = n - N*2^L (partitions below S have
already been split at level L). Wikipedia's linear hashing then reads

    a = h mod N*2^L;  partition = a            if a >= S
                      partition = h mod N*2^(L+1)  if a <  S

and the form this project uses (linear_partition) is

    b = h mod N*2^(L+1);  partition = b if b < n else h mod N*2^L.

They are the same function; theorem c0-split-pointer proves it for every 32-bit hash, and
tests/unit/test_proofs.py checks Wikipedia's form (``kip_partition`` there) against
linear_partition on random hashes.
"""
from __future__ import annotations


def _check(h: int, N: int, n: int) -> None:
    if N < 1 or n < N or h < 0:
        raise ValueError(  # pragma: no mutate
            f"need h >= 0 and 1 <= N <= n, got h={h}, N={N}, n={n}")


def level(N: int, n: int) -> int:
    """L: the largest integer with N*2^L <= n (KIP-253 section 5)."""
    if N < 1 or n < N:
        raise ValueError(  # pragma: no mutate
            f"need 1 <= N <= n, got N={N}, n={n}")
    return (n // N).bit_length() - 1  # N*2^L <= n  <=>  2^L <= n // N


def linear_partition(h: int, N: int, n: int) -> int:
    """Partition of key hash h under linear hashing with initial count N and current count n."""
    _check(h, N, n)
    base = N << level(N, n)
    b = h % (2 * base)
    return b if b < n else h % base


def modulo_partition(h: int, n: int) -> int:
    """Kafka's default partitioner for a key hash: h mod n."""
    if n < 1 or h < 0:
        raise ValueError(  # pragma: no mutate
            f"need h >= 0 and n >= 1, got h={h}, n={n}")
    return h % n
