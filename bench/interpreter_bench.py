"""What another Python interpreter (PyPy) is worth on the Kafka model's successor function.

    python bench/interpreter_bench.py                   # this Python and pypy3, if found
    python bench/interpreter_bench.py --python pypy3.10 --python python3.11

kmc's explorers need numpy, which the other interpreter may not have; the model does not.
So each interpreter runs, on the committed tree (``git archive HEAD``), what the model
alone does: a plain breadth-first search over lifecycle-large kip516 (a set of states, the
model's successor function), then the successor function once more over every state (a
JIT is warm by then). Each run is a fresh process; figures are CPU seconds
(``time.process_time``), with the state and transition counts, which must agree.
Figures, never assertions.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cython_bench import unpack  # noqa: E402  (the committed tree, importable as kmc)

RUN = """
import gc, platform, sys, time
sys.path.insert(0, {path!r})
from kmc.api import build
model = build({scenario!r}, {variant!r}, {{}})
gc.disable()
clock = time.process_time
t = clock()
frontier = list(model.init_states())
seen, states, generated = set(frontier), list(frontier), 0
while frontier:
    nxt = []
    for s in frontier:
        succ = model.successors(s)
        generated += len(succ)
        for _a, x in succ:
            if x not in seen:
                seen.add(x)
                nxt.append(x)
    states += nxt
    frontier = nxt
search = clock() - t
t = clock()
for s in states:
    model.successors(s)
again = clock() - t
print(platform.python_implementation(), platform.python_version(), search, again,
      len(states), generated)
"""


def run(python: str, src: str, scenario: str, variant: str) -> tuple:
    out = subprocess.run([python, "-c", RUN.format(path=src, scenario=scenario,
                                                   variant=variant)],
                         cwd=src, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"interpreter_bench: {python} failed:\n{out.stderr[-2000:]}")
    impl, version, search, again, states, generated = out.stdout.split()
    return f"{impl} {version}", float(search), float(again), int(states), int(generated)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", action="append", metavar="EXE",
                    help="an interpreter to time (repeatable; default: this one and pypy3)")
    ap.add_argument("--scenario", default="lifecycle-large")
    ap.add_argument("--variant", default="kip516")
    a = ap.parse_args(argv)
    pythons = a.python or [sys.executable] + ([p] if (p := shutil.which("pypy3")) else [])
    missing = [p for p in pythons if shutil.which(p) is None]
    if missing:
        print(f"interpreter_bench: no interpreter {missing[0]!r} on PATH", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kmc-interp-") as tmp:
        src = unpack(tmp)
        results = [run(p, src, a.scenario, a.variant) for p in pythons]
    first = results[0]
    for name, search, again, states, generated in results:
        print(f"{name:16s} plain search {search:6.2f} CPU s ({states:,} states, "
              f"{generated:,} generated, {first[1] / search:.2f}x the first); "
              f"successor function again {again:6.2f} s ({first[2] / again:.2f}x)")
    same = len({r[3:] for r in results}) == 1
    print(f"{a.scenario} {a.variant}: same counts: {'yes' if same else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
