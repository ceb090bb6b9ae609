"""The baseline's record of what ran, from hooks compiled into the served modules: the
lines of a mutated file that ran, and each function's calls by kind (set-up, inside one
expansion, outside), as a trace function would see them."""
import ast
import os
import textwrap

from kmc.mutate.tracer import Tracer

SOURCE = textwrap.dedent('''\
    """A toy module."""
    from __future__ import annotations

    import functools

    LIMIT = 3


    def step(x, bump=1):
        """Docstring kept."""
        ys = [y * 2 for y in
              range(x)]
        if x > LIMIT:
            return -1
        twice = lambda v: v * 2
        return twice(x) + bump + sum(ys)


    @functools.lru_cache(maxsize=None)
    def cached(x):
        return step(x)


    def numbers(n):
        for i in range(n):
            yield i


    class Box:
        """A box."""
        size = 2

        def grow(self, k):
            return self.size + k
''')


def _instrumented(tmp_path, lines=True):
    path = str(tmp_path / "toy.py")
    with open(path, "w") as f:
        f.write(SOURCE)
    tracer = Tracer([path] if lines else [], [path])
    tree = tracer.transform(ast.parse(SOURCE), path, SOURCE)
    code, names = compile(tree, path, "exec"), tracer.names(path)

    def load():
        ns = {"__name__": "toy", **names}
        exec(code, ns)
        return ns
    return tracer, load, path


def _line(text: str) -> int:
    return next(i for i, s in enumerate(SOURCE.splitlines(), 1) if text in s)


def test_the_instrumented_module_behaves_as_written(tmp_path):
    tracer, load, _path = _instrumented(tmp_path)
    with tracer:
        ns = load()
    assert ns["step"](2) == 4 + 1 + 2 and ns["step"](5) == -1
    assert ns["step"].__doc__ == "Docstring kept." and ns["Box"].__doc__ == "A box."
    assert list(ns["numbers"](3)) == [0, 1, 2] and ns["Box"]().grow(1) == 3
    assert ns["__doc__"] == "A toy module."


def test_lines_are_the_statements_that_ran_while_it_was_open(tmp_path):
    tracer, load, path = _instrumented(tmp_path)
    with tracer:
        ns = load()
        ns["step"](2)
    ran = tracer.lines[path]
    assert {_line("ys = ["), _line("if x > LIMIT"), _line("twice = lambda"),
            _line("return twice")} <= ran
    assert _line("return -1") not in ran  # the branch not taken
    # def and decorator lines ran at import: a default argument or a decorator's
    # argument is executed there
    assert {_line("def step"), _line("@functools"), _line("def grow")} <= ran
    assert _line("return self.size") not in ran
    ns["step"](5)  # closed: not recorded
    assert _line("return -1") not in tracer.lines[path]


def test_calls_are_told_apart_by_kind(tmp_path):
    tracer, load, path = _instrumented(tmp_path, lines=False)
    step, comp, lam = _line("def step"), _line("ys = ["), _line("twice = lambda")
    with tracer:
        ns = load()
        with tracer.phase(True):
            ns["step"](1)
        tracer.inside, tracer.called = True, set()
        ns["step"](2)
        inside = tracer.called
        tracer.inside, tracer.called = False, None
        ns["Box"]().grow(1)
    assert tracer.lines == {}
    assert {step, comp, lam} <= tracer.at_setup[path]
    assert inside == {(path, step), (path, comp), (path, lam)}
    assert _line("def grow") in tracer.outside[path]
    # the module's code and the class body ran at import, outside
    assert {1, _line("class Box")} <= tracer.outside[path]


def test_a_call_from_inside_a_cache_counts_outside(tmp_path):
    """A cache may hand its result out later, where the function's lines do not run:
    what it calls counts as outside even while an expansion is computed."""
    tracer, load, path = _instrumented(tmp_path, lines=False)
    with tracer:
        ns = load()
        tracer.inside, tracer.called = True, set()
        ns["cached"](2)
        assert tracer.called == set()
        assert {_line("@functools"), _line("def step")} <= tracer.outside[path]
        ns["step"](3)  # the cache's depth went back to zero when its body returned
        assert (path, _line("def step")) in tracer.called


def test_a_generator_resumed_in_another_phase_counts_there_too(tmp_path):
    tracer, load, path = _instrumented(tmp_path, lines=False)
    gen = _line("def numbers")
    with tracer:
        ns = load()
        with tracer.phase(True):
            it = ns["numbers"](3)
            next(it)
        tracer.inside, tracer.called = True, set()
        next(it)
        assert tracer.called == {(path, gen)}
    assert gen in tracer.at_setup[path]


