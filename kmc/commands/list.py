"""`kmc list`: scenarios, their parameters, variants and properties."""
from __future__ import annotations

import json

from kmc import catalog

NAME = "list"
HELP = "list scenarios with their parameters, variants and properties"


def add_arguments(p):
    p.add_argument("--json", action="store_true", help="print one JSON object")


def describe(sc) -> dict:
    model = sc.build(sc.variant_default, {p.name: p.default for p in sc.params})
    return {
        "name": sc.name, "family": sc.family, "description": sc.description,
        "variants": list(sc.variants), "default_variant": sc.variant_default,
        "params": {p.name: {"default": p.default, "help": p.help, "min": p.minimum,
                            "max": p.maximum} for p in sc.params},
        "properties": {pr.name: pr.kind for pr in model.properties()},
        "expectations": dict(sc.expectations),
    }


def run(args) -> int:
    table = [describe(sc) for sc in catalog.scenarios().values()]
    if args.json:
        print(json.dumps({"scenarios": table}, indent=1))
        return 0
    for d in table:
        params = " ".join(f"{k}={v['default']}" for k, v in d["params"].items()) or "-"
        print(f"{d['name']:<22} {d['description']}")
        print(f"{'':<22} params: {params}")
        print(f"{'':<22} variants: {', '.join(d['variants'])}")
        print(f"{'':<22} properties: " + ", ".join(f"{n} ({k})" for n, k in
                                                   d["properties"].items()))
    return 0
