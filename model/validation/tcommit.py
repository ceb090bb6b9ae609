"""Lamport's TCommit.tla: the transaction-commit specification (no TM, no messages).

Published counts: RM=3 34 distinct, 94 generated, depth 7.
"""
from kmc.model.packed import Enum, PackedModel


class TCommit(PackedModel):
    name = "tcommit"

    def __init__(self, rm: int = 3):
        self.rm = rm
        super().__init__()

    def declare(self, spec):
        spec.index("RM", range(self.rm))
        spec.var("rmState", Enum("working", "prepared", "committed", "aborted"), size=self.rm)
        spec.init(rmState="working")
        spec.symmetric("RM", ["rmState"])
        can_commit = "all(rmState[i] in ('prepared', 'committed') for i in RM)"
        not_committed = "all(rmState[i] != 'committed' for i in RM)"
        spec.rule("Prepare", over={"r": "RM"}, actor="rm{r}", when="rmState[r] == 'working'",
                  then={"rmState[r]": "'prepared'"})
        # Decide(rm) is a disjunction in TCommit.tla: one rule per disjunct
        spec.rule("DecideCommit", over={"r": "RM"}, actor="rm{r}",
                  when=f"rmState[r] == 'prepared' and {can_commit}",
                  then={"rmState[r]": "'committed'"})
        spec.rule("DecideAbort", over={"r": "RM"}, actor="rm{r}",
                  when=f"rmState[r] in ('working', 'prepared') and {not_committed}",
                  then={"rmState[r]": "'aborted'"})
        spec.always("TCConsistent", "not (any(rmState[i] == 'committed' for i in RM) and "
                                    "any(rmState[i] == 'aborted' for i in RM))")