def test_a_file_it_does_not_follow_is_left_as_it_is(tmp_path):
    tracer = Tracer([], [])
    tree = ast.parse(SOURCE)
    before = ast.dump(tree)
    other = os.path.join(str(tmp_path), "other.py")
    out, names = tracer.transform(tree, other, SOURCE), tracer.names(other)
    assert names == {} and ast.dump(out) == before


def test_code_compiled_before_the_fork_is_executed_with_each_workers_hooks(
        tmp_path, monkeypatch):
    """``isolation.warm`` compiles the served modules, with the baseline's hooks, in the
    process that forks the workers; a worker's own tracer (configured alike) then
    executes that code without compiling, and its hooks report to that tracer."""
    import builtins
    import importlib
    import sys

    from kmc.mutate import isolation

    path = str(tmp_path / "kmc_warm_toy.py")
    with open(path, "w") as f:
        f.write(SOURCE)
    served = {"kmc_warm_toy": (path, SOURCE)}
    isolation.warm(served, None, Tracer([path], [path]))
    compiled = []
    real = builtins.compile
    monkeypatch.setattr(builtins, "compile",
                        lambda *a, **k: compiled.append(a[1]) or real(*a, **k))
    worker = Tracer([path], [path])
    finder = isolation.install_unmutated(served, None, worker)
    try:
        with worker:
            mod = importlib.import_module("kmc_warm_toy")
            assert mod.step(2) == 7
        assert _line("return twice") in worker.lines[path] and compiled == []
    finally:
        sys.meta_path.remove(finder)
        sys.modules.pop("kmc_warm_toy", None)


def test_the_process_that_forks_the_workers_imports_what_a_liveness_check_imports():
    """A liveness check imports scipy's components on its first run; ``kmc mutate``
    imports them before it forks, so no worker imports them again. Without scipy (an
    optional speed-up) nothing is imported and the checks use their own components."""
    import importlib.util
    import subprocess
    import sys

    code = ("import sys\n"
            "from kmc.mutate.runner import _warm\n"
            "import kmc.explorers.liveness as liveness\n"
            "before = 'scipy.sparse.csgraph' in sys.modules\n"
            "_warm()\n"
            "print(before, 'scipy.sparse.csgraph' in sys.modules, liveness.preload())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    has_scipy = importlib.util.find_spec("scipy") is not None
    assert out == ["False", str(has_scipy), str(has_scipy)]


def test_preload_answers_false_when_the_checks_do_not_use_scipy(monkeypatch):
    import kmc.explorers.liveness as liveness
    monkeypatch.setattr(liveness, "USE_SCIPY", False)
    assert liveness.preload() is False


def _child_edits(conn, m, source, cached):
    from kmc.mutate import isolation
    tree = isolation.mutated_tree(m, source)
    conn.send((tree is cached, (m.path, source) in isolation._TREES, ast.unparse(tree)))


def test_a_forked_worker_edits_the_tree_warm_parsed_and_the_parent_keeps_it_intact(
        tmp_path):
    """``warm`` parses a mutated file once, with its sites, in the process that forks
    the workers; a worker applies its mutant to its own copy of that tree, and the same
    mutant, applied in the parent, parses afresh and gives the same code."""
    import multiprocessing

    from kmc.mutate import isolation

    path = str(tmp_path / "kmc_tree_toy.py")
    with open(path, "w") as f:
        f.write(SOURCE)
    isolation.warm({"kmc_tree_toy": (path, SOURCE)}, mutated={path})
    try:
        cached, _sites = isolation._TREES[(path, SOURCE)]
        pristine = ast.unparse(cached)
        m = next(m for m in isolation.mutants_of(path, "toy.py", "kmc_tree_toy", SOURCE)
                 if m.operator == "cmp")
        here = isolation.mutated_tree(m, SOURCE)
        assert here is not cached and ast.unparse(here) != pristine
        ours, theirs = multiprocessing.get_context("fork").Pipe()
        p = multiprocessing.get_context("fork").Process(
            target=_child_edits, args=(theirs, m, SOURCE, cached))
        p.start()
        used, kept, code = ours.recv()
        p.join(10)
        assert (used, kept, code) == (True, False, ast.unparse(here))
        assert ast.unparse(cached) == pristine  # the parent's tree, never edited
    finally:
        isolation._TREES.pop((path, SOURCE), None)
