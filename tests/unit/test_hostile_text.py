"""Text a model makes (states, actions, descriptions, property names) reaches terminals,
XML files, file names and suite files: an escape sequence or a direction override in it
is shown, not obeyed; a control character leaves SVG and GraphML valid XML; a name of
multi-byte letters makes a file name the file system takes; a state string of a hundred
thousand characters still gets its pictures; and a property name is one printable line
that a suite file can hold."""
import glob
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from kmc.cli import main
from kmc.reports.inputs import file_slug

BAD = "\\x1b[31mRED\\x07\\x00nul\\u202eevil\\x08"
MODEL = f'''
from kmc import Model, always
BAD = "{BAD}"
class M(Model):
    name = "ctl"
    def __init__(self, long=0):
        self.long = long
    def init_states(self):
        return [(0, BAD + "S" * self.long)]
    def actions(self, s):
        return [] if s[0] >= 2 else ["A" + BAD]
    def next_state(self, s, a):
        return (s[0] + 1, s[1])
    def format_action(self, a):
        return a
    def format_state(self, s):
        return repr(s) + BAD
    def properties(self):
        return [always("P", lambda s: s[0] < 2, description="d" + BAD)]
def make(long=0):
    return M(long)
'''


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ctl.py").write_text(MODEL)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    sys.modules.pop("ctl", None)


def test_the_terminal_sees_escapes_not_control_characters(model):
    p = subprocess.run([sys.executable, "-m", "kmc", "check", "ctl.py:make"],
                       capture_output=True, timeout=120, cwd=model)
    assert p.returncode == 1, p.stderr
    assert b"\x1b" not in p.stdout and b"\x00" not in p.stdout and b"\x07" not in p.stdout
    assert "\u202e".encode() not in p.stdout
    assert b"\\x1b[31mRED" in p.stdout  # shown, as written


def test_terminal_safe_keeps_lines_and_tabs_and_escapes_the_rest():
    from kmc.cli import terminal_safe

    assert terminal_safe("a\tb\nc") == "a\tb\nc"
    assert terminal_safe("x\x1b[2Jy\rz\u202e") == "x\\x1b[2Jy\\rz\\u202e"
    assert terminal_safe('{"k": "\\u001b"}') == '{"k": "\\u001b"}'  # JSON as it was


def test_svg_and_graphml_stay_xml_with_control_characters_in_the_text(model, capsys):
    assert main(["check", "ctl.py:make", "--out", "o", "--quiet"]) == 1
    files = glob.glob("o/*.svg") + glob.glob("o/*.graphml")
    assert len(files) == 4
    for f in files:
        ET.parse(f)  # raises on a character XML 1.0 does not allow


def test_a_state_of_a_hundred_thousand_characters_gets_its_pictures(model, capsys):
    assert main(["check", "ctl.py:make", "-p", "long=100000", "--out", "o",
                 "--quiet"]) == 1
    assert {"sequence-P.png", "states-P.png", "graph-P.png"} <= set(os.listdir("o"))


@pytest.mark.parametrize("name", ["中" * 100, "\U0001d400" * 100, "a" * 300])
def test_a_file_name_is_at_most_limit_bytes_whatever_the_letters(name):
    slug = file_slug(name)
    assert len(slug.encode()) <= 100 + 9 and slug != file_slug(name + "x")


@pytest.mark.parametrize("name, words", [
    ("a\nb", "not one line"), ("\x1b[31m", "not one line"), ("P" * 201, "at most 200"),
])
def test_a_property_name_is_one_printable_line(model, capsys, name, words):
    (model / "named.py").write_text(MODEL.replace('always("P"', f'always({name!r}'))
    sys.modules.pop("named", None)
    assert main(["check", "named.py:make"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


def test_a_property_name_with_quotes_is_recorded_and_read_back(model, capsys):
    (model / "quoted.py").write_text(MODEL.replace('always("P"', "always('q\"uote\\\\back'"))
    (model / "s.toml").write_text('[[entry]]\nscenario = "quoted.py:make"\n')
    assert main(["regress", "s.toml", "--update"]) == 0
    capsys.readouterr()
    assert main(["regress", "s.toml"]) == 0, capsys.readouterr()


def test_a_violated_property_whose_name_holds_a_comma_is_not_recorded(model, capsys):
    (model / "comma.py").write_text(MODEL.replace('always("P"', 'always("A, B"'))
    (model / "s.toml").write_text('[[entry]]\nscenario = "comma.py:make"\n')
    before = (model / "s.toml").read_text()
    assert main(["regress", "s.toml", "--update"]) == 2
    err = capsys.readouterr().err
    assert "'A, B'" in err and "rename the property" in err
    assert (model / "s.toml").read_text() == before
