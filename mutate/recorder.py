"""What a run's model is wrapped with while a worker runs it: the digest of the states the
run reached and, for the baseline, what the tracer and the replay need.

Each run records a digest of the states it reached, so that two complete runs with the
same digest reached the same set of states, and a mutant with the baseline's digest on
every run is probably equivalent. A BFS run gives it itself, from its keys of the states
it found (``bfs(states_digest=True)``: no cost per state). Any other run's digest is a
hash of the sorted hashes of every initial state and every state the explorer expanded
(asked the successors of); a complete run expands every state it reaches. A state's
hash there is that of its printed form (``encoding.fingerprint``), never Python's own
hash of the state: Python hashes ``-1`` and ``-2`` alike (``hash(-1) == hash(-2)``), so
a mutant that turned a ``-1`` into a ``-2`` inside the states would look equivalent.
Compiled (packed) models generate successors in code the recorder does not see: their
runs have no digest and their mutants are never called equivalent.
"""
from __future__ import annotations

import hashlib
import sys
import time

import numpy as np

from kmc.model.trace import Trace

#: a run whose first TRIES expansions all called every step's code in ``actions`` (its
#: model computes the steps to tell which actions are enabled) records no expansion
#: step by step: none could spare a step (``by_step``)
TRIES = 100

#: the code that rebuilds a counterexample from its states' keys, asking ``actions``
#: only to take the first action that leads to the next state (``replay.same_graph``):
#: ``Trace.follow_keys``, which ``Trace.from_keys`` and a lasso's closing call
REBUILD = Trace.follow_keys.__code__


