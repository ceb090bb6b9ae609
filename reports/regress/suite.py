"""The regression suite file (TOML): parsing and validation, errors with file and line.

A suite is a list of ``[[entry]]`` tables, each a run (scenario, variant, params,
explorer, bounds) plus the expectation recorded by ``kmc regress --update``. The format
is documented in docs/regression.md. Validation is eager: every mistake is reported as
``FILE:LINE: what is wrong and the fix`` before anything runs.
"""
from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field

from kmc.reports.regress.expect import Expectation, parse_expectation

TIERS = ("smoke", "full")
EXPLORERS = ("bfs", "dfs", "simulate", "spark")
DEFAULT_TRACES_DIR = "regressions"
TOP_KEYS = ("version", "traces", "entry")
RUN_KEYS = ("id", "scenario", "variant", "params", "explorer", "bounds", "tier", "note",
            "symmetry", "check_symmetry", "deadlock", "z3", "stop_on_violation", "seed",
            "walks", "walk_length")
EXPECT_KEYS = ("expect", "length", "states", "witnesses", "counts_reason")
BOUNDS = ("max_states", "max_depth", "time_limit")


class SuiteError(ValueError):
    """A bad suite file. ``str()`` is one line: ``FILE:LINE: problem and fix``."""

    def __init__(self, message: str, path: str, line: int | None = None):
        self.path, self.line, self.problem = path, line, message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}")


@dataclass
class Entry:
    id: str
    scenario: str
    variant: str | None = None
    params: dict = field(default_factory=dict)
    explorer: str = "bfs"
    bounds: dict = field(default_factory=dict)
    #: extra keyword arguments for the check (symmetry, deadlock, z3, seed, walks, ...)
    options: dict = field(default_factory=dict)
    tier: str = "full"
    note: str = ""
    expect: Expectation | None = None  # None: not recorded yet (`kmc regress --update`)
    line: int | None = None  # line of the entry's [[entry]] header
    key_lines: dict = field(default_factory=dict)  # key -> line, for later errors

    def in_tier(self, tier: str) -> bool:
        """`full` runs everything; `smoke` only the entries marked smoke."""
        return tier == "full" or self.tier == tier


@dataclass
class Suite:
    path: str
    text: str
    entries: list[Entry]
    traces_dir: str  # absolute: where the stored counterexamples live

    def select(self, tier: str) -> list[Entry]:
        return [e for e in self.entries if e.in_tier(tier)]


def builtin_suite() -> str:
    """Path of kmc's own suite, shipped with the package (``kmc regress`` with no path)."""
    import kmc.regressions

    return os.path.join(os.path.dirname(kmc.regressions.__file__), "regressions.toml")


def recorded(suite: Suite, selector=lambda scenario: "") -> dict:
    """(scenario, variant) -> the entry `kmc list` quotes for that pair: the first
    complete BFS run of the default parameters (no bounds, no options, no parameter but
    the scenario's ``selector(scenario)``, its plane) with a recorded expectation, else
    the first entry with one. The suite is the one source of expected verdicts."""
    out: dict = {}
    for e in suite.entries:
        if e.expect is None:
            continue
        key = (e.scenario, e.variant)
        plain = not e.bounds and not e.options and e.explorer == "bfs" and \
            set(e.params) <= {selector(e.scenario)}
        if key not in out or (plain and not out[key][1]):
            out[key] = (e, plain)
    return {k: e for k, (e, _plain) in out.items()}


def read_suite(path: str) -> Suite:
    from kmc.reports.inputs import InputError, check_depth, read_text

    try:
        text = read_text(path, "suite file")
        check_depth(text, f"suite file {path}")
    except InputError as e:
        raise SuiteError(str(e).replace(f" {path}", "", 1), path) from None
    return parse_suite(text, path)


