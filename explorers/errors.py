class ExplorerError(ValueError):
    """Bad input to an engine (e.g. unreachable Spark master, foreign checkpoint dir).

    One line saying what is wrong and how to fix it; the CLI turns it into exit code 2."""
