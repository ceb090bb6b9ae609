"""The installed distribution has one import root, ``kmc``: a wheel built from this checkout,
installed non-editable in a fresh virtual environment, runs ``kmc check`` and ``kmc regress``
(the suite ships as package data) from a project folder that has its own ``model/`` package,
and neither shadows the other.

The venv sees the dependencies (pyspark, z3, ...) of the interpreter running the tests
through a plain path line, so no ``.pth`` file of that interpreter runs in it: an editable
install of this checkout there cannot stand in for a file the wheel lacks."""
from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def run(argv, cwd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp / "dist",
                 ROOT], cwd=tmp, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp / "dist").glob("*.whl")
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    purelib = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                  cwd=tmp).stdout.strip()
    Path(purelib, "outer-dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n")
    done = run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel], cwd=tmp)
    assert done.returncode == 0, done.stderr[-2000:]
    project = tmp / "project"
    (project / "model").mkdir(parents=True)
    (project / "model" / "__init__.py").write_text("")
    (project / "model" / "scenario.py").write_text("WHO = 'the user project'\n")
    return wheel, env_dir, project


def test_the_wheel_holds_only_the_kmc_package_and_the_suite(installed):
    wheel, _, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"kmc"}
    for expected in ("kmc/model/contract.py", "kmc/explorers/bfs.py", "kmc/invariants/declare.py",
                     "kmc/reports/summary.py", "kmc/regressions/regressions.toml",
                     "kmc/regressions/diehard.standard/NotSolved.json"):
        assert expected in names


def test_the_user_projects_own_model_package_and_kmc_coexist(installed):
    _, env_dir, project = installed
    probe = ("import kmc.model.contract, model.scenario; "
             "print(kmc.model.contract.__file__); print(model.scenario.WHO)")
    out = run([env_dir / "bin" / "python", "-c", probe], cwd=project)
    assert out.returncode == 0, out.stderr[-2000:]
    where, who = out.stdout.splitlines()
    assert where.startswith(str(env_dir)) and who == "the user project"


def test_kmc_check_runs_from_the_installed_wheel(installed):
    _, env_dir, project = installed
    out = run([env_dir / "bin" / "python", "-m", "kmc", "check", "twophase", "-p", "rm=3"],
              cwd=project)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "288" in out.stdout.replace(",", "")


#: one entry of each model package the wheel ships (validation, the ZooKeeper-era topic
#: and partition models, the KRaft plane); diehard's counterexample is a stored trace the
#: run replays. The whole smoke tier runs beside the tests in CI (.ci/run).
SHIPPED = ("diehard.standard", "stale-read.legacy", "expand.modulo", "kraft-stray.kraft-3.6")


def test_kmc_regress_runs_the_shipped_suite_with_no_path(installed):
    _, env_dir, project = installed
    only = [a for entry in SHIPPED for a in ("--only", entry)]
    out = run([env_dir / "bin" / "kmc", "regress", "--json", *only], cwd=project)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    summary = json.loads(out.stdout)
    assert summary["suite"].startswith(str(env_dir))  # the packaged suite, not a checkout's
    ids = {e["id"] for e in summary["entries"]}
    assert all(any(i.startswith(s) for i in ids) for s in SHIPPED)
    assert summary["counts"]["pass"] == len(ids) and summary["exit_code"] == 0
