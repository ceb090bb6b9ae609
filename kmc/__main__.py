import sys

try:  # a Ctrl-C while Python is still importing kmc ends as quietly as one later
    from kmc.cli import entry
except KeyboardInterrupt:
    print("kmc: interrupted", file=sys.stderr)
    sys.exit(130)

entry()
