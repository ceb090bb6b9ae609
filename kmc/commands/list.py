"""`kmc list`: scenarios, their parameters, variants (the default marked), properties with
their descriptions, and each variant's expected verdict as kmc's regression suite records
it (the suite is the one source of expected verdicts)."""
from __future__ import annotations

import json

from kmc import catalog

NAME = "list"
HELP = "list scenarios with their parameters, variants, properties and expected verdicts"


def add_arguments(p):
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _recorded() -> dict:
    from kmc.reports.regress.suite import SuiteError, builtin_suite, read_suite, recorded

    try:
        return recorded(read_suite(builtin_suite()))
    except SuiteError:  # an install without its suite: list the scenarios all the same
        return {}


def expected(sc, variant: str, table: dict) -> str:
    """The suite's recorded verdict for a variant, with the entry's note and bounds."""
    e = table.get((sc.name, variant)) or (table.get((sc.name, None))
                                          if variant == sc.variant_default else None)
    if e is None:
        return ""
    text = e.expect.describe()
    if e.bounds:
        text += " within " + ", ".join(f"{k}={v}" for k, v in e.bounds.items())
    return f"{text} — {e.note}" if e.note else text


def describe(sc, table: dict | None = None) -> dict:
    table = _recorded() if table is None else table
    model = sc.build(sc.variant_default, {p.name: p.default for p in sc.params})
    props = list(model.properties())
    return {
        "name": sc.name, "family": sc.family, "description": sc.description,
        "variants": list(sc.variants), "default_variant": sc.variant_default,
        "params": {p.name: {"default": p.default, "help": p.help, "min": p.minimum,
                            "max": p.maximum} for p in sc.params},
        "properties": {pr.name: pr.kind for pr in props},
        "property_descriptions": {pr.name: pr.description for pr in props},
        "expectations": {v: expected(sc, v, table) for v in sc.variants},
        "source": sc.source,
    }


def run(args) -> int:
    table = _recorded()
    rows = [describe(sc, table) for sc in catalog.scenarios().values()]
    if args.json:
        print(json.dumps({"scenarios": rows}, indent=1))
        return 0
    width = max([22] + [len(d["name"]) + 2 for d in rows])  # names never run into text
    pad = " " * width
    for d in rows:
        params = " ".join(f"{k}={v['default']}" for k, v in d["params"].items()) or "-"
        origin = "" if d["source"] == "built-in" else f"  [{d['source']}]"
        print(f"{d['name']:<{width}}{d['description']}{origin}")
        print(f"{pad}params: {params}")
        print(f"{pad}variants (* default):")
        for v in d["variants"]:
            mark = "*" if v == d["default_variant"] else " "
            note = d["expectations"][v]
            print(f"{pad}  {mark} {v}" + (f": {note}" if note else ""))
        print(f"{pad}properties:")
        for n, k in d["properties"].items():
            desc = d["property_descriptions"][n]
            print(f"{pad}  {n} ({k})" + (f": {desc}" if desc else ""))
    return 0
