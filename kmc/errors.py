class UsageError(Exception):
    """Bad input: one line saying what is wrong and the fix; exit code 2."""