def parse_suite(text: str, path: str) -> Suite:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = re.search(r"\(at line (\d+), column \d+\)", msg)
        line = int(m.group(1)) if m else None
        problem = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        raise SuiteError(f"not valid TOML: {problem}", path, line) from None
    lines = LineMap(text)
    for key in data:
        if key not in TOP_KEYS:
            raise SuiteError(f"unknown top-level key {key!r}: a suite has `traces = DIR` "
                             "and [[entry]] tables", path, lines.top_key(key))
    version = data.get("version", 1)
    if version != 1:
        raise SuiteError(f"suite version {version!r} is not supported: this kmc reads "
                         "version 1", path, lines.top_key("version"))
    traces = data.get("traces", DEFAULT_TRACES_DIR)
    if not isinstance(traces, str) or not traces.strip() or "\0" in traces:
        raise SuiteError("`traces` must be a directory path (a string)", path,
                         lines.top_key("traces"))
    raw_entries = data.get("entry", [])
    if not isinstance(raw_entries, list):
        raise SuiteError("`entry` must be an array of tables: write each entry under "
                         "an [[entry]] header", path, lines.top_key("entry"))
    if len(lines.headers) != len(raw_entries):
        # the line of every entry (errors, --update's edits) is found by its header line
        raise SuiteError(f"{len(raw_entries)} {'entry' if len(raw_entries) == 1 else 'entries'}"
                         f" but {len(lines.headers)} [[entry]] header line"
                         f"{'' if len(lines.headers) == 1 else 's'}: write each entry "
                         "under its own [[entry]] line (not as entry = [...], and no "
                         "such line inside a multi-line string)", path,
                         lines.top_key("entry"))
    base = os.path.dirname(os.path.abspath(path))
    entries, seen = [], {}
    for i, raw in enumerate(raw_entries):
        at = lines.entry(i)
        entry = _entry(raw, path, at, lines, i)
        sc = entry.scenario
        if (sc.endswith(".toml") or os.sep in sc) and not os.path.isabs(sc):
            entry.scenario = os.path.join(base, sc)  # a scenario file beside the suite
        if entry.id in seen:
            raise SuiteError(f"entry id {entry.id!r} is used twice (first at line "
                             f"{seen[entry.id]}): give each entry a unique `id`", path,
                             lines.key(i, "id") or at)
        seen[entry.id] = at
        entries.append(entry)
    return Suite(path, text, entries, os.path.normpath(os.path.join(base, traces)))


def _entry(raw, path, at, lines, i) -> Entry:
    def fail(msg, key=None):
        raise SuiteError(msg, path, (lines.key(i, key) if key else None) or at)

    if not isinstance(raw, dict):
        fail("an entry must be a table: write it under an [[entry]] header")
    for key in raw:
        if key not in RUN_KEYS and key not in EXPECT_KEYS:
            fail(f"unknown key {key!r} in an entry: use {', '.join(RUN_KEYS + EXPECT_KEYS)}",
                 key)
    scenario = raw.get("scenario")
    if scenario is not None and not isinstance(scenario, str):
        fail("`scenario` must be a string: scenario = \"NAME\" (a name that `kmc list` "
             "shows, or a file)", "scenario")
    if not scenario:
        fail("entry without `scenario = \"NAME\"` (a name that `kmc list` shows)")
    e = Entry(id="", scenario=scenario, line=at,
              key_lines={k: lines.key(i, k) or at for k in ("scenario", "variant", "params")})
    e.variant = _opt_str(raw, "variant", fail)
    params = raw.get("params", {})
    if not isinstance(params, dict):
        fail("`params` must be a table, e.g. params = { rm = 3 }", "params")
    for k, v in params.items():
        if isinstance(v, (dict, list)):
            fail(f"parameter {k!r} must be a number, string or boolean", "params")
    e.params = dict(params)
    e.explorer = _opt_str(raw, "explorer", fail) or "bfs"
    if e.explorer not in EXPLORERS:
        fail(f"unknown explorer {e.explorer!r}: use one of {', '.join(EXPLORERS)}",
             "explorer")
    bounds = raw.get("bounds", {})
    if not isinstance(bounds, dict):
        fail("`bounds` must be a table, e.g. bounds = { max_states = 100000 }", "bounds")
    for k, v in bounds.items():
        if k not in BOUNDS:
            fail(f"unknown bound {k!r}: use {', '.join(BOUNDS)}", "bounds")
        whole = k != "time_limit"  # seconds may be fractional, as on the command line
        if isinstance(v, bool) or not isinstance(v, int if whole else (int, float)) or \
                not v > 0 or v == float("inf"):
            fail(f"bound {k} must be a positive {'integer' if whole else 'number'}, "
                 f"got {v!r}", "bounds")
    e.bounds = dict(bounds)
    for k in ("symmetry", "check_symmetry", "deadlock", "z3", "stop_on_violation"):
        if k in raw:
            if not isinstance(raw[k], bool):
                fail(f"`{k}` must be true or false", k)
            e.options[k] = raw[k]
    for k in ("seed", "walks", "walk_length"):
        if k in raw:
            v = raw[k]
            if isinstance(v, bool) or not isinstance(v, int) or v < (0 if k == "seed" else 1):
                fail(f"`{k}` must be a {'non-negative' if k == 'seed' else 'positive'} "
                     "integer", k)
            if e.explorer != "simulate":
                fail(f"`{k}` is a simulation option: it needs explorer = \"simulate\"", k)
            e.options[k] = v
    e.tier = _opt_str(raw, "tier", fail) or "full"
    if e.tier not in TIERS:
        fail(f"unknown tier {e.tier!r}: use \"smoke\" or \"full\"", "tier")
    e.note = _opt_str(raw, "note", fail) or ""
    e.id = _opt_str(raw, "id", fail)
    if e.id is not None and not e.id.strip():
        fail("`id` must not be empty: leave it out for the default id, or name the entry",
             "id")
    if e.id is not None and not e.id.isprintable():  # a table row, a JUnit test name
        fail(f"`id` must be one line of printable text, got {e.id!r}", "id")
    e.id = e.id or default_id(e)
    if "expect" in raw:
        try:
            e.expect = parse_expectation(raw)
        except ValueError as err:
            key = getattr(err, "key", "expect")
            fail(str(err), key)
    else:
        stray = [k for k in EXPECT_KEYS if k in raw]
        if stray:
            fail(f"`{stray[0]}` without `expect`: write expect = \"holds\" or "
                 "\"violates PROPERTY\", or run `kmc regress --update`", stray[0])
    return e


