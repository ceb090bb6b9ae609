"""A set-up mutant whose model differs from the baseline's in one field of a record it
holds (a variant's flag) is decided by replaying the expansions that read the field;
a field a property reads sends the run to a full exploration. Every outcome equals the
outcome of exploring every run."""
from typing import NamedTuple

import pytest

from kmc.mutate import setup_reads as sr
from kmc.mutate import snapshot as sn
from mutate_toy import both_ways

#: ``padding`` is read by nothing, ``fast`` by the jump step only (and its guard never
#: holds), ``counting`` by the tick step, ``strict`` by a property, ``bonus`` by a cached
#: function the tick step calls
FLAGS = '''import functools
from typing import NamedTuple

from kmc import Model, always


class Flags(NamedTuple):
    fast: bool
    counting: bool
    padding: bool
    strict: bool
    bonus: bool


FLAGS = Flags(fast=False, counting=True, padding=False, strict=False, bonus=False)


def jump_size(fast, at):
    return 2 if fast and at > 9 else 1


@functools.lru_cache(maxsize=None)
def bonus_of(m):
    return 1 if m.flags.bonus else 0


class Ticker(Model):
    name = "ticker-flags"

    def __init__(self, flags):
        self.flags = flags

    def init_states(self):
        return [(0, 0)]

    def actions(self, s):
        return ["tick", "jump"] if s[0] < 4 else []

    def next_state(self, s, a):
        if a == "jump":
            return (s[0] + jump_size(self.flags.fast, s[0]), s[1])
        f = self.flags
        return (s[0] + 1, s[1] + (1 if f.counting else 0) + bonus_of(self))

    def action_name(self, a):
        return a

    def properties(self):
        return [always("Counted", lambda s: s[1] <= s[0]),
                always("Strict", lambda s, m=self: not m.flags.strict or s[0] <= 5)]


def make():
    return Ticker(FLAGS)
'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return both_ways(tmp_path_factory, "mutate_flags_model", FLAGS)


def _flag(rows, field):
    """The row of the mutant that flips ``field``'s value in the ``FLAGS = ...`` line."""
    lines = FLAGS.splitlines()
    (n,) = [i for i, text in enumerate(lines) if text.startswith("FLAGS = ")]
    column = lines[n].index(field + "=") + len(field) + 1
    (row,) = [r for r in rows.values() if r["line"] == n + 1 and r["column"] == column]
    return row


def test_every_mutant_gets_the_outcome_of_a_full_run(runs):
    fast, full = runs
    key = lambda r: (r["outcome"], r["killed_by"], r["evidence"])  # noqa: E731
    assert {k: key(r) for k, r in fast.items()} == {k: key(r) for k, r in full.items()}
    assert not any(r["replayed"] for r in full.values())


def test_a_flag_nothing_reads_or_whose_readers_answer_alike_is_replayed(runs):
    fast, _full = runs
    for field in ("padding", "fast"):
        r = _flag(fast, field)
        assert r["outcome"] == "equivalent" and r["replayed"] == 1, field


def test_a_flag_the_successors_read_differently_is_explored(runs):
    fast, _full = runs
    r = _flag(fast, "counting")
    assert r["outcome"] != "equivalent" and not r["replayed"]


def test_a_flag_a_property_or_a_cached_function_reads_is_explored(runs):
    fast, _full = runs
    assert not _flag(fast, "strict")["replayed"]
    # read inside the cached function's own code (not its wrapper's): the tick step
    # now counts twice, which the property sees
    bonus = _flag(fast, "bonus")
    assert bonus["outcome"] == "property" and not bonus["replayed"]


class _Flags(NamedTuple):
    a: int
    b: int


class _Holder:
    def __init__(self, flags, table):
        self.flags, self.table = flags, table


def _image(holder):
    return (sn.value(holder, code=False), (), ((), (), None), {}, {})


def test_differences_name_the_fields_that_differ():
    base = _image(_Holder(_Flags(1, 2), (1, 2)))
    diff = sr.differences(_image(_Holder(_Flags(1, 3), (1, 2))), base)
    assert diff.paths == [("flags", "b")] and diff.fields == {"flags": {"a", "b"}}
    # a plain tuple has no names inside: the attribute holding it is the path
    assert sr.differences(_image(_Holder(_Flags(1, 2), (1, 5))), base).paths == [("table",)]
    # the initial states differ: not a difference in what some code reads
    other = _image(_Holder(_Flags(1, 3), (1, 2)))
    other = (other[0], ((0,),)) + other[2:]
    assert sr.differences(other, base) is None


def _field_only(m):
    return m.flags.a


def _through_local(m):
    f = m.flags
    return f.a + f.a


def _passed_on(m):
    return sum(m.flags)


def _local_passed_on(m):
    f = m.flags
    return f.a + len(f)


def _method_kept(m):
    count = m.flags.count  # a method: called later, it reads every field
    return count(1)


def _none_tested(m):
    f = m.flags
    return 0 if f is None else f.a


def _none_compared(m):
    f = m.flags
    return f is not None and f.a


def _leaf(x):
    return x.b


def _by_name(m):
    return getattr(m.flags, "b")


@pytest.mark.parametrize("fn, reads", [
    (_field_only, False), (_through_local, False), (_passed_on, True),
    (_local_passed_on, True), (_method_kept, True), (_leaf, True), (_by_name, True),
    (_none_tested, False), (_none_compared, False)])
def test_a_container_that_escapes_reaches_every_field(fn, reads):
    """Reading ``flags.b`` (path ``("flags", "b")``): reading ``.b`` of anything, or
    letting ``flags`` go anywhere but to a read of one of its data fields at once, can
    read it; testing whether it is None reads no field."""
    containers = {"flags": frozenset({"a", "b"})}
    assert sr._reads(fn.__code__, frozenset({"b"}), containers) is reads


def test_a_name_the_framework_reads_is_not_decided():
    """The explorers read ``has_symmetry`` of a model: a difference there is not one
    this can follow (None), where the model's own ``flags`` are read only by its code."""
    import sys

    import kmc.explorers.core  # noqa: F401

    names = sr.framework_names([sys.modules[__name__]])
    assert "has_symmetry" in names and "partition_fields" in names
    assert "fetch_topic_id" not in names
