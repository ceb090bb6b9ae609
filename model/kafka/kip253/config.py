"""The bounds of one run: everything a scenario chooses, validated in one place."""
from __future__ import annotations

from dataclasses import dataclass, field

from kmc.model.kafka.kip253.keys import KeySpace
from kmc.model.kafka.kip253.variants import Flags
from kmc.model.scenario import ScenarioError


@dataclass(frozen=True)
class Config:
    flags: Flags
    N: int            # initial_partition_count
    start: int        # partition count when the run starts (N..start-1: an old, settled split)
    ops: tuple        # scripted AlterTopic target counts, issued in order
    scripts: tuple    # per producer: the key classes of its messages, in production order
    members: int      # consumer group members
    failovers: int    # controller failovers allowed (fault actions)
    witnesses: tuple  # names of the sometimes-properties this run must find
    keyspace: KeySpace = field(init=False, compare=False)
    key_index: dict = field(init=False, compare=False)

    def __post_init__(self):
        if self.N < 1 or self.start < self.N:
            raise ScenarioError(f"partition counts must satisfy 1 <= initial ({self.N}) <= "
                                f"start ({self.start})")
        if any(n < 1 for n in self.ops):
            raise ScenarioError("every AlterTopic target count must be at least 1")
        if self.members < 1 or not self.scripts:
            raise ScenarioError("a run needs at least one group member and one producer")
        keys = sorted({k for s in self.scripts for k in s})
        try:
            ks = KeySpace(self.flags.hashing, self.N, range(self.N, self.pmax + 1), keys)
        except ValueError as e:
            raise ScenarioError(str(e)) from None
        object.__setattr__(self, "keyspace", ks)
        object.__setattr__(self, "key_index", {k: i for i, k in enumerate(keys)})

    @property
    def pmax(self) -> int:
        """Partition ids the run can ever use: 0 .. pmax-1."""
        return max((self.start,) + tuple(self.ops))

    @property
    def keys(self) -> tuple:
        return tuple(sorted(self.key_index))
