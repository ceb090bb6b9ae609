"""Structure of the KIP-253 partition model: scenarios, errors, failover placement, the
sequence-picture contract (model/kafka/kip253)."""
import pytest
from toymodels import reachable

from kmc.api import build, check
from kmc.errors import UsageError
from kmc.model.contract import validate_model
from kmc.model.kafka.kip253 import SCENARIOS, znodes
from kmc.model.kafka.kip253.config import Config
from kmc.model.kafka.kip253.procedure import ACTION_NAMES, partition_procedure
from kmc.model.kafka.kip253.variants import NAMES, flags_for
from kmc.model.scenario import ScenarioError

REQUIRED = {"expand", "shrink", "expand-failover", "shrink-then-expand"}


def test_scenario_names_and_variants():
    names = {sc.name for sc in SCENARIOS}
    assert REQUIRED <= names and len(names) == 6
    for sc in SCENARIOS:
        assert sc.variants[:4] == ("modulo", "linear-no-blocking", "linear-no-fencing",
                                   "kip253")
    assert NAMES == SCENARIOS[0].variants


@pytest.mark.parametrize("name", sorted(REQUIRED | {"split-merge-spark"}))
@pytest.mark.parametrize("variant", NAMES)
def test_every_scenario_builds_a_valid_model_in_every_variant(name, variant):
    validate_model(build(name, variant))


def test_bad_input_is_one_clear_error():
    with pytest.raises(UsageError, match="has no variant 'legacy'"):
        check("expand", "legacy")
    with pytest.raises(UsageError, match="members=1 is out of range"):
        check("expand", "kip253", {"members": 1})
    with pytest.raises(ScenarioError, match="unknown partition-model variant"):
        flags_for("nope")
    with pytest.raises(ScenarioError, match="1 <= initial"):
        Config(flags_for("kip253"), 3, 2, (3,), ((2,),), 2, 0, ())


def test_the_initial_topic_is_settled():
    m = build("shrink", "kip253")
    (w,) = m.init_states()
    assert (znodes.total(w.store), znodes.undeleted(w.store)) == (3, 3)
    assert znodes.znode(w.store, 2).after == ((0, 0), (1, 0))  # an old split of 0 and 1
    (b,) = w.brokers
    assert b.meta == (3, 3) and b.count == 3 and b.status == "up"
    assert [[x.p for x in parts] for parts in w.group.members] == [[0, 1], [2]]
    assert all(x.started for parts in w.group.members for x in parts)
    assert w.net == () and w.mem.phase == "idle"


EXPAND_PHASES = {"idle", "expand-bump", "expand-lair", "expand-create", "expand-online"}
SHRINK_PHASES = {"idle", "shrink-bump", "shrink-lair", "shrink-um", "remove-assignment",
                 "remove-znode"}


@pytest.mark.parametrize("name,phases", [("expand-failover", EXPAND_PHASES),
                                         ("shrink", SHRINK_PHASES)])
def test_a_failover_can_fall_between_any_two_controller_steps(name, phases):
    """The model's design rule: every step is its own action, so the failover (a fault) is
    enabled in every phase of the procedure, and the new controller recovers."""
    m = build(name, "kip253")
    hit, recovered_to = set(), set()
    for w in reachable(m):
        acts = [a[0] for a in m.actions(w)]
        if "failover" in acts:
            hit.add(w.mem.phase)
        if w.mem.phase == "recover":
            recovered_to |= {t.mem.phase for a, t in m.successors(w) if a[0] == "ctrl-recover"}
    assert phases <= hit
    assert "idle" in recovered_to and len(recovered_to) >= 2


def test_action_names_and_sequence_picture_contract():
    m = build("expand-failover", "kip253")
    lanes = m.lanes()
    assert lanes[:4] == ["admin", "controller-1", "controller-2", "zookeeper"]
    fired = set()
    for w in reachable(m):
        for a, _t in m.successors(w):
            fired.add(m.action_name(a))
            assert isinstance(m.format_action(a), str)
            assert m.action_actor(a) in lanes
            msg = m.action_message(a, w)
            if msg is not None:
                src, dst, label = msg
                assert src in lanes and dst in lanes and label, (a, msg)
    assert fired <= set(ACTION_NAMES)
    assert {"ctrl-expand-bump", "ctrl-recover", "unblock", "report-position"} <= fired


