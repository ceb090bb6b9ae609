from kmc.cli import entry

entry()
