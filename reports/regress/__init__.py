"""Regression checking: a suite of expected verdicts, run and compared (`kmc regress`).

- ``suite``: the TOML suite file, validated with file:line errors;
- ``expect``: expectations, observations and their comparison;
- ``stored``: the stored counterexamples, replayed through the Model contract;
- ``runner``: entries on a process pool, outcomes in entry order;
- ``text`` / ``markdown`` / ``junit`` / ``jsonout``: the console table and the artifacts;
- ``update``: `--update`, recording what the models do now.

The format and the CI recipe are in docs/regression.md.
"""
