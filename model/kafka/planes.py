"""The control plane a topic-lifecycle scenario runs on: ``-p plane=zk|kraft``.

The six lifecycle scenarios (``model.kafka.zk.scenarios``) tell stories both planes can
tell: a topic deleted and re-created while brokers crash, the controller fails over,
clients read. Each scenario is a set of ZooKeeper-plane bounds (``zk.state.Bounds``);
``plane=kraft`` runs the same story on the KRaft model (``kraft.model.KRaftModel``)
with those bounds carried over by name onto ``kraft.state.Bounds``. recreate-during-
expansion is told the other way round: KRaft by default, ``plane=zk`` on the ZooKeeper
model's CreatePartitions (``zk.expansion``). This module decides everything
plane-related, once for all of them:

- which parameters carry over: the bounds both planes have (brokers, rf, partitions,
  incarnations, deletes, records, consumer, initial_records, crashes, failovers,
  liveness, adds, target), checked against the KRaft scenarios' ranges where those are
  narrower;
- which do not: a ZooKeeper-plane bound the KRaft model has no counterpart for
  (``zk_only``) and a KRaft bound the ZooKeeper model has none for (``kraft_only``). Set
  explicitly on the other plane, each is a usage error naming it; its default is not
  used there. The ZooKeeper-only bounds and why they have no KRaft counterpart:

  - ``loss`` (StopReplica requests may be lost) and ``reorder`` (controller-to-broker
    requests may be reordered): a KRaft broker gets no LeaderAndIsr or StopReplica
    (KafkaApis.handleLeaderAndIsrRequest and handleStopReplicaRequest refuse them
    without ZooKeeper: metadataSupport.requireZkOrThrow); it replays the metadata log in
    offset order
    (BrokerMetadataPublisher.onMetadataUpdate, ReplicaManager.applyDelta), and a batch
    it has not fetched yet is a lag, which the KRaft model explores anyway;
  - ``reassign``: KRaft reassigns through AlterPartitionReassignments
    (ReplicationControlManager.alterPartitionReassignments), which the KRaft model does
    not have (docs/model-kraft.md, "Simplifications");
  - ``purge_delay``: a KRaft broker also renames a deleted log and removes it later
    (LogManager.asyncDelete, deleteLogs); the KRaft model has the two steps whenever a
    crash can fall between them (``kraft.deletion``), so there is nothing to choose;

- which variants run: the ZooKeeper model's (default ``kip516``) on ``zk``, the KRaft
  model's (default ``kraft``) on ``kraft``; a variant of the other plane is a usage error
  that names the plane it runs on (``Scenario.resolve``);
- the plane of every other Kafka scenario, for ``kmc list``: the plane of its model.
"""
from __future__ import annotations

from dataclasses import replace

from kmc.model.kafka.kraft import params as kraft_params
from kmc.model.kafka.kraft.model import KRaftModel
from kmc.model.kafka.kraft.state import Bounds as KRaftBounds
from kmc.model.kafka.kraft.variants import VARIANT_NAMES as KRAFT_VARIANTS
from kmc.model.kafka.scenarios import bound_params, builder
from kmc.model.scenario import Param, Scenario, VariantSet

ZK, KRAFT = "zk", "kraft"
PLANES = (ZK, KRAFT)
DEFAULTS = {ZK: "kip516", KRAFT: "kraft"}
PLANE = Param("plane", ZK, "control plane: zk (ZooKeeper-era controller) or kraft "
                           "(KRaft controller quorum and metadata log)", None, None, PLANES)


def zk_only(zk_help: dict) -> tuple[str, ...]:
    """The ZooKeeper-plane parameters the KRaft model has no bound for."""
    return tuple(n for n in zk_help if n not in KRaftBounds._fields)


def kraft_only(zk_help: dict) -> tuple[str, ...]:
    """The KRaft scenarios' parameters the ZooKeeper-plane scenarios do not have."""
    return tuple(n for n in kraft_params.PARAM_HELP if n not in zk_help)


def _only(text: str, plane: str) -> str:
    return f"{text} (plane {plane} only; not used on the other plane)"


