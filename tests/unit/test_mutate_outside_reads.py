"""A set-up mutant that changes an attribute the framework also names (``has_symmetry``)
is judged by what the baseline's run read outside the model's code: the explorer reads
``has_symmetry`` only in a run that asks for symmetry."""
import importlib.util
import os
import sys

import pytest

from kmc.api import check
from kmc.mutate import setup_reads as sr
from kmc.mutate.outside_reads import MODEL, Watch
from mutate_toy import both_ways

#: ``SYMMETRIC`` is read by the set-up only; the explorer reads the attribute it sets
#: only when a run asks for symmetry
WATCHED = '''from kmc import Model, always

SYMMETRIC = False


class Counter(Model):
    name = "counter-watched"

    def __init__(self):
        self.has_symmetry = SYMMETRIC
        self.limit = 4

    def init_states(self):
        return [(0,)]

    def actions(self, s):
        return ["inc"] if s[0] < self.limit else []

    def next_state(self, s, a):
        return (s[0] + 1,)

    def representative(self, s):
        return s

    def properties(self):
        return [always("Small", lambda s: s[0] <= 4)]


def make():
    return Counter()
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    path = tmp_path_factory.mktemp("watched") / "mutate_watched_model.py"
    path.write_text(WATCHED)
    spec = importlib.util.spec_from_file_location("mutate_watched_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules[spec.name] = mod  # the readers are looked for among loaded modules
    yield os.path.realpath(path), mod
    del sys.modules[spec.name]


def test_a_watch_notes_only_what_code_outside_the_traced_files_reads(toy):
    path, mod = toy
    m = mod.make()
    w = Watch(m, frozenset({path}))
    assert m.actions((0,)) == ["inc"]  # the model's own code reads ``limit``
    assert w.read() == ([], ["has_symmetry", "limit"])
    m.limit = 2  # written through the watch, read here: outside the model's code
    assert m.limit == 2 and m.actions((2,)) == []
    assert w.read() == (["limit"], ["has_symmetry", "limit"])
    assert isinstance(m, mod.Counter) and type(m).__name__ == "Counter"
    w.close()
    assert type(m) is mod.Counter


def test_the_explorer_reads_has_symmetry_only_in_a_run_that_asks_for_it(toy):
    path, mod = toy
    for symmetry, read in ((False, []), (True, ["has_symmetry"])):
        m = mod.make()
        w = Watch(m, frozenset({path}))
        assert check(m, symmetry=symmetry).unique_states == 5
        assert w.read()[0] == read


def test_a_watch_hands_each_read_outside_to_a_note(toy):
    path, mod = toy
    m, noted = mod.make(), []
    w = Watch(m, frozenset({path}), noted.append)
    m.actions((0,))
    assert m.limit == 4 and noted == ["limit"] and w.read() == ([], ["has_symmetry",
                                                                      "limit"])


def test_an_object_without_its_own_attributes_is_not_watched():
    class Slotted:
        __slots__ = ("x",)

    s = Slotted()
    s.x = 1
    assert Watch(s, frozenset()).read() is None


def test_readers_judge_a_watched_name_by_the_run(toy):
    path, mod = toy
    diff = sr.Differences([("has_symmetry",)], {})
    files = {path: "mutate_watched_model.py"}
    assert sr.readers(diff, files, [mod]) is None  # the explorers name it
    found = sr.readers(diff, files, [mod], (frozenset(), frozenset({"has_symmetry"})))
    init = mod.Counter.__init__.__code__.co_firstlineno
    # the set-up's own code, and any code outside where the run read it
    assert found == {("mutate_watched_model.py", init), (MODEL, "has_symmetry")}
    read = (frozenset({"has_symmetry"}), frozenset({"has_symmetry"}))
    assert sr.readers(diff, files, [mod], read) is None
    # a name the run did not watch is still judged by its name
    assert sr.readers(diff, files, [mod], (frozenset(), frozenset())) is None


def test_a_set_up_mutant_of_an_attribute_no_run_reads_is_replayed(tmp_path_factory):
    fast, full = both_ways(tmp_path_factory, "mutate_watch_model", WATCHED)
    key = lambda r: (r["outcome"], r["killed_by"], r["evidence"])  # noqa: E731
    assert {k: key(r) for k, r in fast.items()} == {k: key(r) for k, r in full.items()}
    line = WATCHED.splitlines().index("SYMMETRIC = False") + 1
    (flip,) = [r for r in fast.values() if r["line"] == line]
    assert flip["outcome"] == "equivalent" and flip["replayed"] == 1


#: ``LIMIT`` reaches the successors only through a helper module the tracer does not
#: follow (a neighbour of the model's file), which reads the model's ``limit``
CAPPED = '''from kmc import Model, always
import mutate_capped_helper as helper

LIMIT = 4


class Capped(Model):
    name = "capped-watched"

    def __init__(self):
        self.limit = LIMIT

    def init_states(self):
        return [(0,)]

    def actions(self, s):
        return ["inc"] if s[0] < helper.cap(self) else []

    def next_state(self, s, a):
        return (s[0] + 1,)

    def properties(self):
        return [always("Small", lambda s: s[0] <= 4)]


def make():
    return Capped()
'''

HELPER = '''def cap(m):
    return min(m.limit, 4)
'''


def test_an_attribute_read_outside_the_traced_code_asks_those_expansions_again(
        tmp_path_factory):
    """``LIMIT`` 4 -> 5 changes no cap: the expansions that read it (through the
    helper) answer alike, and the run is replayed; 4 -> 3 stops one step earlier."""
    fast, full = both_ways(tmp_path_factory, "mutate_capped_model", CAPPED,
                           {"mutate_capped_helper": HELPER})
    key = lambda r: (r["outcome"], r["killed_by"], r["evidence"])  # noqa: E731
    assert {k: key(r) for k, r in fast.items()} == {k: key(r) for k, r in full.items()}
    line = CAPPED.splitlines().index("LIMIT = 4") + 1
    up, down = (fast[f"mutate_capped_model.py:{line}:8:const:{n}"] for n in (0, 1))
    assert up["outcome"] == "equivalent" and up["replayed"] == 1
    assert down["outcome"] == "count_only" and not down["replayed"]
