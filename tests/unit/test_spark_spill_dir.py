"""Where spilled visited keys go (``explorers.spark.spill_dir``): ``KMC_SPARK_SPILL_DIR``
checked before Spark starts (one line, exit 2, nothing left behind), the run's private
subdirectory in it (mode 0700, removed with the run), spill on for any master with it
and only on this machine's executors without it, and the summary's line when visited
sets stay in memory."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark import session, ship, spill, spill_dir
from kmc.model.validation.twophase import TwoPhase
from kmc.reports.summary import render_text, summary

REMOTE = ("spark://10.1.2.3:7077", "yarn", "k8s://https://api:6443")
HERE = ("local[2]", "local-cluster[2,1,1024]", "spark://127.0.0.1:7077", None)


@pytest.fixture
def clean(monkeypatch):
    monkeypatch.setattr(spill_dir, "SPILL_DIR", None)
    monkeypatch.setattr(spill_dir, "ASSUME_REMOTE", False)


def _bad(setting) -> str:
    with pytest.raises(ExplorerError) as e:
        spill_dir.SpillSpace(setting)
    text = str(e.value)
    assert "\n" not in text and text.startswith(f"KMC_SPARK_SPILL_DIR={setting!r}")
    return text


def test_a_bad_setting_says_what_to_fix(tmp_path):
    assert "is a URL" in _bad("hdfs:///kmc/spill")
    assert "no such directory" in _bad(str(tmp_path / "missing"))
    (tmp_path / "file").write_text("x")
    assert "is not a directory" in _bad(str(tmp_path / "file"))
    # /sys takes no new directory, for root either
    assert "not writable" in _bad("/sys") or "cannot make a directory" in _bad("/sys")
    assert os.listdir(tmp_path) == ["file"]


def test_the_run_gets_a_private_subdirectory_removed_with_it(tmp_path, clean):
    with spill_dir.SpillSpace(str(tmp_path)) as space:
        assert space.base == str(tmp_path)
        assert os.path.dirname(space.dir) == str(tmp_path)
        assert os.path.basename(space.dir).startswith("kmc-spill-")
        assert stat.S_IMODE(os.stat(space.dir).st_mode) == 0o700
        for master in REMOTE + HERE:
            assert space.runs_base(master) == space.dir
        url = space.lineage_url()
        assert url == "file://" + os.path.join(space.dir, "lineage")
        assert os.path.isdir(url.removeprefix("file://"))
        run_dir = spill.RunDirectory(space.runs_base("yarn"))
        assert os.path.dirname(run_dir.dir) == space.dir
    assert os.listdir(tmp_path) == []
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C: removed all the same
        with spill_dir.SpillSpace(str(tmp_path)):
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_a_relative_setting_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shared").mkdir()
    with spill_dir.SpillSpace("shared") as space:
        assert space.base == str(tmp_path / "shared")
        assert os.path.isabs(space.dir)


def test_without_the_setting_only_this_machines_executors_spill(clean, monkeypatch):
    space = spill_dir.SpillSpace()
    assert space.dir is None and space.lineage_url() is None
    for master in HERE:
        assert space.runs_base(master) == ship.private_dir()
    for master in REMOTE:
        assert space.runs_base(master) is None
    monkeypatch.setattr(spill_dir, "ASSUME_REMOTE", True)  # the tests' multi-machine view
    for master in HERE + REMOTE:
        assert space.runs_base(master) is None
        assert not spill_dir.local_disks(master)
    assert session.loopback("spark://127.0.0.1:7077")  # the executors' set-up is unchanged


def test_the_summary_says_where_visited_sets_are(tmp_path, clean):
    result = bfs(TwoPhase(3))
    levels = [{"mode": "spark"}]
    space = spill_dir.SpillSpace()
    result.extra["spark"] = {"levels": levels, **space.summary(None, None)}
    text = render_text(result)
    assert text.count(spill_dir.IN_MEMORY_NOTE) == 1 and "KMC_SPARK_SPILL_DIR" in text
    assert summary(result)["spark"]["spill"] is None
    with spill_dir.SpillSpace(str(tmp_path)) as shared:
        result.extra["spark"] = {"levels": levels, **shared.summary(shared.dir, 1)}
        assert "visited sets" not in render_text(result)
        assert summary(result)["spark"]["spill"] == {"dir": str(tmp_path), "bound": 1}
    local = space.summary(ship.private_dir(), 4096)
    assert local == {"spill": {"dir": ship.private_dir(), "bound": 4096},
                     "visited_note": None}


def test_the_executors_probe_sees_and_writes_the_directory(tmp_path):
    assert spill_dir.reach(str(tmp_path)) is None and os.listdir(tmp_path) == []
    problem = spill_dir.reach(str(tmp_path / "kmc-spill-elsewhere"))
    assert problem.startswith("an executor on ") and problem.endswith(
        f"does not see {tmp_path / 'kmc-spill-elsewhere'}")
    assert spill_dir.reach("/sys").startswith("an executor on ")  # no file there
    with spill_dir.SpillSpace(str(tmp_path)) as space:
        space.check_reached([None, None])
        with pytest.raises(ExplorerError) as e:
            space.check_reached([None, "an executor on h does not see /x"])
        assert str(e.value).startswith(
            f"KMC_SPARK_SPILL_DIR={str(tmp_path)!r}: an executor on h does not see /x: "
            "mount it at the same path")


def test_a_bad_setting_stops_the_check_before_spark_starts(tmp_path, monkeypatch):
    from kmc.explorers.spark import spark_bfs

    def no_spark(*_a, **_k):
        raise AssertionError("Spark started")
    monkeypatch.setattr(session, "spark_context", no_spark)
    monkeypatch.setattr(spill_dir, "SPILL_DIR", str(tmp_path / "missing"))
    with pytest.raises(ExplorerError, match="no such directory"):
        spark_bfs(TwoPhase(3), master="spark://10.1.2.3:7077")
    assert os.listdir(tmp_path) == []


def test_the_cli_gives_one_line_and_exit_2(tmp_path):
    (tmp_path / "file").write_text("x")
    env = {**os.environ, "KMC_SPARK_SPILL_DIR": str(tmp_path / "file")}
    p = subprocess.run([sys.executable, "-m", "kmc", "check", "diehard", "--explorer",
                        "spark"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip().splitlines() == [
        f"kmc: error: KMC_SPARK_SPILL_DIR={str(tmp_path / 'file')!r} is not a directory: "
        "name a directory every executor shares, or unset the variable"]
    assert os.listdir(tmp_path) == ["file"]
