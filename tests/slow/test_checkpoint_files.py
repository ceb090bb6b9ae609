"""Nothing kmc reads from a checkpoint directory executes code: an identity.pkl of an
older kmc is refused unread, a crafted pickle in a level file or a tampered block line is
refused before anything is unpickled (each payload here would create a marker file if it
ran), each with one line; the key that authenticates the directory lives outside it, 0600
in a 0700 directory."""
from __future__ import annotations

import base64
import io
import json
import os
import pickle
import stat
import subprocess
import sys

import numpy as np
import pytest

from cli_checks import one_line_error

from kmc.explorers.bfs import bfs
from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark import ckptfiles, sealing, spark_bfs
from kmc.explorers.spark.checkpoint import CheckpointStore, to_url
from kmc.model.validation.twophase import TwoPhase

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("key_dir")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Payload:
    """Unpickling this creates ``path`` (``open`` is a builtin: importable anywhere)."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


def kmc(*args):
    return subprocess.run([sys.executable, "-m", "kmc", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": ROOT})


def forged(line, marker, seal):
    """A line as long as ``line`` (its block file keeps the size its level recorded):
    ``seal(Payload(path))``, ``path`` being ``marker`` led by as many slashes as it
    takes."""
    for pad in range(len(line)):
        other = seal(Payload("/" * pad + str(marker)))
        if len(other) >= len(line):
            assert len(other) == len(line), (len(other), len(line))
            return other
    raise AssertionError("no forged line of that length")


#: a driver threshold no level of these runs reaches: every level on the driver
DRIVER_ONLY = 1 << 30


def checkpoint(path, on_spark=False):
    """TwoPhase rm=3 checkpointed up to depth 3 (levels 0-2), every level on Spark or
    every level on the driver."""
    spark_bfs(TwoPhase(3), checkpoint_dir=str(path), max_depth=3,
              driver_level_max=0 if on_spark else DRIVER_ONLY)
    assert sorted(n for n in os.listdir(path / "levels") if not n.startswith(".")) == \
        ["0.json", "0.npy", "1.json", "1.npy", "2.json", "2.npy"]


def resume(path, on_spark=False):
    return spark_bfs(TwoPhase(3), checkpoint_dir=str(path), resume=True,
                     driver_level_max=0 if on_spark else DRIVER_ONLY)


def refused(path, marker, match, on_spark=False):
    with pytest.raises(ExplorerError, match=match) as e:
        resume(path, on_spark)
    assert "\n" not in str(e.value)
    assert not marker.exists(), "a payload from the checkpoint dir ran"


def test_an_old_identity_pkl_is_refused_unread(tmp_path):
    ckpt, marker = tmp_path / "ckpt", tmp_path / "ran"
    ckpt.mkdir()
    (ckpt / "identity.pkl").write_bytes(pickle.dumps(Payload(marker)))
    for resume_flag in ([], ["--resume"]):
        r = kmc("check", "twophase", "--explorer", "spark", "--checkpoint-dir", ckpt,
                *resume_flag)
        one_line_error(r, "written by an older kmc", "empty directory")
        assert not marker.exists()


def test_the_key_is_private_and_outside_the_directory(sc, tmp_path, key_dir):
    ckpt = tmp_path / "ckpt"
    checkpoint(ckpt)
    key_file = sealing.key_path(to_url(str(ckpt)))
    assert os.path.dirname(key_file) == str(key_dir)
    assert stat.S_IMODE(os.stat(key_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    key_hex = open(key_file).read().strip()
    for d, _dirs, files in os.walk(ckpt):
        for f in files:
            assert key_hex.encode() not in open(os.path.join(d, f), "rb").read()
    assert resume(ckpt).unique_states == bfs(TwoPhase(3)).unique_states
    # a key that others can read no longer vouches for anything
    os.chmod(key_file, 0o644)
    with pytest.raises(ExplorerError, match="is not private"):
        resume(ckpt)
    os.remove(key_file)  # as on another machine, or for another user
    with pytest.raises(ExplorerError, match="written by another user or machine"):
        resume(ckpt)


def test_a_key_directory_open_to_others_is_refused(tmp_path, monkeypatch):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o777)
    monkeypatch.setenv("KMC_KEY_DIR", str(d))
    with pytest.raises(ExplorerError, match="open to other users: chmod 700"):
        sealing.new_key("file:///somewhere")
    assert not os.listdir(d)


def test_a_crafted_level_file_is_not_unpickled(sc, tmp_path):
    ckpt, marker = tmp_path / "ckpt", tmp_path / "ran"
    checkpoint(ckpt)
    level = ckpt / "levels" / "1.json"
    good = level.read_bytes()
    doc = json.loads(good)
    doc["objects"] = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    level.write_text(json.dumps(doc))
    refused(ckpt, marker, r"checkpoint dir .* was modified or written by another "
                          r"user/machine \(levels/1.json")
    # the trace rows: an object array (np.load would unpickle it if allowed)
    level.write_bytes(good)
    buf = io.BytesIO()
    np.save(buf, np.array([Payload(marker), 1], dtype=object), allow_pickle=True)
    (ckpt / "levels" / "2.npy").write_bytes(buf.getvalue())
    refused(ckpt, marker, r"was modified .*levels/2.npy")


def test_a_counter_changed_in_a_level_file_is_refused(sc, tmp_path):
    ckpt = tmp_path / "ckpt"
    checkpoint(ckpt)
    level = ckpt / "levels" / "2.json"
    doc = json.loads(level.read_text())
    doc["unique"] += 1
    level.write_text(json.dumps(doc))
    with pytest.raises(ExplorerError, match="was modified .*levels/2.json"):
        resume(ckpt)


@pytest.mark.parametrize("on_spark", [False, True], ids=["driver-level", "spark-level"])
def test_a_tampered_block_line_is_not_unpickled(sc, tmp_path, on_spark):
    """The blocks are read back on the executors: into the driver (the last level ran
    there) or straight into the first Spark level."""
    ckpt, marker = tmp_path / "ckpt", tmp_path / "ran"
    checkpoint(ckpt, on_spark)
    part = next(p for p in sorted((ckpt / "blocks" / "2").iterdir())
                if p.name.startswith("part-") and p.stat().st_size)
    lines = part.read_text().splitlines()
    mac = lines[0].split(" ")[0]
    lines[0] = forged(lines[0], marker,
                      lambda p: f"{mac} {base64.b64encode(pickle.dumps(p)).decode()}")
    part.write_text("\n".join(lines) + "\n")
    for crc in (ckpt / "blocks" / "2").glob(".*.crc"):
        crc.unlink()  # Hadoop's checksums would catch the edit before kmc does
    refused(ckpt, marker, r"was modified .*\(a block record", on_spark)


def test_an_edited_block_with_its_checksum_file_kept(sc, tmp_path):
    """Hadoop's own checksum (the .crc beside a block file) fails first: the same line."""
    ckpt = tmp_path / "ckpt"
    checkpoint(ckpt)
    part = next(p for p in sorted((ckpt / "blocks" / "2").glob("part-*")) if p.stat().st_size)
    text = part.read_text()
    part.write_text(text[:10] + ("1" if text[10] == "0" else "0") + text[11:])
    with pytest.raises(ExplorerError, match=r"was modified .*\(a file no longer matches "
                                            "its Hadoop checksum"):
        resume(ckpt)


