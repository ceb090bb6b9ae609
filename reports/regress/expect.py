"""Expectations (what an entry must produce) and observations (what a run produced),
and the comparison that turns a mismatch into sentences a reviewer can act on."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from kmc.model.scenario import did_you_mean

HOLDS = "holds"
VIOLATES = "violates"
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


class ExpectError(ValueError):
    """A malformed expectation; ``key`` names the suite key at fault."""

    def __init__(self, message: str, key: str = "expect"):
        super().__init__(message)
        self.key = key


@dataclass
class Expectation:
    #: property -> counterexample length (states, initial included); empty means "holds"
    violated: dict = field(default_factory=dict)
    #: exact unique-state count, an inclusive (lo, hi) range, or None (not checked)
    states: int | tuple | None = None
    #: sometimes-properties that must be found; None means not checked
    witnesses: tuple | None = None
    #: why the recorded state count is what it is: the reason given to
    #: ``kmc regress --update --accept-counts`` when the count last changed
    counts_reason: str | None = None

    def describe(self) -> str:
        if not self.violated:
            return HOLDS
        return "violates " + ", ".join(f"{p} ({n})" for p, n in sorted(self.violated.items()))

    def toml_lines(self) -> list[str]:
        """The expectation as suite lines (what `--update` writes)."""
        props = sorted(self.violated)
        out = [f'expect = "{HOLDS}"' if not props else
               f'expect = {json.dumps(VIOLATES + " " + ", ".join(props))}']
        if len(props) == 1:
            out.append(f"length = {self.violated[props[0]]}")
        elif props:
            out.append("length = { " + ", ".join(f"{_key(p)} = {self.violated[p]}"
                                                   for p in props) + " }")
        if isinstance(self.states, tuple):
            out.append(f"states = [{self.states[0]}, {self.states[1]}]")
        elif self.states is not None:
            out.append(f"states = {self.states}")
        if self.witnesses is not None:
            out.append("witnesses = [" + ", ".join(json.dumps(w) for w in self.witnesses) + "]")
        if self.counts_reason is not None:
            out.append(f"counts_reason = {json.dumps(self.counts_reason)}")
        return out


@dataclass
class Observation:
    """What one run produced, reduced to what expectations talk about."""
    violated: dict  # property -> counterexample length
    witnesses: tuple  # sometimes-properties found
    verdicts: dict  # property -> verdict name
    states: int
    complete: bool
    stopped_by: str = ""

    def describe(self) -> str:
        return Expectation(self.violated).describe()

    def expectation(self, previous: Expectation | None = None) -> Expectation:
        """The expectation this run would record. A state range that still contains the
        count is kept: the suite author widened it on purpose."""
        states = self.states
        if previous is not None and isinstance(previous.states, tuple):
            lo, hi = previous.states
            if lo <= self.states <= hi:
                states = previous.states
        return Expectation(dict(self.violated), states, tuple(self.witnesses))


def observe(result) -> Observation:
    """An Observation of a CheckResult (kmc.model.result)."""
    violated, witnesses = {}, []
    verdicts = result.verdicts()
    for name, verdict in verdicts.items():
        if verdict == "violated":
            violated[name] = len(result.discoveries[name].trace)
        elif verdict == "witness_found":
            witnesses.append(name)
    return Observation(violated, tuple(sorted(witnesses)), verdicts, result.unique_states,
                       result.complete, result.stopped_by or "")


def compare(exp: Expectation, obs: Observation) -> list[str]:
    """Every way ``obs`` departs from ``exp``, one sentence each (empty: it matches)."""
    out = []
    declared = ", ".join(sorted(obs.verdicts)) or "none"
    for p, n in sorted(exp.violated.items()):
        if p not in obs.verdicts:
            out.append(f"property {p} no longer exists{did_you_mean(p, obs.verdicts)} "
                       f"(the model declares: {declared})")
        elif p not in obs.violated:
            out.append(f"verdict flipped: {p} was violated ({n}-state counterexample), now "
                       f"{obs.verdicts[p]}{_why(obs)}")
        elif obs.violated[p] != n:
            out.append(f"counterexample length changed: {p} expected {n} states, "
                       f"got {obs.violated[p]}")
    for p, n in sorted(obs.violated.items()):
        if p not in exp.violated:
            out.append(f"verdict flipped: {p} was expected to hold, now violated "
                       f"({n}-state counterexample)")
    if isinstance(exp.states, tuple):
        lo, hi = exp.states
        if not lo <= obs.states <= hi:
            out.append(f"state count drifted: expected {lo:,}..{hi:,}, got {obs.states:,}")
    elif exp.states is not None and exp.states != obs.states:
        out.append(f"state count drifted: expected {exp.states:,}, got {obs.states:,} "
                   f"({obs.states - exp.states:+,})")
    for w in exp.witnesses or ():
        if w not in obs.verdicts:
            out.append(f"witness {w} no longer exists{did_you_mean(w, obs.verdicts)} "
                       f"(the model declares: {declared})")
        elif w not in obs.witnesses:
            out.append(f"witness {w} no longer found: {obs.verdicts[w]}{_why(obs)}")
    return out


def _why(obs: Observation) -> str:
    return "" if obs.complete else f" (run incomplete: stopped by {obs.stopped_by})"


def parse_expectation(raw: dict) -> Expectation:
    """The expectation keys of one suite entry (expect, length, states, witnesses)."""
    text = raw["expect"]
    if not isinstance(text, str):
        raise ExpectError('`expect` must be "holds" or "violates PROPERTY[, PROPERTY...]"')
    words = text.strip()
    violated: dict = {}
    if words == HOLDS:
        if "length" in raw:
            raise ExpectError('`length` goes with expect = "violates ...": remove it',
                              "length")
    elif words.startswith(VIOLATES + " "):
        props = [p.strip() for p in words[len(VIOLATES):].split(",")]
        if not all(props) or len(set(props)) != len(props):
            raise ExpectError(f"cannot read {text!r}: write expect = \"violates P\" or "
                              "\"violates P, Q\" with distinct property names")
        violated = _lengths(raw, props)
    else:
        raise ExpectError(f"expect = {text!r}: write \"holds\" or \"violates PROPERTY\" "
                          "(several: \"violates P, Q\")")
    return Expectation(violated, _states(raw), _witnesses(raw), _counts_reason(raw))


def _lengths(raw, props) -> dict:
    if "length" not in raw:
        raise ExpectError("a violation needs its counterexample length: add `length = N` "
                          "(states, initial included), or remove `expect` and run "
                          "`kmc regress --update` to record it", "expect")
    length = raw["length"]
    if isinstance(length, dict):
        if set(length) != set(props):
            raise ExpectError(f"`length` must give one length per violated property "
                              f"({', '.join(props)}), got {', '.join(length) or 'none'}",
                              "length")
        out = dict(length)
    elif len(props) == 1:
        out = {props[0]: length}
    else:
        raise ExpectError("several violated properties need a table: length = "
                          "{ P = 4, Q = 6 }", "length")
    for p, n in out.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ExpectError(f"counterexample length of {p} must be a positive integer "
                              f"(states, initial included), got {n!r}", "length")
    return out


def _states(raw):
    if "states" not in raw:
        return None
    v = raw["states"]
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return v
    if isinstance(v, list) and len(v) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v) \
            and v[0] <= v[1]:
        return (v[0], v[1])
    raise ExpectError(f"`states` must be a count (states = 288) or an inclusive range "
                      f"(states = [280, 300]), got {v!r}", "states")


def _witnesses(raw):
    if "witnesses" not in raw:
        return None
    v = raw["witnesses"]
    if not isinstance(v, list) or not all(isinstance(w, str) and w for w in v):
        raise ExpectError("`witnesses` must be a list of property names, e.g. "
                          "witnesses = [\"SomeCommit\"]", "witnesses")
    return tuple(v)


def _counts_reason(raw):
    if "counts_reason" not in raw:
        return None
    v = raw["counts_reason"]
    if not isinstance(v, str) or not v.strip() or "\n" in v:
        raise ExpectError("`counts_reason` must be one line of text (written by `kmc regress "
                          "--update --accept-counts \"REASON\"`)", "counts_reason")
    return v


def _key(name: str) -> str:
    return name if _BARE.match(name) else json.dumps(name)
