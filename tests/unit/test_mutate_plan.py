"""Planning a mutation run loads every module the chosen models use, those a model
imports only when asked for its properties or fairness included: the workers fork from
the planning process and must not read those modules from disk while the run goes on."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LAZY = ("kmc.model.kafka.kip253.properties", "kmc.model.kafka.kip253.bookkeeping_properties",
        "kmc.model.kafka.kip253.liveness")


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
                          os.path.join(ROOT, "model", "kafka", "kip253", "group.py")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_default_run_leaves_property_code_out_and_files_can_name_it():
    """The topic model's default files are its protocol code; its property modules
    (``PROPERTY_CODE = True``) come in only when ``--files`` names them."""
    from kmc.mutate.runner import make_plan
    from kmc.mutate.sources import is_property_code
    from kmc.reports.regress.suite import Entry

    entries = [Entry(id="e", scenario="stale-read", variant="kip516")]
    names = {os.path.relpath(f, ROOT) for f in make_plan(entries).files}
    topics = os.path.join("model", "kafka", "zk")
    assert {os.path.join(topics, f) for f in ("control.py", "brokers.py", "datapath.py",
                                              "lifecycle.py", "cluster.py")} <= names
    props = [os.path.join(topics, f) for f in ("properties.py", "protocol_properties.py",
                                               "views.py", "liveness.py")]
    assert all(is_property_code(os.path.join(ROOT, f)) for f in props)
    assert not names & set(props)
    assert not is_property_code(os.path.join(ROOT, topics, "control.py"))
    named = make_plan(entries, [os.path.join(ROOT, props[0])]).files
    assert [os.path.relpath(f, ROOT) for f in named] == [props[0]]


def test_a_default_run_mutates_the_package_of_the_features_the_scenario_runs():
    """The ZooKeeper-era scenarios build one cluster model; a default run mutates the
    package of the feature each scenario chooses: KIP-253's procedure for the partition
    scenarios (the cluster's own code, which its feature imports from the zk package, is
    named with ``--files``), the zk package for the topic lifecycle."""
    from kmc.mutate.runner import make_plan
    from kmc.reports.regress.suite import Entry

    def packages(scenario, variant):
        plan = make_plan([Entry(id="e", scenario=scenario, variant=variant)])
        return {os.path.relpath(os.path.dirname(f), ROOT) for f in plan.files}, \
            {os.path.basename(f) for f in plan.files}

    dirs, names = packages("shrink-then-expand", "kip253")
    assert dirs == {os.path.join("model", "kafka", "kip253")}
    assert {"procedure.py", "controller.py", "group.py"} <= names
    dirs, names = packages("stale-read", "kip516")
    assert dirs == {os.path.join("model", "kafka", "zk")}
    assert "procedure.py" not in names