@pytest.mark.full  # ~20 s; the lost block below is the default tier's one-line report
def test_the_cli_reports_a_tampered_block_in_one_line(sc, tmp_path):
    ckpt, marker = tmp_path / "ckpt", tmp_path / "ran"
    checkpoint(ckpt)
    for part in (ckpt / "blocks" / "2").glob("part-*"):
        lines = part.read_text().splitlines()
        if lines:  # sealed with another key
            lines[0] = forged(lines[0], marker,
                              lambda p: sealing.seal(b"k" * 32, "blocks/2", p))
            part.write_text("\n".join(lines) + "\n")
    for crc in (ckpt / "blocks" / "2").glob(".*.crc"):
        crc.unlink()
    r = kmc("check", "twophase", "-p", "rm=3", "--explorer", "spark", "--checkpoint-dir",
            ckpt, "--resume")
    one_line_error(r, "was modified or written by another user/machine",
                   "(a block record does not match its key)")
    assert not marker.exists()


def test_a_lost_block_file_is_refused_by_the_cli(sc, tmp_path):
    """Without the file list in levels/7.json this resumed with 8,568 of 8,832 states and
    reported that every property holds."""
    ckpt = tmp_path / "ckpt"
    assert not spark_bfs(TwoPhase(5), checkpoint_dir=str(ckpt), max_depth=8).complete
    args = ["check", "twophase", "-p", "rm=5", "--explorer", "spark", "--checkpoint-dir", ckpt]
    (ckpt / "blocks" / "7" / "part-00001").unlink()
    (ckpt / "blocks" / "7" / ".part-00001.crc").unlink()
    r = kmc(*args, "--resume")
    one_line_error(r, "was modified or written by another user/machine",
                   "(blocks/7/part-00001 is missing)")
    assert "distinct states" not in r.stdout


