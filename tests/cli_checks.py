"""Assertions about the `kmc` command's output shared by the tests."""


def one_line_error(r, *needles):
    """``r`` (a finished subprocess) exited 2 with one ``kmc: error:`` line naming every
    needle."""
    assert r.returncode == 2, r.stderr[-2000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kmc: error: "), r.stderr[-2000:]
    for n in needles:
        assert n in lines[0], lines[0]
