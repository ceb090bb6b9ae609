"""The GitHub Actions workflow users copy (docs/ci/kmc-regress.yml): every `kmc regress`
command line in it must be one kmc's own argument parser accepts, and it must run a
team's own suite (a path), not kmc's built-in one."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kmc.cli import build_parser
from kmc.errors import UsageError

WORKFLOW = Path(__file__).resolve().parents[2] / "docs" / "ci" / "kmc-regress.yml"
EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
RUN = re.compile(r"^(\s*)(?:-\s+)?run:\s*(.*)$")


def run_scripts(text: str) -> list[str]:
    """The shell text of every `run:` step: inline, or a block scalar (`|` keeps its line
    breaks, `>` folds the lines into one)."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        m = RUN.match(lines[i])
        i += 1
        if not m:
            continue
        indent, value = len(m.group(1)), m.group(2).strip()
        if not value.startswith(("|", ">")):
            out.append(value)
            continue
        block = []
        while i < len(lines) and (not lines[i].strip()
                                  or len(lines[i]) - len(lines[i].lstrip()) > indent):
            block.append(lines[i].strip())
            i += 1
        out.append((" " if value.startswith(">") else "\n").join(b for b in block if b))
    return out


def regress_commands(text: str) -> list[str]:
    """Every `kmc regress ...` command of the workflow's run steps, with each `${{ ... }}`
    expression replaced by `smoke` (what the tier expression yields on a push)."""
    cmds = []
    for script in run_scripts(text):
        for part in re.split(r"&&|\|\||;|\n", EXPRESSION.sub("smoke", script)):
            part = part.strip()
            if part.startswith("kmc regress"):
                cmds.append(part)
    return cmds


def parse(command: str):
    argv = shlex.split(command)
    assert argv[0] == "kmc", command
    return build_parser().parse_args(argv[1:])


def test_the_workflow_runs_kmc_regress_on_the_teams_own_suite():
    cmds = regress_commands(WORKFLOW.read_text())
    assert cmds, f"{WORKFLOW}: no `kmc regress` command in any run step"
    for cmd in cmds:
        args = parse(cmd)  # raises UsageError when kmc would refuse the command line
        assert args.command == "regress", cmd
        assert args.suite, f"{cmd!r} runs kmc's built-in suite, not the team's own"
        assert args.tier == "smoke", cmd


def test_the_check_rejects_a_command_kmc_refuses():
    bad = """
jobs:
  regress:
    steps:
      - name: kmc regress
        run: >
          kmc regress regressions.toml
          --tier ${{ github.event_name == 'schedule' && 'nightly' || 'smoke' }}
          --tire smoke
"""
    (cmd,) = regress_commands(bad)
    assert cmd == "kmc regress regressions.toml --tier smoke --tire smoke"
    with pytest.raises(UsageError, match="--tire"):
        parse(cmd)


def test_inline_and_literal_run_steps_are_read_too():
    text = ("steps:\n  - run: pip install kafka-model-checker && kmc regress s.toml --json\n"
            "  - run: |\n      echo hi\n      kmc regress --tier full\n")
    assert regress_commands(text) == ["kmc regress s.toml --json", "kmc regress --tier full"]
