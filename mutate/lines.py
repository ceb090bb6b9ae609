"""Where a mutant sits in its file's statements and functions, and whether a run that
executed some lines of the file executed the mutant: a line tracer records the first
line of each statement it runs (and each function's first line), while a mutant is
placed at the (line, column) of the node it changes.
"""
from __future__ import annotations

from kmc.mutate.isolation import Mutant


def statement_lines(source: str) -> dict:
    """(line, column) of every node of ``source`` -> the first line of the innermost
    statement holding it. A node on a continuation line may have no instruction of its
    own (a folded constant), but its statement's first line runs whenever it does."""
    import ast

    nodes = [n for n in ast.walk(ast.parse(source)) if hasattr(n, "lineno")]
    spans = [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset), n.lineno)
             for n in nodes if isinstance(n, ast.stmt)]
    out = {}
    for node in nodes:
        pos = (node.lineno, node.col_offset)
        inner = [sp for sp in spans if sp[0] <= pos <= sp[1]]
        if inner:
            out[pos] = max(inner, key=lambda sp: sp[0])[2]
    return out


def function_lines(source: str) -> dict:
    """(line, column) of every node of ``source`` inside a function's body -> the first
    line of the innermost function (or lambda) holding it: the ``co_firstlineno`` of its
    code, a decorator's line for a decorated function."""
    import ast

    spans = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([n.lineno] + [d.lineno for d in n.decorator_list])
            body = n.body[0]
            spans.append(((body.lineno, body.col_offset),
                          (n.end_lineno, n.end_col_offset), first))
        elif isinstance(n, ast.Lambda):
            spans.append(((n.body.lineno, n.body.col_offset),
                          (n.end_lineno, n.end_col_offset), n.lineno))
    out = {}
    for node in ast.walk(ast.parse(source)):
        if not hasattr(node, "lineno"):
            continue
        pos = (node.lineno, node.col_offset)
        inner = [sp for sp in spans if sp[0] <= pos <= sp[1]]
        if inner:
            out[pos] = max(inner, key=lambda sp: sp[0])[2]
    return out


def reaches(m: Mutant, lines: set, stmt_line: dict) -> bool:
    """Did a run that executed ``lines`` (of ``m``'s file) execute ``m``? A mutant at
    module level runs at every import, so every run executes it."""
    return not m.function or m.line in lines \
        or stmt_line.get((m.line, m.col), m.line) in lines