def two_plane_scenario(name: str, description: str, bounds, zk_help: dict, *, zk_model,
                       variants: tuple, family: str = "topics",
                       default: str = ZK) -> Scenario:
    """A lifecycle scenario with ``bounds`` (``zk.state.Bounds``) on the ZooKeeper
    plane, where ``zk_model(variant, bounds)`` builds the model of each of ``variants``,
    and on the KRaft plane with the shared bounds carried over; a ``plane`` parameter
    chooses, ``default`` when not given. (The ZooKeeper model is passed in: its package
    imports this module.)"""
    zk_skip, kraft_skip = zk_only(zk_help), kraft_only(zk_help)
    params = []
    for p in bound_params(bounds, zk_help):
        if p.name in zk_skip:
            p = Param(p.name, p.default, _only(p.help, ZK), p.minimum, p.maximum, p.choices)
        params.append(p)
    params.append(PLANE if default == ZK else replace(PLANE, default=default))
    kraft_defaults = KRaftBounds()
    kraft_help = {n: (_only(text, KRAFT), lo, hi)
                  for n, (text, lo, hi) in kraft_params.PARAM_HELP.items()
                  if n in kraft_skip}
    params += bound_params(kraft_defaults, kraft_help, kraft_params.CHOICES)
    narrower = _kraft_ranges(name, bounds, zk_help)
    sets = {ZK: VariantSet(variants, DEFAULTS[ZK], unused=kraft_skip),
            KRAFT: VariantSet(KRAFT_VARIANTS, DEFAULTS[KRAFT], unused=zk_skip,
                              params=narrower)}
    sets = {default: sets[default], **sets}  # the default plane first, as `kmc list` shows
    return Scenario(name=name, description=description,
                    build=_build(zk_model, bounds, default),
                    params=tuple(params), variants=sets[default].variants,
                    default_variant=DEFAULTS[default], family=family,
                    selector=PLANE.name, variant_sets=sets)


def _kraft_ranges(name: str, bounds, zk_help: dict) -> tuple[Param, ...]:
    """The shared parameters whose range the KRaft scenarios keep narrower: the same
    default, KRaft's range."""
    out = []
    for n, (text, lo, hi) in kraft_params.PARAM_HELP.items():
        if n not in zk_help or zk_help[n][1:] == (lo, hi):
            continue
        value = getattr(bounds, n)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ValueError(f"scenario {name!r}: {n}={value} is outside the KRaft "
                             f"plane's range {lo}..{hi}")
        out.append(Param(n, value, zk_help[n][0], lo, hi))
    return tuple(out)


def _build(zk_model, bounds, default):
    """build(variant, params): the ZooKeeper model with ``bounds`` and the parameters,
    or the KRaft model with the shared bounds carried over by name (KRaft's defaults
    for the rest)."""
    on = {ZK: builder(zk_model, bounds),
          KRAFT: builder(KRaftModel, kraft_bounds(bounds))}

    def build(variant, params):
        return on[params.get(PLANE.name, default)](variant, params)
    return build


def kraft_bounds(bounds) -> KRaftBounds:
    """The KRaft bounds of a ZooKeeper-plane scenario: every field both have, copied."""
    return KRaftBounds()._replace(**{n: getattr(bounds, n) for n in KRaftBounds._fields
                                     if n in bounds._fields})


def plane_of(model) -> str | None:
    """The control plane a built model runs on; None for a model that is not Kafka's."""
    from kmc.model.kafka.zk.cluster import Cluster

    if isinstance(model, KRaftModel):
        return KRAFT
    if isinstance(model, Cluster):
        return ZK
    return None


def planes_of(sc: Scenario, model) -> tuple[str | None, dict]:
    """(the plane a run takes without ``-p plane``, {plane: VariantSet} of the planes
    it can run on}) for ``kmc list``; (None, {}) for a scenario that is not Kafka's.
    ``model`` is the scenario built with its defaults."""
    if sc.selector == PLANE.name:
        return next(p.default for p in sc.params if p.name == PLANE.name), \
            dict(sc.variant_sets)
    plane = plane_of(model)
    if plane is None:
        return None, {}
    return plane, {plane: VariantSet(sc.variants, sc.variant_default)}
