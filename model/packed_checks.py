"""Declaration checks of a packed model's ``Spec``, run once when the model is declared
(``PackedModel.__init__``), before any code is generated: every name, index set and
assignment target is checked, and an error names the rule (or variable, property) at
fault and the fix."""
from __future__ import annotations

import ast
import builtins
import keyword

from kmc.model.contract import ModelError

#: names the expression language gives a meaning of its own
RESERVED = {"all", "any", "True", "False", "None", "s"}


def check_spec(spec, model_name: str) -> None:
    where = f"packed model {model_name!r}"
    for name, var in spec.vars.items():
        _name_ok(name, f"{where}: variable {name!r}")
    for name, values in spec.indexes.items():
        _name_ok(name, f"{where}: index set {name!r}")
        if name in spec.vars:
            raise ModelError(f"{where}: index set {name!r} has the name of a variable: "
                             "rename one of them")
        if not values:
            raise ModelError(f"{where}: index set {name!r} is empty: give it the values "
                             "its rules range over")
    seen_rules = set()
    for name, over, when, then, _fault, _actor in spec.rules:
        at = f"{where}: rule {name!r}"
        if name in seen_rules:
            raise ModelError(f"{at} is declared twice: give each rule its own name")
        seen_rules.add(name)
        envs = _params(spec, over, at)
        for text in (when, *then.values()):
            if not isinstance(text, str):
                raise ModelError(f"{at}: {text!r} is not an expression: write it as a "
                                 "string of Python syntax, e.g. \"rm[r] == 'working'\"")
        for target in then:
            _target_ok(spec, target, envs, at)
    seen_props = set()
    for kind, name, expr in spec.props:
        if name in seen_props:
            raise ModelError(f"{where}: two properties are named {name!r}: give each "
                             "its own name")
        seen_props.add(name)
        if not isinstance(expr, str):
            raise ModelError(f"{where}: {kind} property {name!r} needs an expression "
                             "string")
    if spec.symmetry is not None:
        _symmetry_ok(spec, where)
    for values in spec.inits:
        unknown = sorted(set(values) - set(spec.vars))
        if unknown:
            raise ModelError(f"{where}: spec.init sets {unknown[0]!r}, which is not a "
                             "declared variable: declare it with spec.var first")


def _symmetry_ok(spec, where: str) -> None:
    index, arrays = spec.symmetry
    at = f"{where}: spec.symmetric({index!r}, ...)"
    if index not in spec.indexes:
        raise ModelError(f"{at} names no declared index set: declare spec.index({index!r}, "
                         "values) first")
    if not arrays:
        raise ModelError(f"{at} names no arrays: list the arrays that hold one element "
                         "per process")
    n = len(spec.indexes[index])
    for a in arrays:
        var = spec.vars.get(a)
        if var is None or var.size != n:
            raise ModelError(f"{at}: {a!r} is not an array of {n} elements, one per "
                             f"member of {index!r}: name arrays declared with size={n}")


def free_names(code: str) -> list:
    """Names a generated expression reads that nothing defines: not the state ``s``, a
    builtin, or a name bound inside the expression (a comprehension or lambda)."""
    tree = ast.parse(code, mode="eval")
    bound = {"s", "_chk"} | set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.comprehension):
            bound |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Lambda):
            bound |= {a.arg for a in node.args.args + node.args.kwonlyargs}
    return sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
                   and isinstance(n.ctx, ast.Load) and n.id not in bound})


def _name_ok(name, at: str) -> None:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) \
            or name in RESERVED:
        raise ModelError(f"{at} is not a usable name: use a Python identifier other "
                         f"than {', '.join(sorted(RESERVED))} and the keywords")


def _params(spec, over: dict, at: str) -> dict:
    """Rule parameter -> the values it ranges over."""
    out = {}
    for param, dom in over.items():
        _name_ok(param, f"{at}: parameter {param!r}")
        if param in spec.vars or param in spec.indexes:
            raise ModelError(f"{at}: parameter {param!r} hides the variable or index set "
                             "of that name: rename the parameter")
        if isinstance(dom, str):
            if dom not in spec.indexes:
                raise ModelError(f"{at}: over={{{param!r}: {dom!r}}} names no declared "
                                 f"index set: declare spec.index({dom!r}, values) first")
            out[param] = spec.indexes[dom]
        else:
            try:
                out[param] = tuple(dom)
            except TypeError:
                raise ModelError(f"{at}: parameter {param!r} ranges over {dom!r}: name an "
                                 "index set or give an iterable of values") from None
    return out


def _target_ok(spec, target, params: dict, at: str) -> None:
    try:
        node = ast.parse(target, mode="eval").body if isinstance(target, str) else None
    except SyntaxError:
        node = None
    if isinstance(node, ast.Name):
        name, index = node.id, None
    elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        name, index = node.value.id, node.slice
    else:
        raise ModelError(f"{at}: cannot assign to {target!r}: a target is a variable "
                         "(\"tm\") or one element of an array (\"rm[r]\")")
    var = spec.vars.get(name)
    if var is None:
        raise ModelError(f"{at} assigns to {name!r}, which is not a declared variable: "
                         f"declare it with spec.var({name!r}, ...)")
    if var.size is None and index is not None:
        raise ModelError(f"{at} assigns to {target!r}, but {name!r} is not an array: "
                         f"write \"{name}\"")
    if var.size is not None and index is None:
        raise ModelError(f"{at} assigns to the whole array {name!r}: assign one element, "
                         f"e.g. \"{name}[i]\" with i a rule parameter")
    if index is None:
        return
    if isinstance(index, ast.Constant) and isinstance(index.value, int):
        values = (index.value,)
    elif isinstance(index, ast.Name) and index.id in params:
        values = params[index.id]
    else:
        raise ModelError(f"{at} assigns to {target!r}: index an array with a rule "
                         "parameter or a whole number")
    bad = [v for v in values if not isinstance(v, int) or not 0 <= v < var.size]
    if bad:
        raise ModelError(f"{at} assigns to {target!r} with index {bad[0]!r}, outside "
                         f"{name}[0..{var.size - 1}]: fix the index set or the array size")
