"""The mutation operators: each one applied to a small function changes its code and its
behaviour as described, and its undo restores the tree exactly."""
import ast
import textwrap

import pytest

from kmc.mutate.isolation import mutants_of, mutated_tree
from kmc.mutate.operators import OPERATORS, sites

# operator -> (function source, n, the mutated function's body, arguments, result before,
# result after)
CASES = {
    "cmp": ("def f(a, b):\n    return a < b", 0, "return a <= b", (1, 1), False, True),
    "drop-and": ("def f(a, b):\n    return a and b", 1, "return a", (True, False), False,
                 True),
    "drop-or": ("def f(a, b, c):\n    return a or b or c", 0, "return b or c",
                (True, False, False), True, False),
    "and-or": ("def f(a, b):\n    return a and b", 0, "return a or b", (True, False), False,
               True),
    "drop-not": ("def f(a):\n    return not a", 0, "return a", (True,), False, True),
    "const": ("def f(a):\n    return a + 1", 1, "return a + 0", (1,), 2, 1),
    "bool": ("def f():\n    return True", 0, "return False", (), True, False),
    "drop-stmt": ("def f(a):\n    a = a * 2\n    return a", 0, "pass\n    return a", (3,),
                  6, 3),
    "drop-field": ("def f(p):\n    return p._replace(x=1, y=2)", 0, "return p._replace(y=2)",
                   None, None, None),
    "swap-if": ("def f(a):\n    if a:\n        return 1\n    else:\n        return 2", 0,
                "if a:\n        return 2\n    else:\n        return 1", (True,), 1, 2),
}


def test_every_operator_has_a_case():
    assert set(CASES) == set(OPERATORS)


def _call(tree, args):
    ns = {}
    exec(compile(ast.fix_missing_locations(tree), "<toy>", "exec"), ns)
    return ns["f"](*args)


@pytest.mark.parametrize("op", sorted(CASES))
def test_operator_applies_and_undoes(op):
    source, n, body, args, before, after = CASES[op]
    tree = ast.parse(source)
    original = ast.dump(tree)
    [site] = [s for s in sites(tree) if s.operator == op and s.n == n]
    undo = site.edit()
    assert ast.unparse(tree) == source.split("\n", 1)[0] + "\n    " + body
    assert ast.dump(tree) != original
    if args is not None:
        assert _call(tree, args) == after
    undo()
    assert ast.dump(tree) == original
    if args is not None:
        assert _call(tree, args) == before


def test_if_expression_swap():
    tree = ast.parse("def f(a):\n    return 1 if a else 2")
    [site] = [s for s in sites(tree) if s.operator == "swap-if"]
    undo = site.edit()
    assert _call(tree, (True,)) == 2
    undo()
    assert _call(tree, (True,)) == 1


def test_docstrings_display_functions_and_returns_are_left_alone():
    source = textwrap.dedent('''
        def f(a):
            """doc"""
            return a

        def format_state(s):
            return s < 1

        class M:
            def __repr__(self):
                return str(1 < 2)
    ''')
    assert [(s.operator, s.line) for s in sites(ast.parse(source))] == []


def test_sites_are_ordered_and_deterministic():
    source = "def f(a, b):\n    x = a < 1 and b > 2\n    return x\n"
    keys = [s.key() for s in sites(ast.parse(source))]
    assert keys == sorted(keys)
    assert keys == [s.key() for s in sites(ast.parse(source))]
    assert len(set(keys)) == len(keys)


def test_mutant_ids_name_file_line_column_operator_and_n(tmp_path):
    path = tmp_path / "m.py"
    source = "def f(a):\n    return a < 1\n"
    path.write_text(source)
    ms = mutants_of(str(path), "m.py", "m", source)
    assert [m.id for m in ms] == ["m.py:2:11:cmp:0", "m.py:2:15:const:0",
                                  "m.py:2:15:const:1"]
    tree = mutated_tree(ms[2], source)
    assert ast.unparse(tree).endswith("return a < 0")
    assert path.read_text() == source  # only the parsed copy changed


def test_a_statement_marked_no_mutate_is_left_alone_with_everything_inside():
    src = textwrap.dedent("""\
        def f(a):
            if a < 0:
                raise ValueError(  # pragma: no mutate
                    f"need a >= {0 + 1}")
            return a + 1
        """)
    tree = ast.parse(src)
    marked = {(s.line, s.operator) for s in sites(tree, src)}
    unmarked = {(s.line, s.operator) for s in sites(ast.parse(src))}
    # the raise (line 3), its message (line 4) are gone; the check and the return stay
    assert unmarked - marked == {(3, "drop-stmt"), (4, "const")}
    assert {(2, "cmp"), (2, "const"), (5, "const")} <= marked
