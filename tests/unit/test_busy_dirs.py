"""Directories two runs may share: a checkpoint dir in use is named as busy before its
files are read (a resume into it is not told "no completed level"), a damaged
checkpoint file is named however deep its JSON nests, the interrupt hint counts levels
as the resume does, and two runs writing into one --out directory take turns, so the
last one's files stand whole."""
import json
import os
import subprocess
import sys
import time

import pytest

from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark import spark_bfs
from kmc.explorers.spark.ckptfiles import locked
from kmc.model.validation.diehard import DieHard


def test_a_resume_into_a_checkpoint_dir_in_use_is_told_it_is_busy(tmp_path):
    ck = str(tmp_path / "ck")
    with locked(ck):  # another run holds it, and has saved no level yet
        with pytest.raises(ExplorerError, match="is in use by another run"):
            spark_bfs(DieHard(), checkpoint_dir=ck, resume=True)


def test_a_checkpoint_file_nested_past_what_json_reads_is_named_damaged():
    from kmc.explorers.spark.checkpoint import parse

    with pytest.raises(ExplorerError, match="has a damaged level file"):
        parse(b"[" * 100000 + b"]" * 100000, "level file", "ck")


def test_the_interrupt_hint_counts_the_levels_saved(capsys):
    from kmc.explorers.spark.explore import _interrupted

    class Store:
        def completed_levels(self):
            return [0, 1, 2, 3, 4]  # level indices: five levels, depth 5
    _interrupted(Store(), "ck")
    assert "the first 5 levels are saved in ck" in capsys.readouterr().err


def test_two_runs_writing_one_out_dir_take_turns(tmp_path):
    from kmc.reports.artifacts import held

    out = tmp_path / "out"
    with held(str(out)):  # a first run is writing its files
        p = subprocess.Popen([sys.executable, "-m", "kmc", "check", "diehard", "--quiet",
                              "--out", str(out)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        time.sleep(3)  # the second run has finished exploring and waits to write
        assert not (out / "summary.json").exists()
    assert p.wait(timeout=120) == 1, p.stderr.read()
    assert json.loads((out / "summary.json").read_text())["properties"].keys() == \
        {"NotSolved"}
    assert "trace-NotSolved.json" in os.listdir(out)
