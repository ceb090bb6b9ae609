"""What 128-bit state keys cost: memory per state and distinct states/s of a whole BFS
run, measured in one run each (``memory_bench``'s child process), for this kmc and,
given ``--before ROOT``, for another kmc importable from ROOT (an import root holding a
``kmc`` package laid out as installed, e.g. an older checkout), alternating the two.

    python bench/keys_bench.py                                  # this kmc
    python bench/keys_bench.py --before /tmp/old-kmc --repeat 2 # against an older one
    python bench/keys_bench.py --before /tmp/old-kmc --after /tmp/new-kmc  # two roots

Figures, never assertions.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_bench import _CHILD, CASES  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(case: str, import_root: str | None) -> dict:
    env = dict(os.environ)
    if import_root:
        env["PYTHONPATH"] = import_root
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(CASES[case])],
                         capture_output=True, text=True, check=True,
                         cwd=import_root or ROOT, env=env)
    return json.loads(out.stdout)


def line(label: str, m: dict) -> str:
    n = m["states"]
    return (f"  {label:<7} {n:,} states, peak {m['peak'] / n:6.1f} B/state "
            f"({m['peak'] / 2**20:6.1f} MiB), "
            f"visited {m['visited'] / n:4.1f} B/state, trace rows {m['trace'] / n:4.1f} "
            f"B/state, {n / m['elapsed'] / 1000:6.1f}k states/s ({m['elapsed']:.1f} s)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(CASES), action="append")
    ap.add_argument("--before", metavar="ROOT", help="import root of the kmc to compare")
    ap.add_argument("--after", metavar="ROOT", help="import root of the kmc to measure "
                    "(default: this checkout)")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args(argv)
    for case in a.case or sorted(CASES):
        print(f"{case}:")
        for _ in range(a.repeat):
            if a.before:
                print(line("before", measure(case, a.before)))
            print(line("now", measure(case, a.after)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
