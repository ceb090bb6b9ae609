"""Model mutation testing (`kmc mutate`): how many single-point bugs in a model's own code
do its properties catch?

- ``operators``: the mutation operators over a module's syntax tree;
- ``sources``: which files are mutated, their modules and the project's import graph;
- ``isolation``: loading one mutant in a worker process, the source tree untouched;
- ``pool``: worker processes with per-mutant time limits and an overall budget;
- ``worker``: running suite entries in a worker and recording what they observed;
- ``classify``: a mutant's outcome against the unmutated baseline, and the score;
- ``runner``: a whole run (plan, baseline, mutants, report object);
- ``report``: the text table and the Markdown summary.

docs/mutation.md explains how to run it and how to read the report.
"""
