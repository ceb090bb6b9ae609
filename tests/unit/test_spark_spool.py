"""The embedded master's record files (``explorers.spark.spool``), without a JVM: a task's
records go into its one file and come back whole, records of a run without a spool pass
as they are, and the driver's pruning keeps exactly the files later jobs may read."""
from __future__ import annotations

import os

import numpy as np

from kmc.explorers.spark import spool


def _task(directory, job, pid, recs):
    out = spool.TaskFile(directory, job, pid)
    try:
        return [out.put(r) for r in recs]
    finally:
        out.close()


def test_records_come_back_whole_from_one_file_per_task(tmp_path):
    recs = [("V", np.arange(5, dtype=np.uint64)),
            ("B", b"packed", np.array([7, 9], dtype=np.uint64), None, ()),
            ("C", np.array([3], dtype=np.uint64), np.array([1], dtype=np.uint64), b"s" * 9000),
            ("T", np.array([], dtype=np.uint64), np.array([], dtype=np.uint64))]
    sent = _task(str(tmp_path), 4, 1, recs)
    assert os.listdir(tmp_path) == ["4-1"]
    assert [r[0] for r in sent] == ["V", "B", "C", "T"]  # the tag still routes the record
    assert all(len(r) == 2 and isinstance(r[1], spool.Spooled) for r in sent)
    assert len({r[1].offset for r in sent}) == 4
    for want, ref in reversed(list(zip(recs, sent))):  # any order: each by its offset
        got = spool.opened(ref)
        assert len(got) == len(want) and got[0] == want[0]
        for a, b in zip(want[1:], got[1:]):
            assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
    assert spool.opened_record((1, sent[1]))[1][1] == b"packed"


def test_without_a_directory_records_pass_as_they_are():
    rec = ("C", np.array([3], dtype=np.uint64), np.array([1], dtype=np.uint64), None)
    assert _task(None, 1, 0, [rec])[0] is rec
    assert spool.opened(rec) is rec
    assert spool.opened(("V", np.arange(2, dtype=np.uint64)))[0] == "V"


def test_prune_keeps_the_awaited_job_and_later_ones_and_close_removes_all():
    s = spool.Spool()
    for job in (1, 2, 3):
        for pid in (0, 1):
            _task(s.dir, job, pid, [("B", b"x", None, None, ())])
    s.prune(2)
    assert sorted(os.listdir(s.dir)) == ["2-0", "2-1", "3-0", "3-1"]
    s.close()
    assert not os.path.exists(s.dir)


def test_only_local_masters_spool():
    assert spool.embedded("local") and spool.embedded("local[2]") and spool.embedded("local[*]")
    assert not spool.embedded("local-cluster[2,1,1024]")
    assert not spool.embedded("spark://127.0.0.1:7077")
