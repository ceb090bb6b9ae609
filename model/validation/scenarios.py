"""Named scenarios for the validation models (see ``model.scenario``)."""
from kmc.model.scenario import Param, Scenario
from kmc.model.validation.diehard import DieHard
from kmc.model.validation.liveness import Counter, LossyChannel, Peterson
from kmc.model.validation.tcommit import TCommit
from kmc.model.validation.twophase import TwoPhase

SCENARIOS = [
    Scenario(
        name="twophase",
        description="Lamport's TwoPhase commit: RM resource managers and one TM",
        build=lambda v, p: TwoPhase(p["rm"], broken=(v == "broken-commit")),
        # 15 at most: the packed state takes 4 bits per RM and 2 more, within 64 bits
        params=(Param("rm", 3, "number of resource managers", 1, 15),),
        variants=("standard", "broken-commit"),
        family="validation",
    ),
    Scenario(
        name="tcommit",
        description="Lamport's TCommit: the transaction-commit specification",
        build=lambda v, p: TCommit(p["rm"]),
        params=(Param("rm", 3, "number of resource managers", 1, 32),),
        variants=("standard",),
        family="validation",
    ),
    Scenario(
        name="diehard",
        description="DieHard's jugs: reach 4 gallons with 3- and 5-gallon jugs",
        build=lambda v, p: DieHard(),
        variants=("standard",),
        family="validation",
    ),
    Scenario(
        name="peterson",
        description="Peterson's mutual exclusion, two processes: starvation freedom "
                    "under weak fairness",
        build=lambda v, p: Peterson(fair=(v != "unfair"), turn=(v != "no-turn")),
        variants=("standard", "unfair", "no-turn"),
        family="validation",
    ),
    Scenario(
        name="counter",
        description="a counter that eventually reaches N when Inc is weakly fair",
        build=lambda v, p: Counter(p["n"], fair=(v == "weak")),
        params=(Param("n", 3, "the value the counter reaches", 1, 1000),),
        variants=("weak", "unfair"),
        family="validation",
    ),
    Scenario(
        name="lossy",
        description="retransmission over a lossy channel: delivery needs strong fairness",
        build=lambda v, p: LossyChannel(v),
        variants=("strong", "weak", "none"),
        family="validation",
    ),
]
