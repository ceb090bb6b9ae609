"""`kmc list`: scenarios, their parameters, variants (the default marked), properties with
their descriptions, and each variant's expected verdict as kmc's regression suite records
it (the suite is the one source of expected verdicts).

A Kafka scenario also shows its control plane. In ``--json``: ``plane`` is the plane a
run takes without ``-p plane`` ("zk" or "kraft"; null for a scenario that is not
Kafka's), and ``planes`` maps every plane the scenario runs on to its ``variants``,
``default_variant``, ``expectations``, the parameters not used there (``unused``), the
ranges that differ from ``params`` (``ranges``: name -> [min, max]) and the
``properties`` a run there checks (name -> kind). A scenario with
one plane has one key; ``variants``, ``default_variant`` and ``expectations`` stay
those of ``plane``."""
from __future__ import annotations

import json

from kmc import catalog
from kmc.model.kafka.planes import planes_of

NAME = "list"
HELP = "list scenarios with their parameters, variants, properties and expected verdicts"


def add_arguments(p):
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _recorded() -> dict:
    from kmc.reports.regress.suite import SuiteError, builtin_suite, read_suite, recorded

    try:
        table = catalog.scenarios()
        return recorded(read_suite(builtin_suite()),
                        lambda name: getattr(table.get(name), "selector", ""))
    except SuiteError:  # an install without its suite: list the scenarios all the same
        return {}


def expected(sc, variant: str, table: dict) -> str:
    """The suite's recorded verdict for a variant, with the entry's note and bounds."""
    e = table.get((sc.name, variant)) or (table.get((sc.name, None))
                                          if variant == sc.variant_default else None)
    if e is None:
        return ""
    text = e.expect.describe()
    other = [f"{k}={v}" for k, v in e.params.items() if k != sc.selector] + \
        [k if v is True else f"{k}={v}" for k, v in e.options.items()]
    if other:  # no entry runs the defaults: say what the quoted one sets
        text += " with " + ", ".join(other)
    if e.bounds:
        text += " within " + ", ".join(f"{k}={v}" for k, v in e.bounds.items())
    return f"{text} — {e.note}" if e.note else text


def _param(p) -> dict:
    """A parameter for --json: a range only for a whole number, choices for a string."""
    whole = isinstance(p.default, int) and not isinstance(p.default, bool)
    return {"default": p.default, "help": p.help,
            "min": p.minimum if whole else None, "max": p.maximum if whole else None,
            "choices": list(p.choices)}


def describe(sc, table: dict | None = None) -> dict:
    table = _recorded() if table is None else table
    model = sc.build(sc.variant_default, {p.name: p.default for p in sc.params})
    props = list(model.properties())
    return {
        "name": sc.name, "family": sc.family, "description": sc.description,
        "variants": list(sc.variants), "default_variant": sc.variant_default,
        "params": {p.name: _param(p) for p in sc.params},
        "properties": {pr.name: pr.kind for pr in props},
        "property_descriptions": {pr.name: pr.description for pr in props},
        "expectations": {v: expected(sc, v, table) for v in sc.variants},
        "source": sc.source,
        **_planes(sc, model, table),
    }


def _planes(sc, model, table: dict) -> dict:
    plane, sets = planes_of(sc, model)
    out = {}
    for name, vs in sets.items():
        on = model if name == plane else sc.build(*sc.resolve(None, {sc.selector: name}))
        out[name] = {"variants": list(vs.variants), "default_variant": vs.default_variant,
                     "expectations": {v: expected(sc, v, table) for v in vs.variants},
                     "unused": list(vs.unused),
                     "ranges": {p.name: [p.minimum, p.maximum] for p in vs.params},
                     "properties": {pr.name: pr.kind for pr in on.properties()}}
    return {"plane": plane, "planes": out}


def _rows(table: dict) -> list:
    """Every scenario described; a plugin's scenario whose model cannot be built is
    skipped with a warning (as catalog.scenarios skips a plugin that fails to load):
    one broken plugin never hides the others. A built-in's failure stays an internal
    error."""
    rows = []
    for sc in catalog.scenarios().values():
        if sc.source == "built-in":
            rows.append(describe(sc, table))
            continue
        try:
            rows.append(describe(sc, table))
        except Exception as e:  # the plugin's own code
            catalog._warn(f"scenario {sc.name!r} of {sc.source} cannot be built "
                          f"({type(e).__name__}: {e}); skipped")
    return rows


def run(args) -> int:
    table = _recorded()
    rows = _rows(table)
    if args.json:
        print(json.dumps({"scenarios": rows}, indent=1))
        return 0
    width = max([22] + [len(d["name"]) + 2 for d in rows])  # names never run into text
    pad = " " * width
    for d in rows:
        params = " ".join(f"{k}={v['default']}" for k, v in d["params"].items()) or "-"
        origin = "" if d["source"] == "built-in" else f"  [{d['source']}]"
        _say(f"{d['name']:<{width}}{d['description']}{origin}")
        _say(f"{pad}params: {params}")
        if d["plane"] is not None:
            _say(f"{pad}{_plane_line(d)}")
        _variants(pad, "variants (* default):", d)
        for name, other in d["planes"].items():
            if name != d["plane"]:
                _variants(pad, f"variants with -p plane={name} (* default):", other)
        _say(f"{pad}properties:")
        for n, k in d["properties"].items():
            desc = d["property_descriptions"][n]
            _say(f"{pad}  {n} ({k})" + (f": {desc}" if desc else ""))
    return 0


def _plane_line(d: dict) -> str:
    """``plane: zk`` or ``planes: zk (default), kraft (-p plane=kraft); ...``"""
    if len(d["planes"]) == 1:
        return f"plane: {d['plane']}"
    parts = [f"{d['plane']} (default)"] + [f"{n} (-p plane={n})" for n in d["planes"]
                                           if n != d["plane"]]
    unused = [f"{', '.join(info['unused'])} not used with plane={n}"
              for n, info in d["planes"].items() if info["unused"]]
    return "planes: " + ", ".join(parts) + ("; " + "; ".join(unused) if unused else "")


def _variants(pad: str, title: str, d: dict) -> None:
    _say(f"{pad}{title}")
    for v in d["variants"]:
        mark = "*" if v == d["default_variant"] else " "
        note = d["expectations"][v]
        _say(f"{pad}  {mark} {v}" + (f": {note}" if note else ""))


def _say(line: str) -> None:
    """A line of the listing, a plugin's control characters shown as escapes (a name or
    a description never moves the cursor or rings the terminal)."""
    from kmc.reports.show import printable
    print(printable(line))
