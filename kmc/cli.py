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


def entry() -> None:
    watch()
    if sys.stdout is not None:
        sys.stdout = ClosablePipe(sys.stdout)
    sys.exit(main())


if __name__ == "__main__":
    entry()
