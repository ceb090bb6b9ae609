"""The topic-lifecycle properties both control planes share: one declaration, two views."""
from kmc import api
from kmc.invariants.logic import relations_of
from kmc.model.kafka import lifecycle_properties as lp
from kmc.model.kafka.kraft import properties as kraft_props
from kmc.model.kafka.zk import properties as zk_props
from toymodels import reachable

SHARED = ("NoStaleRead", "NoStaleReplication", "NoWriteToDeletedTopic",
          "StaleReplicasCleaned", "AssignedReplicasHosted", "DeletionCompletes",
          "StaleFetchAttempted", "FailoverMidDeletion")


def _by_name(model):
    return {p.name: p for p in model.properties()}


def test_both_planes_check_the_shared_properties_from_one_formula():
    zk, kraft = ({p.name: p for p in m.ALWAYS + m.QUIESCENT + (
        m.SHARED["StaleFetchAttempted"], m.FAILOVER_MID_DELETION)}
        for m in (zk_props, kraft_props))
    for name in SHARED:
        a, b = zk[name], kraft[name]
        assert a.kind == b.kind, name
        if name == "DeletionCompletes":  # KRaft adds one conjunct to the shared core
            assert repr(b.formula).startswith("(" + repr(a.formula) + " ∧ ")
        else:
            assert repr(a.formula) == repr(b.formula), name
        assert a.view is zk_props.view and b.view is kraft_props.view
    assert zk["StaleReplicasCleaned"].description.startswith("settled with every broker up")
    assert kraft["StaleReplicasCleaned"].description.startswith(
        "settled with every broker running")


def test_each_view_produces_the_shared_relations_with_their_arity():
    arity = {r.name: r.arity for r in vars(lp).values() if isinstance(r, lp.Rel)}
    shared = zk_props.SHARED.values()
    names = set().union(*(relations_of(p.formula) for p in shared)) | {"Pending", "Failover"}
    assert names <= set(arity)
    for model, view in ((api.build("offline-delete", "kip516"), zk_props.view),
                        (api.build("kraft-stray", "kraft"), kraft_props.view)):
        seen = {n: 0 for n in names}
        for s in reachable(model, 400):
            v = view(s)
            for n in names:
                assert all(len(x) == arity[n] for x in v[n]), n
                seen[n] += bool(v[n])
        # the relations the settled properties read are not empty all along
        assert all(seen[n] for n in ("Holds", "Hosts", "Assigned", "Live", "Record")), seen


def test_assigned_replicas_hosted_names_the_broker_on_both_planes():
    for scenario, variant, words in (
            ("offline-delete", "kip516-stop-replica-by-name", "every broker is up"),
            ("kraft-stray", "stray-after-replicas", "every broker is running")):
        r = api.check(scenario, variant)
        prop = _by_name(r.extra["model"])["AssignedReplicasHosted"]
        sentence = prop.explain_sentence(r.discoveries["AssignedReplicasHosted"].detail)
        assert words in sentence and "holds no hosted replica of it" in sentence
