"""docs/tutorial.md works as written: its model file, its scenario file, its commands'
exit codes and its Python snippet, run from the page's own code blocks."""
import json
import re
import subprocess
import sys
from pathlib import Path

from kmc.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "tutorial.md").read_text()


def blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", PAGE, re.S)


def test_the_tutorial_model_is_short():
    assert len(blocks("python")[0].splitlines()) <= 60


def test_the_tutorial_end_to_end(tmp_path, monkeypatch, capsys):
    model, snippet = blocks("python")
    (tmp_path / "recreate.py").write_text(model)
    (tmp_path / "stale.toml").write_text(blocks("toml")[0])
    monkeypatch.chdir(tmp_path)
    commands = [line.split("#")[0].split() for line in blocks("bash")[0].splitlines()]
    codes = {}
    for argv in commands:
        assert argv[0] == "kmc"
        if "--explorer" in argv:  # the Spark line: the differential tests cover Spark
            continue
        codes[" ".join(argv[1:])] = main(argv[1:] + ["--quiet", "--json"])
        out = json.loads(capsys.readouterr().out)
        if "ids=false" in argv:
            assert out["properties"]["NoStaleRead"]["verdict"] == "violated"
            assert out["properties"]["NoStaleRead"]["trace_length"] == 4
        else:
            assert out["unique_states"] == 18
    assert list(codes.values()) == [1, 0]
    for line in blocks("bash")[1].splitlines():  # --out, then replay what it wrote
        argv, _, said = line.partition("#")
        argv = argv.split()
        assert main(argv[1:]) == (1 if argv[1] == "check" else 0)
        out = capsys.readouterr().out
        assert said.strip() in out
        if argv[1] == "check":  # the command the summary prints is the page's next line
            assert "kmc replay out/trace-NoStaleRead.json --model recreate.py:make" in out
    assert main(["check", str(tmp_path / "stale.toml"), "--quiet"]) == 1
    capsys.readouterr()
    run = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "4"
