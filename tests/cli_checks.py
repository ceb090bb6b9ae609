"""Assertions about the `kmc` command's output shared by the tests."""


def one_line_error(r, *needles):
    """``r`` (a finished subprocess) exited 2 with one ``kmc: error:`` line naming every
    needle."""
    assert r.returncode == 2, r.stderr[-2000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kmc: error: "), r.stderr[-2000:]
    for n in needles:
        assert n in lines[0], lines[0]


def kmc_in_process(capsys, *argv):
    """(exit code, stdout, stderr) of ``kmc ARGV`` run in this process."""
    from kmc.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(root):
    """Every path under ``root`` with its bytes (None for a directory), sorted: equal
    snapshots mean nothing was written, moved or removed."""
    return sorted((str(p.relative_to(root)), p.read_bytes() if p.is_file() else None)
                  for p in root.rglob("*"))
