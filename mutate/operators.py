"""Single-point mutation operators over a module's syntax tree.

``sites(tree)`` lists every place an operator applies, in one deterministic order (the
order of the source), each with an ``edit`` that changes the tree in place and returns the
function that undoes it. A mutant is named by ``(line, column, operator, n)``: ``n`` tells
apart the mutants one operator makes at one node (which operand is dropped, +1 or -1).

Operators:

- ``cmp``: a comparison flipped at its boundary or negated (``<`` / ``<=``, ``>`` /
  ``>=``, ``==`` / ``!=``, ``in`` / ``not in``, ``is`` / ``is not``);
- ``drop-and`` / ``drop-or``: one operand of ``and`` / ``or`` dropped;
- ``and-or``: ``and`` and ``or`` exchanged;
- ``drop-not``: a ``not`` removed;
- ``const``: an integer constant plus one (n=0) or minus one (n=1);
- ``bool``: ``True`` and ``False`` exchanged;
- ``drop-stmt``: one statement of a function body replaced by ``pass``;
- ``drop-field``: one field update of a ``_replace(...)`` call dropped;
- ``swap-if``: the branches of an ``if``/``else`` (statement or expression) exchanged.

Functions that only display a state (``format_*``, ``__repr__``, ``lanes``, ...) are not
mutated: no property reads them. Nor is a statement whose first line carries the comment
``# pragma: no mutate`` (mutmut's spelling), with everything inside it: for a check that
only raises on input no valid scenario gives (a scenario's arguments out of range, a
message kind no step sends), which unit tests cover and no model run can reach.
"""
from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field
from typing import Callable

OPERATORS = ("cmp", "drop-and", "drop-or", "and-or", "drop-not", "const", "bool",
             "drop-stmt", "drop-field", "swap-if")

#: functions that only display states or actions
DISPLAY_FUNCTIONS = frozenset({
    "__repr__", "__str__", "lanes", "state_to_json", "action_actor", "action_message",
    "explain", "describe_action",
})
DISPLAY_PREFIXES = ("format_", "_format", "draw_", "render_")
#: the comment that leaves a statement (and everything inside it) unmutated
PRAGMA = "pragma: no mutate"

_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
         ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
         ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
           ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is",
           ast.IsNot: "is not"}
#: statements drop-stmt leaves alone (a dropped return or definition is a crash, not a bug)
_KEEP = (ast.Pass, ast.Return, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
         ast.Global, ast.Nonlocal)
#: fields whose expressions are never evaluated as model logic
_SKIP_FIELDS = {"annotation", "returns", "decorator_list", "type_comment"}


@dataclass(frozen=True)
class Site:
    line: int
    col: int
    operator: str
    n: int
    description: str
    function: str  # the enclosing function ("" at module level)
    #: applies the mutation to the tree in place and returns the function that undoes it
    edit: Callable = field(default=None, compare=False, repr=False)

    def key(self) -> tuple:
        return (self.line, self.col, self.operator, self.n)


def is_display(name: str) -> bool:
    return name in DISPLAY_FUNCTIONS or name.startswith(DISPLAY_PREFIXES)


def sites(tree: ast.AST, source: str | None = None) -> list[Site]:
    """Every mutation site of ``tree``, sorted by (line, column, operator, n). With the
    module's ``source``, the statements marked ``# pragma: no mutate`` are left out."""
    out: list[Site] = []
    _visit(tree, None, None, None, "", out)
    if source is not None:
        spans = excluded_spans(tree, source)
        if spans:
            out = [s for s in out if not any(a <= s.line <= b for a, b in spans)]
    out.sort(key=lambda s: (s.key(), OPERATORS.index(s.operator)))
    return out


def pragma_lines(source: str) -> list[int]:
    """The lines whose comment carries ``# pragma: no mutate``."""
    return sorted(t.start[0] for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type == tokenize.COMMENT and PRAGMA in t.string)


def excluded_spans(tree: ast.AST, source: str) -> list[tuple[int, int]]:
    """(first, last) lines of every statement whose first line carries the pragma."""
    if PRAGMA not in source:
        return []
    marked = set(pragma_lines(source))
    return [(n.lineno, n.end_lineno) for n in ast.walk(tree)
            if isinstance(n, ast.stmt) and n.lineno in marked]


def _setter(parent, slot, index):
    """A function that puts a node in ``parent.slot[index]`` (or ``parent.slot``) and
    returns the node that was there."""
    def put(new):
        if index is None:
            old = getattr(parent, slot)
            setattr(parent, slot, new)
        else:
            seq = getattr(parent, slot)
            old, seq[index] = seq[index], new
        return old
    return put