def _renamed(blocks):
    (blocks / "part-00001").rename(blocks / "part-00007")


def _duplicated(blocks):
    (blocks / "part-00002").write_bytes((blocks / "part-00000").read_bytes())


def _cut_short(blocks):
    part = blocks / "part-00000"
    part.write_text(part.read_text().splitlines()[0][:-8] + "\n")


@pytest.mark.parametrize("damage, why", [
    (_renamed, r"blocks/2/part-00001 is missing"),
    (_duplicated, r"blocks/2/part-00002 is not one of the files levels/2.json lists"),
    (_cut_short, r"blocks/2/part-00000 has [\d,]+ bytes, not the [\d,]+ written"),
], ids=["renamed", "duplicated", "cut-short"])
@pytest.mark.parametrize("on_spark", [False, True], ids=["driver-level", "spark-level"])
def test_a_changed_set_of_block_files_is_refused(sc, tmp_path, damage, why, on_spark):
    ckpt = tmp_path / "ckpt"
    checkpoint(ckpt, on_spark)
    for crc in (ckpt / "blocks" / "2").glob(".*.crc"):
        crc.unlink()
    damage(ckpt / "blocks" / "2")
    with pytest.raises(ExplorerError, match=r"was modified .*\(" + why + r"\)") as e:
        resume(ckpt, on_spark)
    assert "\n" not in str(e.value)


def test_blocks_read_back_must_hold_the_recorded_states(sc, tmp_path, monkeypatch):
    """Behind the file list, a level resumed on the driver counts what it read back."""
    ckpt = tmp_path / "ckpt"
    checkpoint(ckpt)
    (ckpt / "blocks" / "2" / "part-00001").unlink()
    monkeypatch.setattr(CheckpointStore, "check_blocks", lambda *_a: None)
    with pytest.raises(ExplorerError, match=r"was modified .*\(blocks/2 holds [\d,]+ "
                                            r"states and a frontier of [\d,]+, not the"):
        resume(ckpt)


def test_resume_through_hadoop_files_gives_bfs_answers(sc, tmp_path, monkeypatch):
    """The small files through the Hadoop filesystem (as for hdfs:// or s3a://), here
    on a local directory."""
    monkeypatch.setattr(ckptfiles, "open_files",
                        lambda sc, url, path: ckptfiles.HadoopFiles(sc, url, path))
    ckpt = tmp_path / "ckpt"
    checkpoint(ckpt)
    got, want = resume(ckpt), bfs(TwoPhase(3))
    assert (got.unique_states, got.generated_states, got.max_depth, got.verdicts()) == \
        (want.unique_states, want.generated_states, want.max_depth, want.verdicts())
    assert got.extra["spark"]["resumed_at_level"] == 3


def test_a_checkpoint_of_an_older_format_is_refused_in_one_line(sc, tmp_path):
    """A directory written before state keys became 128-bit (format 3) holds 64-bit keys
    in its trace rows and blocks: resuming it is refused before Spark starts."""
    ckpt = tmp_path / "ckpt"
    checkpoint(ckpt)
    ident = json.loads((ckpt / "identity.json").read_text())
    (ckpt / "identity.json").write_text(json.dumps({**ident, "format": 3}))
    r = kmc("check", "twophase", "-p", "rm=3", "--explorer", "spark", "--checkpoint-dir",
            ckpt, "--resume")
    one_line_error(r, "has format 3 (an older kmc's, whose state keys were 64-bit",
                   "format 5 only: start a new run in an empty directory")
    # format 4: 128-bit keys, but blocks without their levels' trace rows
    (ckpt / "identity.json").write_text(json.dumps({**ident, "format": 4}))
    r = kmc("check", "twophase", "-p", "rm=3", "--explorer", "spark", "--checkpoint-dir",
            ckpt, "--resume")
    one_line_error(r, "has format 4 (an older kmc's, whose blocks hold no trace rows)",
                   "format 5 only: start a new run in an empty directory")
