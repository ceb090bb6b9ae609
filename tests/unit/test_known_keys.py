"""``Model.known_keys``: a BFS takes the key of a successor object the model names from
there, and finds the same states, verdicts and traces as when it computes every key."""
from __future__ import annotations

from typing import NamedTuple

from kmc import Model, always, quiescent, sometimes
from kmc.explorers.bfs import bfs
from kmc.model.encoding import fingerprint128


class P(NamedTuple):
    x: int
    y: int
    __repr__ = tuple.__repr__


class Grid(Model):
    """Steps right or up on a 5 x 5 grid. ``objects``: one object per state, handed out
    as the successors (a successor function that reuses states it made before)."""
    name = "grid"

    def __init__(self, known: bool = False):
        self.objects = {P(x, y): P(x, y) for x in range(5) for y in range(5)}
        if known:
            self.known_keys = {id(s): fingerprint128(s) for s in self.objects.values()}

    def init_states(self):
        return [P(0, 0)]

    def actions(self, s):
        return [a for a in ("right", "up") if (s.x, s.y)[a == "up"] < 4]

    def next_state(self, s, a):
        t = s._replace(x=s.x + 1) if a == "right" else s._replace(y=s.y + 1)
        return self.objects[t]

    def is_fault(self, a):
        return a == "up"

    def properties(self):
        return [always("BelowDiagonalSum", lambda s: s.x + s.y < 7),
                sometimes("Corner", lambda s: s == (4, 0)),
                quiescent("SettledLow", lambda s: s.y < 3)]


def _run(model):
    r = bfs(model, states_digest=True)
    traces = {p: (d.trace.states, d.trace.actions) for p, d in r.discoveries.items()}
    return (r.unique_states, r.generated_states, r.max_depth, r.extra["states_digest"],
            {p: r.verdict(p) for p in r.properties}, traces)


def test_known_keys_give_the_computed_run():
    plain, known = _run(Grid()), _run(Grid(known=True))
    assert plain == known
    assert plain[0] == 25 and set(plain[5]) == {"BelowDiagonalSum", "Corner", "SettledLow"}


def test_the_keys_are_taken_from_the_model():
    """Two states under one known key are one state to the BFS: the key was not
    computed."""
    g = Grid(known=True)
    a, b = g.objects[P(4, 4)], g.objects[P(3, 4)]
    g.known_keys[id(a)] = g.known_keys[id(b)]
    assert _run(g)[0] == 24