class Recorder:
    """Wraps a model's ``init_states`` and ``successors`` to collect the hashes of
    the initial states and of the states whose successors are asked for (with
    ``hashes``: not for a run whose explorer gives its own digest); with a
    ``tracer`` (``tracer.Tracer``), tells it when the model computes successors and
    when the explorer asks for what the set-up built (initial states, action names),
    and adds to the functions each expansion called the mutants its probes saw infected
    (``probes.SINK``); with a ``graph`` (``graph.Graph``), records every expansion."""

    def __init__(self, model, tracer=None, graph=None, watch=None, hashes=True):
        from kmc.model.encoding import fingerprint
        from kmc.mutate.probes import SINK as sink

        self.seen: set = set()
        self.successor_calls = 0
        self.hashes = hashes
        #: the longest one expansion took (seconds; timed with a ``tracer`` only)
        self.slowest = 0.0
        init, succ, seen = model.init_states, model.successors, self.seen

        def init_states():  # set-up: what it gives is part of the set-up image
            out = list(setup(init))
            if hashes:
                seen.update(map(fingerprint, out))
            return out

        def setup(fn, *args):
            if tracer is None:
                return fn(*args)
            with tracer.phase(True):
                return fn(*args)

        if tracer is not None:
            names = model.action_names
            model.action_names = lambda: setup(names)

        def inside(fn, *args):
            if tracer is None:
                return fn(*args)
            was, tracer.inside = tracer.inside, True
            try:
                return fn(*args)
            finally:
                tracer.inside = was

        expanding = []  # non-empty while the model computes successors

        def start():  # an expansion or a question begins: what it calls is its own
            if tracer is not None:
                tracer.called = set()
                sink.clear()

        def infected():  # ... and it infected the mutants its probes saw differ
            if tracer is not None and tracer.called is not None:
                tracer.called |= sink  # (None: a nested expansion, every function counts)

        def successors(s):
            self.successor_calls += 1
            if hashes:
                seen.add(fingerprint(s))
            start()
            expanding.append(s)
            if watch is not None:
                watch.begin()
            t0 = time.perf_counter() if tracer is not None else 0.0
            try:
                out = inside(succ, s)
            finally:
                expanding.pop()
                if watch is not None:
                    watch.end()
            if tracer is not None:
                self.slowest = max(self.slowest, time.perf_counter() - t0)
            infected()
            if graph is not None:
                called = tracer and tracer.called
                graph.add(s, out, called, by_step(s, out)
                          if tracer is not None and graph.wants() and
                          (kept[0] or kept[1] < TRIES) else None)
            if tracer is not None:
                tracer.called = None
            return out

        actions_of, next_state_of = model.actions, model.next_state
        kept = [0, 0]  # expansions kept step by step, and tried
        #: while ``actions`` is asked step by step: the steps it computes itself
        #: through ``next_state`` on the state it lists (``probe``), else None
        probing = [None]

        def by_step(s, out):
            """What ``graph.Graph.add`` keeps of ``s``'s expansion step by step: the
            functions ``actions(s)`` called, its actions, and per action the functions
            its ``next_state`` called, and the steps ``actions`` computed itself
            (``probe``); None when they do not give ``out`` (the contract's
            ``successors``, which a model's own may compute another way), or when
            ``actions`` called every function its steps did (a replay would then
            compute them all again). The lines this runs that the run did not are not
            kept."""
            tracer.keep_lines()
            expanding.append(s)  # the model's own questions are part of the steps
            try:
                start()
                probing[0] = probes = []
                try:
                    acts = list(inside(actions_of, s))
                finally:
                    probing[0] = None
                infected()
                listed, per, got = tracer.called, [], []
                for a in acts:
                    start()
                    t = inside(next_state_of, s, a)
                    infected()
                    per.append(tracer.called)
                    if t is not None:
                        got.append((a, t))
            except Exception:  # the run's own answer stands; nothing kept by step
                return None
            finally:
                expanding.pop()
                tracer.drop_lines()
            if len(got) != len(out) or any(a != b or t != u
                                           for (a, t), (b, u) in zip(got, out)):
                return None
            kept[1] += 1
            if listed is None or per and all(p is not None and p <= listed for p in per):
                return None  # ``actions`` runs every step itself: nothing to spare
            kept[0] += 1
            return listed, acts, per, probes

        def probe(fn, s, a):
            """A step ``actions`` computes itself, on the state it lists, to tell
            whether ``a`` is enabled (``next_state(s, a)``, as KIP-253's procedure and
            the KRaft plane do): recorded as its own question, with the functions it
            called, apart from the action list's. A replay asks it again only where
            it called the changed code, and the action list stands when every such
            step gives its recorded next state (``steps.stepwise``)."""
            outer, infections = tracer.called, set(sink)
            probes, probing[0] = probing[0], None  # what the step asks is its own
            start()
            try:
                t = inside(fn, s, a)
                infected()
                probes.append((a, t, tracer.called))
                return t
            finally:
                probing[0] = probes
                tracer.called = outer
                sink.clear()
                sink.update(infections)

        model.init_states, model.successors = init_states, successors
        if graph is not None:  # a counterexample is rebuilt with actions and next_state
            actions, next_state = model.actions, model.next_state

            asking = []  # non-empty while a question is asked: what it asks is its own

            def asked(method, fn, s, *args):
                """A question outside an expansion, recorded with the functions it
                called; successors may ask it too, as part of their expansion, and a
                question (``actions`` asking ``next_state``), as part of itself."""
                if expanding:
                    if probing[0] is not None and method == "next_state" and \
                            s is expanding[-1]:
                        return probe(fn, s, *args)
                    return inside(fn, s, *args)
                if asking:
                    return inside(fn, s, *args)
                asking.append(method)
                start()
                try:
                    out = inside(fn, s, *args)
                    if method in ("actions", "rebuild-actions"):
                        out = list(out)
                    infected()
                    graph.call(method, s, args, out, tracer and tracer.called)
                finally:
                    asking.pop()
                    if tracer is not None:
                        tracer.called = None
                return out

            # the rebuild of a counterexample reads only the steps the actions take;
            # anyone else (a property) reads the answers themselves
            def recorded_actions(s):
                rebuild = sys._getframe(1).f_code is REBUILD
                return asked("rebuild-actions" if rebuild else "actions", actions, s)

            def recorded_next_state(s, a):
                rebuild = sys._getframe(1).f_code is REBUILD
                return asked("rebuild-next" if rebuild else "next_state", next_state, s, a)

            # a property's question (``enabled``) is asked afresh, and recorded
            model.actions, model.next_state = recorded_actions, recorded_next_state
            model.enabled = recorded_actions

    def digest(self) -> str | None:
        if not self.successor_calls:
            return None
        keys = np.sort(np.fromiter(self.seen, dtype=np.uint64, count=len(self.seen)))
        return hashlib.sha256(keys.tobytes()).hexdigest()[:32]
