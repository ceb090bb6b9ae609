"""DieHard (the 3- and 5-gallon jugs, from Lamport's TLA+ examples). The "invariant"
NotSolved (big != 4) is meant to be violated: the shortest counterexample has 7 states."""
from kmc.model.packed import Int, PackedModel


class DieHard(PackedModel):
    name = "diehard"

    def declare(self, spec):
        spec.var("big", Int(0, 5))
        spec.var("small", Int(0, 3))
        spec.init(big=0, small=0)
        spec.rule("FillSmallJug", then={"small": "3"})
        spec.rule("FillBigJug", then={"big": "5"})
        spec.rule("EmptySmallJug", then={"small": "0"})
        spec.rule("EmptyBigJug", then={"big": "0"})
        spec.rule("SmallToBig", then={"big": "min(big + small, 5)",
                                      "small": "small - (min(big + small, 5) - big)"})
        spec.rule("BigToSmall", then={"small": "min(big + small, 3)",
                                      "big": "big - (min(big + small, 3) - small)"})
        spec.always("NotSolved", "big != 4")
