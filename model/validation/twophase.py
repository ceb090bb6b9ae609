"""Lamport's TwoPhase commit (TwoPhase.tla from Gray & Lamport, "Consensus on Transaction
Commit"), transcribed rule for rule. The message set ``msgs`` is three bit-sets: the
Prepared(rm) messages, Commit and Abort.

Published counts: RM=3 288 distinct / 1,146 generated / depth 11; RM=5 8,832; RM=8
1,745,408. With RM symmetry kmc counts the exact orbits (RM=5: 314); Stateright's 665 comes
from a partial canonicaliser (see docs/architecture.md, "Symmetry").
"""
from kmc.model.packed import Bool, Enum, PackedModel

RM_STATES = Enum("working", "prepared", "committed", "aborted")


class TwoPhase(PackedModel):
    name = "twophase"

    def __init__(self, rm: int = 3, broken: bool = False):
        self.rm, self.broken = rm, broken
        super().__init__()

    def declare(self, spec):
        n = self.rm
        spec.index("RM", range(n))
        spec.var("tmState", Enum("init", "committed", "aborted"))
        spec.var("rmState", RM_STATES, size=n)
        spec.var("tmPrepared", Bool(), size=n)
        spec.var("msgPrepared", Bool(), size=n)
        spec.var("msgCommit", Bool())
        spec.var("msgAbort", Bool())
        spec.init(tmState="init", rmState="working", tmPrepared=False, msgPrepared=False,
                  msgCommit=False, msgAbort=False)
        spec.symmetric("RM", ["rmState", "tmPrepared", "msgPrepared"])
        # TMRcvPrepared(rm): the TM records a Prepared message
        spec.rule("TMRcvPrepared", over={"r": "RM"}, actor="tm",
                  when="tmState == 'init' and msgPrepared[r]", then={"tmPrepared[r]": "True"})
        # TMCommit: all RMs prepared. The broken variant forgets that guard (a seeded bug).
        ready = "True" if self.broken else "all(tmPrepared[i] for i in RM)"
        spec.rule("TMCommit", actor="tm", when=f"tmState == 'init' and {ready}",
                  then={"tmState": "'committed'", "msgCommit": "True"})
        spec.rule("TMAbort", actor="tm", when="tmState == 'init'",
                  then={"tmState": "'aborted'", "msgAbort": "True"})
        spec.rule("RMPrepare", over={"r": "RM"}, actor="rm{r}",
                  when="rmState[r] == 'working'",
                  then={"rmState[r]": "'prepared'", "msgPrepared[r]": "True"})
        spec.rule("RMChooseToAbort", over={"r": "RM"}, actor="rm{r}",
                  when="rmState[r] == 'working'", then={"rmState[r]": "'aborted'"})
        spec.rule("RMRcvCommitMsg", over={"r": "RM"}, actor="rm{r}", when="msgCommit",
                  then={"rmState[r]": "'committed'"})
        spec.rule("RMRcvAbortMsg", over={"r": "RM"}, actor="rm{r}", when="msgAbort",
                  then={"rmState[r]": "'aborted'"})
        # TCConsistent: no RM committed while another aborted
        spec.always("TCConsistent", "not (any(rmState[i] == 'committed' for i in RM) and "
                                    "any(rmState[i] == 'aborted' for i in RM))")
        spec.sometimes("SomeCommit", "tmState == 'committed'")
