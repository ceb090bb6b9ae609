"""What the liveness recorder writes per expanded state, made the cheap way: the
predicates of every liveness property checked together by the fused checker (by the
state's field reprs when it has them), and record states keyed from their field reprs;
each equal to what the properties' own predicates and the core's key function say."""
from __future__ import annotations

from kmc.api import build
from kmc.explorers import liveness
from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.graph import predicate_flags
from kmc.invariants.liveness import is_liveness
from state_walk import reachable


def _plain_bits(props, s):
    bits = 0
    for i, p in enumerate(props):
        bits |= (p.triggered(s) << (2 * i)) | (p.awaited(s) << (2 * i + 1))
    return bits


def test_the_flags_are_the_predicates_answers():
    model = build("stale-state", "kip516", {"liveness": True, "purge_delay": True})
    props = [p for p in model.properties() if is_liveness(p)]
    assert len(props) >= 3 and any(p.trigger is not None for p in props)
    _cls, reprs, _key = Core(model).field_keys()
    flags = predicate_flags(props)
    states = reachable(model, 3000)
    bits = [_plain_bits(props, s) for s in states]
    assert len(set(bits)) > 3  # the predicates do vary over these states
    assert [flags(s, reprs.of(s)) for s in states] == bits
    assert [flags(s) for s in states] == bits


def test_the_recorded_keys_are_the_cores_keys(monkeypatch):
    made = []
    attach = liveness.attach

    def keep(core):
        made.append((core, core.rkey, attach(core)))
        return made[-1][2]

    monkeypatch.setattr(liveness, "attach", keep)
    model = build("stale-read", "legacy", {"liveness": True})
    r = bfs(model)
    (core, rkey, rec), = made
    assert core.rkey is rkey  # record states: the explorer's keys stay its own
    keys = {(hi << 64) | lo for hi, lo in zip(rec.src_hi, rec.src_lo)}
    keys |= {(hi << 64) | lo for hi, lo in zip(rec.dst_hi, rec.dst_lo)}
    assert keys == {rkey(s) for s in reachable(build("stale-read", "legacy"), 10 ** 6)}
    assert len(keys) == r.unique_states