def test_message_labels_carry_counts_and_epochs():
    m = build("expand", "kip253")
    w = m.init_states()[0]
    for name in ("admin-alter", "ctrl-expand-count", "ctrl-expand-bump",
                 "ctrl-expand-leader-and-isr"):
        a = next(a for a in m.actions(w) if a[0] == name)
        label = m.action_message(a, w)[2]
        w = m.next_state(w, a)
    assert "undeleted_partition_count=3" in label
    assert "[A-0 no-id leader=1 le=1] [A-1 no-id leader=1 le=1]" in label
    text = m.format_state(w)
    assert "phase=expand-create" in text and "LeaderAndIsr ce=1 " in text


def test_runs_are_deterministic():
    a = check("expand", "linear-no-fencing")
    b = check("expand", "linear-no-fencing")
    assert (a.unique_states, a.max_depth) == (b.unique_states, b.max_depth)
    ta = a.discoveries["InOrderKeyedDelivery"].trace
    tb = b.discoveries["InOrderKeyedDelivery"].trace
    assert ta.action_indices == tb.action_indices


def test_unknown_witness_is_refused():
    cfg = Config(flags_for("kip253"), 2, 2, (3,), ((2,),), 2, 0, ("NoSuchWitness",))
    with pytest.raises(ValueError, match="unknown witness"):
        partition_procedure(cfg, liveness=False, bookkeeping=False).properties()


def test_the_procedure_shares_the_clusters_store_and_controller_memory():
    """KIP-253's procedure and the topic lifecycle keep their metadata in one store and
    their controller's in-memory state in one record; where the procedure does not run,
    KIP-253's fields keep their absent values."""
    from kmc.model.kafka.store import NO_COUNT

    kip = build("shrink", "kip253").init_states()[0]
    topic = build("stale-read", "kip516").init_states()[0]
    assert type(kip.store) is type(topic.store) and type(kip.mem) is type(topic.mem)
    assert znodes.undeleted(kip.store) == 3 and kip.mem.count == 3
    (rec,) = topic.store.topics
    assert rec.undeleted == NO_COUNT and topic.mem.count == NO_COUNT
    assert all(p.after == p.before == () for p in rec.partitions)


@pytest.mark.parametrize("scenario, variant, other", [
    ("shrink-then-expand", "kip253", "lifecycle"),
    ("expand-failover", "kip253", "lifecycle"),
    ("stale-read", "kip516", "procedure"),
    ("recreate-during-expansion", "kip516", "procedure"),
])
def test_the_procedure_and_the_lifecycle_run_on_one_world(scenario, variant, other):
    """The ZooKeeper-era cluster has one state type: KIP-253's procedure and the topic
    lifecycle run on the same World, Admin and Ghost. In every reachable state of a
    scenario of one feature, the other feature's fields keep their initial values, and
    the scenario's traces (``state_to_json``) leave them out."""
    from kmc.model.kafka.zk.state import FEATURE_FIELDS, Admin, Ghost, World

    params = {"plane": "zk"} if scenario == "recreate-during-expansion" else {}
    m = build(scenario, variant, params)
    states = reachable(m)
    first = states[0]
    assert (type(first), type(first.admin), type(first.ghost)) == (World, Admin, Ghost)

    def parts(w):
        return {(part, f): getattr(getattr(w, part) if part else w, f)
                for part, fields in FEATURE_FIELDS[other].items() for f in fields}

    start = parts(first)
    assert all(parts(w) == start for w in states)
    js = m.state_to_json(states[-1])
    for part, fields in FEATURE_FIELDS[other].items():
        assert not set(fields) & set(js[part] if part else js)
    own = "procedure" if other == "lifecycle" else "lifecycle"
    assert all(f in (js[part] if part else js)
               for part, fields in FEATURE_FIELDS[own].items() for f in fields)