def _visit(node, parent, slot, index, func, out):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if is_display(node.name):
            return
        func = node.name
    elif isinstance(node, ast.ClassDef) and is_display(node.name):
        return
    if parent is not None:
        out.extend(_node_sites(node, _setter(parent, slot, index), func))
    for name, value in ast.iter_fields(node):
        if name in _SKIP_FIELDS:
            continue
        if isinstance(value, list):
            if func and value and all(isinstance(v, ast.stmt) for v in value):
                out.extend(_stmt_sites(value, func))
            for i, v in enumerate(value):
                if isinstance(v, ast.AST):
                    _visit(v, node, name, i, func, out)
        elif isinstance(value, ast.AST):
            _visit(value, node, name, None, func, out)


def _site(node, op, n, text, func, edit) -> Site:
    return Site(node.lineno, node.col_offset, op, n, text, func, edit)


def _node_sites(node, put, func):
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = _FLIP.get(type(op))
            if new is not None:
                yield _site(node, "cmp", i, f"`{_SYMBOL[type(op)]}` -> `{_SYMBOL[new]}`",
                            func, _replace_item(node.ops, i, new()))
    elif isinstance(node, ast.BoolOp):
        word = "and" if isinstance(node.op, ast.And) else "or"
        for i, v in enumerate(node.values):
            yield _site(node, f"drop-{word}", i,
                        f"drop `{_short(v)}` from `{word}`", func, _drop_operand(node, i, put))
        other = ast.Or() if word == "and" else ast.And()
        yield _site(node, "and-or", 0, f"`{word}` -> `{'or' if word == 'and' else 'and'}`",
                    func, _set_attr(node, "op", other))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield _site(node, "drop-not", 0, f"`not {_short(node.operand)}` -> "
                    f"`{_short(node.operand)}`", func, _put(put, node.operand))
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        for n, delta in enumerate((1, -1)):
            yield _site(node, "const", n, f"{node.value} -> {node.value + delta}", func,
                        _set_attr(node, "value", node.value + delta))
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield _site(node, "bool", 0, f"{node.value} -> {not node.value}", func,
                    _set_attr(node, "value", not node.value))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "_replace":
        for i, kw in enumerate(node.keywords):
            if kw.arg is not None:
                yield _site(node, "drop-field", i, f"drop the update `{kw.arg}=`", func,
                            _drop_item(node.keywords, i))
    elif isinstance(node, ast.IfExp):
        yield _site(node, "swap-if", 0, "exchange the branches of `... if ... else ...`",
                    func, _swap(node))
    elif isinstance(node, ast.If) and node.orelse:
        yield _site(node, "swap-if", 0, f"exchange the branches of `if {_short(node.test)}`",
                    func, _swap(node))


def _stmt_sites(body, func):
    for i, st in enumerate(body):
        if isinstance(st, _KEEP):
            continue
        if i == 0 and isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) \
                and isinstance(st.value.value, str):
            continue  # a docstring
        yield _site(st, "drop-stmt", 0, f"drop `{_short(st)}`", func, _drop_stmt(body, i))


# ---- edits: each applies in place and returns its undo --------------------------------
def _replace_item(seq, i, new):
    def edit():
        old, seq[i] = seq[i], new
        return lambda: seq.__setitem__(i, old)
    return edit


def _drop_item(seq, i):
    def edit():
        old = seq.pop(i)
        return lambda: seq.insert(i, old)
    return edit


def _set_attr(node, name, value):
    def edit():
        old = getattr(node, name)
        setattr(node, name, value)
        return lambda: setattr(node, name, old)
    return edit


def _put(put, new):
    def edit():
        old = put(new)
        return lambda: put(old)
    return edit


def _drop_operand(node, i, put):
    def edit():
        rest = node.values[:i] + node.values[i + 1:]
        if len(rest) == 1:  # `a and b` without b is `a`
            old = put(rest[0])
            return lambda: put(old)
        old_values, node.values = node.values, rest
        return lambda: setattr(node, "values", old_values)
    return edit


def _swap(node):
    def edit():
        node.body, node.orelse = node.orelse, node.body

        def undo():
            node.body, node.orelse = node.orelse, node.body
        return undo
    return edit


def _drop_stmt(body, i):
    def edit():
        old = body[i]
        body[i] = ast.copy_location(ast.Pass(), old)
        return lambda: body.__setitem__(i, old)
    return edit


def _short(node, width: int = 40) -> str:
    """The first line of ``node``'s source, cut to ``width`` characters."""
    text = ast.unparse(node).splitlines()[0]
    if isinstance(node, ast.stmt) and hasattr(node, "body"):
        text = text.rstrip(":")
    return text if len(text) <= width else text[:width - 3] + "..."
