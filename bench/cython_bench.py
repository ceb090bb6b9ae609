"""What compiling the Kafka model's hot modules with Cython, unchanged, is worth per core.

    python bench/cython_bench.py              # two alternating pairs, lifecycle-large kip516
    python bench/cython_bench.py --pairs 4

Needs Cython and a C compiler (``pip install cython``). The committed tree (``git archive
HEAD``) is unpacked twice into a temporary directory; in one copy the modules a
lifecycle-large BFS spends its time in (the ZooKeeper-era cluster model, the shared Kafka
components, field-wise keys, memos, fused checks and the level expander) are compiled in
place with Cython's defaults, no annotation added. Each run is a fresh process that
imports ``kmc`` from one copy and times the whole BFS in CPU seconds; the copies
alternate (plain, compiled, plain, compiled, ...) so that a drifting machine speed weighs
on both. Prints each run, the medians and whether both copies found the same counts.
Figures, never assertions.
"""
from __future__ import annotations

import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the top-level folders that install as ``kmc.<name>`` (pyproject's package-dir)
PACKAGES = ("model", "invariants", "explorers", "reports", "regressions", "mutate")
COMPILED = ("model/kafka/zk/*.py", "model/kafka/*.py", "model/encoding.py", "model/memo.py",
            "model/records.py", "invariants/fieldview.py", "invariants/fused.py",
            "explorers/level.py", "explorers/core.py", "explorers/bfs.py")
RUN = """
import sys, time
sys.path.insert(0, {path!r})
import kmc.model.kafka.zk.control as probe
from kmc.api import build
from kmc.explorers.bfs import bfs
model = build({scenario!r}, {variant!r}, {{}})
t = time.process_time()
r = bfs(model)
print(time.process_time() - t, r.unique_states, r.generated_states, probe.__file__.endswith('.so'))
"""


def unpack(into: str) -> str:
    """The committed tree, importable as ``kmc`` from the returned directory."""
    src = os.path.join(into, "src")
    os.makedirs(src)
    archive = subprocess.run(["git", "-C", ROOT, "archive", "HEAD"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    for name in PACKAGES:  # kmc/<name> -> src/<name>, as the editable install maps them
        os.symlink(os.path.join(src, name), os.path.join(src, "kmc", name))
    return src


def compile_in_place(src: str) -> int:
    files = sorted({f for pattern in COMPILED for f in glob.glob(os.path.join(src, pattern))
                    if not f.endswith("__init__.py")})
    build = f"""
from Cython.Build import cythonize
from setuptools import setup
setup(name='kmc-compiled', script_args=['build_ext', '--inplace', '-j', '2'],
      ext_modules=cythonize({[os.path.relpath(f, src) for f in files]!r}, language_level=3,
                            nthreads=2, quiet=True))
"""
    done = subprocess.run([sys.executable, "-c", build], cwd=src, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"cython_bench: the build failed:\n{done.stderr[-2000:]}")
    return len(files)


def run(src: str, scenario: str, variant: str) -> tuple:
    out = subprocess.run([sys.executable, "-c", RUN.format(path=src, scenario=scenario,
                                                            variant=variant)],
                         cwd=src, check=True, capture_output=True, text=True).stdout
    cpu, states, generated, compiled = out.split()
    return float(cpu), int(states), int(generated), compiled == "True"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--scenario", default="lifecycle-large")
    ap.add_argument("--variant", default="kip516")
    a = ap.parse_args(argv)
    try:
        import Cython  # noqa: F401
    except ImportError:
        print("cython_bench: needs Cython: pip install cython", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kmc-cython-") as tmp:
        plain = unpack(os.path.join(tmp, "plain"))
        compiled = unpack(os.path.join(tmp, "compiled"))
        print(f"compiled {compile_in_place(compiled)} modules with Cython {Cython.__version__}",
              flush=True)
        times = {"plain": [], "compiled": []}
        counts = {}
        for i in range(a.pairs):
            for name, src in (("plain", plain), ("compiled", compiled)):
                cpu, states, generated, is_so = run(src, a.scenario, a.variant)
                times[name].append(cpu)
                counts.setdefault(name, set()).add((states, generated, is_so))
                print(f"  pair {i + 1} {name:8s} {cpu:6.2f} CPU s = {states / cpu:,.0f} "
                      f"states/s ({states:,} states, {generated:,} generated)", flush=True)
    mp, mc = statistics.median(times["plain"]), statistics.median(times["compiled"])
    same = {c[:2] for c in counts["plain"]} == {c[:2] for c in counts["compiled"]}
    print(f"{a.scenario} {a.variant}: median {mp:.2f} CPU s plain, {mc:.2f} compiled: "
          f"{mp / mc:.3f}x; same counts: {'yes' if same else 'NO'}; the compiled copy "
          f"imported its .so files: {'yes' if all(c[2] for c in counts['compiled']) else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
