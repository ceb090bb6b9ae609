"""Planning a mutation run loads every module the chosen models use, those a model
imports only when asked for its properties or fairness included: the workers fork from
the planning process and must not read those modules from disk while the run goes on."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LAZY = ("kmc.model.partitions.properties", "kmc.model.partitions.bookkeeping_properties",
        "kmc.model.partitions.liveness")


def test_planning_loads_the_modules_a_model_imports_lazily():
    code = (
        "import sys\n"
        "from kmc.mutate.runner import make_plan\n"
        "from kmc.reports.regress.suite import Entry\n"
        f"lazy = {LAZY!r}\n"
        "assert not any(m in sys.modules for m in lazy)\n"
        "plan = make_plan([Entry(id='e', scenario='expand', variant='kip253')],\n"
        "                 [sys.argv[1]])\n"
        "print(sorted(m for m in lazy if m not in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code,
                          os.path.join(ROOT, "model", "partitions", "group.py")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