def _opt_str(raw, key, fail):
    v = raw.get(key)
    if v is not None and not isinstance(v, str):
        fail(f"`{key}` must be a string", key)
    return v


def default_id(e: Entry) -> str:
    """scenario.variant.k=v...: readable, and unique for distinct runs of the same name."""
    parts = [e.scenario] + ([e.variant] if e.variant else [])
    parts += [f"{k}={v}" for k, v in sorted(e.params.items())]
    if e.explorer != "bfs":
        parts.append(e.explorer)
    return ".".join(str(p) for p in parts)


class LineMap:
    """Where things are in the suite text. tomllib gives no positions for valid input,
    so the ``[[entry]]`` headers and ``key =`` lines are found by a line scan."""

    HEADER = re.compile(r"""^\s*\[\[\s*(?:entry|"entry"|'entry')\s*\]\]""")
    TABLE = re.compile(r"^\s*\[")

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.headers = [n for n, t in enumerate(self.lines, 1) if self.HEADER.match(t)]

    def entry(self, i: int) -> int | None:
        return self.headers[i] if i < len(self.headers) else None

    def block(self, i: int) -> tuple[int, int]:
        """1-based line range [start, end) of entry i: its header up to the next header
        or top-level table (sub-tables such as [entry.params] stay inside)."""
        start = self.headers[i]
        end = len(self.lines) + 1
        for n in range(start + 1, len(self.lines) + 1):
            t = self.lines[n - 1]
            if self.HEADER.match(t) or (self.TABLE.match(t) and
                                        not re.match(r"^\s*\[\s*entry\s*\.", t)):
                end = n
                break
        return start, end

    def key(self, i: int, key: str | None) -> int | None:
        if key is None or i >= len(self.headers):
            return None
        pat = re.compile(rf"^\s*(?:[\"']?{re.escape(key)}[\"']?\s*[=.]|\[\s*entry\s*\."
                         rf"{re.escape(key)}\s*\])")
        start, end = self.block(i)
        for n in range(start + 1, end):
            if pat.match(self.lines[n - 1]):
                return n
        return None

    def top_key(self, key: str) -> int | None:
        pat = re.compile(rf"^\s*(?:[\"']?{re.escape(key)}[\"']?\s*=|\[+\s*{re.escape(key)}"
                         r"\s*[\].])")
        first_table = next((n for n, t in enumerate(self.lines, 1) if self.TABLE.match(t)),
                           len(self.lines) + 1)
        for n, t in enumerate(self.lines, 1):
            # plain keys live above the first table; table headers anywhere
            if pat.match(t) and (n < first_table or self.TABLE.match(t)):
                return n
        return None
