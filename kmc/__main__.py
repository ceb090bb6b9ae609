import sys

from kmc.interrupt import interrupted, watch

watch()

try:  # a Ctrl-C while Python is still importing kmc ends as quietly as one later
    from kmc.cli import entry
except KeyboardInterrupt:
    sys.exit(interrupted())

entry()
