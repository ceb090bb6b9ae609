"""`kmc`: the command line. Subcommands live in kmc/commands/, one module each, with
NAME, HELP, add_arguments(parser) and run(args) -> exit code.

Exit codes: 0 all properties hold and all witnesses were found; 1 a violation or a missing
witness; 2 bad usage or bad input (one line, never a traceback); 3 internal error; 4 the
run stopped at a bound with nothing violated and some property undecided.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import traceback

from kmc.commands import check as check_command
from kmc.errors import UsageError
from kmc.interrupt import interrupted, seen, watch
from kmc.pipes import ClosablePipe
from kmc.reports.inputs import printable


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print the whole usage and exit 2
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _commands():
    import kmc.commands as pkg
    mods = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            mods.append(importlib.import_module(f"kmc.commands.{info.name}"))
    return mods


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kmc", description="kmc: the Kafka topic-lifecycle model checker",
                epilog=check_command.EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"kmc {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    order = ["list", "check"]
    mods = sorted(_commands(), key=lambda m: (order.index(m.NAME) if m.NAME in order
                                              else len(order), m.NAME))
    for mod in mods:
        sp = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP,
                            epilog=getattr(mod, "EPILOG", None),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(sp)
        sp.set_defaults(_run=mod.run)
    return p


def main(argv=None) -> int:
    try:
        args, extra = build_parser().parse_known_args(argv)
        if extra:  # named with the subcommand whose help lists its options
            cmd = f"kmc {args.command}" if getattr(args, "command", None) else "kmc"
            raise UsageError(f"unrecognized arguments: {' '.join(extra)} "
                             f"(see `{cmd} --help`)")
        if not getattr(args, "_run", None):
            raise UsageError("no command given: try `kmc list` or `kmc check twophase`")
        _check_cwd()
        code = int(args._run(args))
        return interrupted() if seen() else code  # a Ctrl-C Python dropped (watch)
    except UsageError as e:
        if e.__cause__ is not None and os.environ.get("KMC_DEBUG"):
            traceback.print_exception(e.__cause__)  # a user model's own failure
        print(f"kmc: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:  # a stream other than stdout (which ClosablePipe keeps quiet)
        return 3
    except Exception as e:  # an internal error: say so in one line, traceback on demand
        if seen() and not os.environ.get("KMC_DEBUG"):
            return interrupted()  # a Ctrl-C that a library turned into its own error
        if os.environ.get("KMC_DEBUG"):
            traceback.print_exc()
            return 3
        print(f"kmc: internal error: {type(e).__name__}: {one_line(str(e))} "
              "(rerun with KMC_DEBUG=1 for the traceback)", file=sys.stderr)
        return 3


def _check_cwd() -> None:
    """A working directory deleted under the shell makes every relative path and every
    worker process fail in its own way (an internal error, a regression entry that
    "crashed"): one line up front instead."""
    try:
        os.getcwd()
    except FileNotFoundError:
        raise UsageError("the current directory no longer exists (it was deleted): cd to "
                         "an existing directory and rerun") from None


def one_line(text: str) -> str:
    """The message on one line: a line break inside (from a user's argument, say) is shown
    escaped, so an error is always exactly one line."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("kafka-model-checker")
    except Exception:
        return "dev"


def terminal_safe(text: str) -> str:
    """``text`` as a terminal should get it: line breaks and tabs kept, every other
    character that is not printable escaped (``reports.inputs.printable``): names and
    states come from models, and an escape sequence, a carriage return or a direction
    override in them would act on the reader's terminal instead of being read. JSON
    output is unchanged: its strings escape control characters already."""
    return printable(text, "\n\t")


class _Stream(ClosablePipe):
    """A standard stream whose write failing in any other way (a full disk, /dev/full,
    an I/O error) is noted and silenced like a closed pipe. On standard error that loses
    diagnostics only: the run's result and exit code stay. On standard output the result
    is lost, and ``entry`` says so (exit 2) instead of an internal error, a traceback at
    exit or Python's own exit code 120."""

    failed = None  # the OSError, if a write or flush failed other than by a closed pipe

    def write(self, text):
        text = terminal_safe(text)
        try:
            return super().write(text)
        except OSError as e:
            self.failed = self.failed or e
            self._silence()
            return len(text)

    def flush(self):
        try:
            super().flush()
        except OSError as e:
            self.failed = self.failed or e
            self._silence()


def _standard_streams() -> tuple:
    """Standard output and error made safe to write whatever the shell handed over.

    - A descriptor closed at start (``>&-``, ``2>&-``) leaves Python a stream of None:
      ``json.dump`` to it fails, and ``print(file=None)`` writes to standard output, so
      the progress lines would land in ``--json`` output. It is opened on the null
      device, which also keeps the next file kmc opens from taking its number.
    - An encoding that cannot spell kmc's output (PYTHONIOENCODING=ascii, a latin-1
      terminal) writes what it cannot spell as backslash escapes, as Python does on
      standard error, instead of failing the run after it finished.
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    streams = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            stream = open(os.devnull, "w")
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
        streams.append(_Stream(stream))
    return tuple(streams)


def _stop_spark_jvm(code):
    """Stop the JVM a Spark run of this process launched and wait for it, so that nothing
    kmc started outlives the command; a Ctrl-C meanwhile kills it."""
    if "pyspark" not in sys.modules:
        return code
    from kmc.api import stop_engines
    try:
        stop_engines()
    except KeyboardInterrupt:
        return interrupted()
    return code


def entry() -> None:
    watch()
    out, sys.stderr = _standard_streams()
    sys.stdout = out
    try:
        code = main()
    except SystemExit as e:  # --help and --version print, then exit through argparse
        code = e.code
    out.flush()
    code = _stop_spark_jvm(code)
    if out.failed is not None:
        print(f"kmc: error: standard output could not be written "
              f"({out.failed.strerror or out.failed}), what it shows is incomplete: free "
              "space or send it elsewhere, and rerun", file=sys.stderr)
        code = 2
    sys.exit(code)


if __name__ == "__main__":
    entry()
