"""Instructions a BFS executes per distinct state, counted by valgrind: a figure that does
not move with the machine's load, for comparing two versions of the code on a shared or
noisy machine.

    python bench/instructions_bench.py                      # the working tree
    python bench/instructions_bench.py --against HEAD~1     # and a git revision beside it
    python bench/instructions_bench.py --case kraft-large --states 5000

Each case builds its model and runs a breadth-first search to ``--states`` distinct
states (the search stops at the first level boundary past it), in a fresh process under
``valgrind --tool=callgrind``; the same process without the search is counted too, and
its instructions (interpreter start-up, imports, the model's set-up) are subtracted.
String hashing is seeded alike in every run (``PYTHONHASHSEED=0``) and address-space
randomisation is off (``setarch -R``), so a count repeats within about 0.2%. A
revision given by ``--against`` is checked out into a temporary git worktree and
imported from there through the same package layout as the installed kmc (pyproject's
``package-dir``), with the same interpreter and dependencies. Figures, never assertions;
valgrind runs the interpreter about 50 times slower, so keep ``--states`` small (10,000
states of lifecycle-large take about a minute a run).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = {
    "lifecycle-large": ("lifecycle-large", "kip516"),
    "kraft-large": ("kraft-large", None),
    "split-merge-spark": ("split-merge-spark", "kip253"),
}

_CHILD = """
import sys
from kmc.api import build
from kmc.explorers.bfs import bfs
scenario, variant, states = sys.argv[1], sys.argv[2] or None, int(sys.argv[3])
model = build(scenario, variant, {})
if states:
    print(bfs(model, max_states=states).unique_states)
"""


def instructions(case: str, states: int, path: str | None) -> tuple[int, int]:
    """(instructions callgrind counts, distinct states reached) for one run of ``_CHILD``
    (``states`` 0: set-up only), with kmc imported from ``path`` (None: as installed)."""
    scenario, variant = CASES[case]
    env = dict(os.environ, PYTHONHASHSEED="0")  # set and dict orders: the same count each run
    if path is not None:
        env["PYTHONPATH"] = path
    out = subprocess.run(
        ["setarch", "-R", "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         sys.executable, "-c", _CHILD, scenario, variant or "", str(states)],
        capture_output=True, text=True, env=env, cwd=os.sep)
    found = re.search(r"Collected\s*:\s*(\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"{case} failed under valgrind:\n{out.stderr[-2000:]}")
    return int(found.group(1)), int(out.stdout.split()[-1]) if states else 0


def importable(tree: str, into: str) -> str:
    """A directory from which ``import kmc`` finds the sources in ``tree`` laid out as the
    installed package (pyproject's package-dir: ``kmc.model`` is ``tree/model``, ...)."""
    with open(os.path.join(tree, "pyproject.toml"), "rb") as f:
        dirs = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    top = os.path.join(into, "kmc")
    os.makedirs(top)
    for name in os.listdir(os.path.join(tree, dirs["kmc"])):
        os.symlink(os.path.join(tree, dirs["kmc"], name), os.path.join(top, name))
    for package, folder in dirs.items():
        if package != "kmc":
            os.symlink(os.path.join(tree, folder), os.path.join(top, package.split(".")[1]))
    return into


def measure(label: str, cases, states: int, path: str | None) -> None:
    for case in cases:
        total, reached = instructions(case, states, path)
        setup, _ = instructions(case, 0, path)
        work = total - setup
        print(f"{label:>12}  {case}: {reached:,} states, {work / 1e6:,.0f} M instructions "
              f"= {work / reached:,.0f} per distinct state")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(CASES), action="append")
    ap.add_argument("--states", type=int, default=10_000,
                    help="distinct states to search (default 10,000)")
    ap.add_argument("--against", metavar="REV", help="also measure this git revision")
    a = ap.parse_args(argv)
    for tool, package in (("valgrind", "valgrind"), ("setarch", "util-linux")):
        if shutil.which(tool) is None:
            print(f"instructions_bench: {tool} is not on PATH (apt-get install {package})",
                  file=sys.stderr)
            return 2
    if a.states < 1:
        print("instructions_bench: --states must be at least 1", file=sys.stderr)
        return 2
    if a.against and subprocess.run(
            ["git", "-C", ROOT, "rev-parse", "--verify", "--quiet", a.against + "^{commit}"],
            capture_output=True).returncode != 0:
        print(f"instructions_bench: {a.against!r} is not a commit of this repository "
              "(name a branch, tag or commit: --against HEAD~1)", file=sys.stderr)
        return 2
    cases = a.case or ["lifecycle-large", "kraft-large"]
    measure("working tree", cases, a.states, None)
    if a.against:
        with tempfile.TemporaryDirectory() as tmp:
            tree = os.path.join(tmp, "tree")
            done = subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", tree,
                                   a.against], capture_output=True, text=True)
            if done.returncode != 0:
                why = (done.stderr.strip().splitlines() or ["git worktree add failed"])[-1]
                print(f"instructions_bench: cannot check out {a.against!r}: {why}",
                      file=sys.stderr)
                return 2
            try:
                measure(a.against, cases, a.states, importable(tree, os.path.join(tmp, "site")))
            finally:
                subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree],
                               capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
