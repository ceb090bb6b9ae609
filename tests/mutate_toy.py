"""A toy model for the mutation tests: small enough that every mutant's outcome is known.

Its mutants cover every outcome: ``x < limit`` -> ``x <= limit`` violates Bounded; dropping
``out.append("mark")`` loses the Marked witness; dropping ``out = []`` crashes; ``x > 1`` ->
``x > 2`` only changes the state count; the ``x > 100`` guard never fires, so its mutants
change nothing (equivalent) and the line under it never runs. The ``raise`` of a
negative limit carries ``# pragma: no mutate``: it has no mutant.
"""
import os

STEM = "mutate_toy_model"

SOURCE = '''from typing import NamedTuple

from kmc import Model, always, sometimes


class S(NamedTuple):
    x: int
    y: int


class Toy(Model):
    """A counter that may be marked once it passes 1."""
    name = "toy"

    def __init__(self, limit=3):
        if limit < 0:
            raise ValueError(f"need limit >= {0}")  # pragma: no mutate
        self.limit = limit

    def init_states(self):
        return [S(0, 0)]

    def actions(self, s):
        out = []
        if s.x < self.limit:
            out.append("inc")
        if s.y == 0 and s.x > 1:
            out.append("mark")
        if s.x > 100:
            out.append("never")
        return out

    def next_state(self, s, a):
        if a == "inc":
            return s._replace(x=s.x + 1)
        if a == "mark":
            return s._replace(y=1)
        return None

    def format_state(self, s):
        return f"x={s.x} y={s.y}" if s.x >= 0 else "?"

    def properties(self):
        return [always("Bounded", lambda s: s.x <= self.limit),
                sometimes("Marked", lambda s: s.y == 1)]


def make(limit: int = 3):
    """The toy counter."""
    return Toy(limit)
'''

_written: dict = {}


def toy_file(tmp_path_factory) -> str:
    """The toy model's file, written once per test run (its module name must stay
    unique in the process that imports it)."""
    if "path" not in _written:
        folder = tmp_path_factory.mktemp("mutate-toy")
        path = os.path.join(folder, f"{STEM}.py")
        with open(path, "w") as f:
            f.write(SOURCE)
        _written["path"] = path
    return _written["path"]


def both_ways(tmp_path_factory, stem: str, source: str,
              neighbours=None) -> tuple[dict, dict]:
    """The mutants of the model ``source`` (``make()`` in the file ``stem``.py), run on
    it with replay and without: two dicts, mutant id (its file's own name and on) ->
    the report's row. ``neighbours``: module name -> source of modules written beside
    it (the model may import them; they are not mutated)."""
    from kmc.mutate.runner import make_plan, mutate
    from kmc.reports.regress.suite import Entry

    path = tmp_path_factory.mktemp(stem) / f"{stem}.py"
    path.write_text(source)
    for name, text in (neighbours or {}).items():
        (path.parent / f"{name}.py").write_text(text)
    plan = make_plan([Entry(id=stem, scenario=f"{path}:make")])

    def run(replay):
        return {r["id"].split("/")[-1]: r for r in mutate(plan, jobs=2,
                                                          replay=replay)["mutants"]}
    return run(True), run(False)


def line_of(text: str, source: str = SOURCE) -> int:
    """The line number of the toy's (or ``source``'s) line containing ``text``."""
    hits = [n for n, line in enumerate(source.splitlines(), 1) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


#: the operators whose mutants a probe may watch (``probes``), and a dropped ``if``
WATCHED = ("cmp", "const", "bool", "drop-and", "drop-or", "and-or", "drop-field")


def watched(row) -> bool:
    """Whether a probe may watch the mutant of the report's ``row``."""
    return row["operator"] in WATCHED or \
        row["operator"] == "drop-stmt" and row["description"].startswith("drop `if ")


def outcome(row) -> tuple:
    """What a report's row says of its mutant: outcome, killer and evidence."""
    return row["outcome"], row["killed_by"], row["evidence"]


def model_file(tmp_path_factory, stem: str, text: str) -> str:
    """``text`` written as module ``stem`` (a name unique in the test process)."""
    path = tmp_path_factory.mktemp(stem) / f"{stem}.py"
    path.write_text(text)
    return str(path)


def lines_of(text: str, source: str) -> list:
    """The numbers of ``source``'s lines that are ``text`` (stripped)."""
    return [n for n, line in enumerate(source.splitlines(), 1) if line.strip() == text]


def load(path: str, name: str = "mutate_replay_toy"):
    """``path`` loaded as module ``name``, outside ``sys.modules``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def record_graph(model, listed=None, per=None):
    """The whole state graph of ``model`` as a baseline records it (``graph.Graph``; no
    tracer: every state counts as touching every function). With ``listed(s)`` and
    ``per(s, a)``, the functions ``actions(s)`` and ``next_state(s, a)`` called: each
    expansion is also recorded step by step, having called all of them."""
    from kmc.mutate.graph import Graph

    g = Graph()

    def record(s):
        out = model.successors(s)
        if listed is None:
            g.add(s, out)
            return out
        acts = model.actions(s)
        steps = [per(s, a) for a in acts]
        g.add(s, out, set(listed(s)).union(*steps), (listed(s), acts, steps))
        return out
    reach(record, model.init_states())
    return g.frozen()


def reach(successors, init) -> dict:
    """Every state reachable from ``init`` -> what ``successors`` gave it."""
    got, todo = {}, list(init)
    while todo:
        s = todo.pop()
        if s in got:
            continue
        got[s] = successors(s)
        todo.extend(t for _a, t in got[s])
    return got
