"""Textbook models with known liveness answers (the liveness checker's validation set).

- ``Peterson``: Peterson's mutual exclusion for two processes. Starvation freedom (a
  process that tries to enter its critical section gets there) holds under weak fairness
  of each process's steps, fails without fairness (a process may stop forever), and fails
  even under fairness without the ``turn`` variable (both raise their flag and wait for
  each other: a deadlock). Leaving the non-critical section is never fair: a process need
  not want the critical section.
- ``Counter``: a counter that counts up to N, beside an unfair toggle. "Eventually N"
  holds when Inc is weakly fair; without fairness the toggle may run forever.
- ``LossyChannel``: a sender retransmits one message over a channel that may lose it.
  "Eventually delivered" fails under weak fairness (delivery is enabled only while the
  message is in the channel, and the loss can always come first) and holds when delivery
  is strongly fair.
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.invariants import always
from kmc.invariants.liveness import eventually, leads_to
from kmc.model.contract import Model

# ---- Peterson ----------------------------------------------------------------------------
NCS, FLAG, TURN, WAIT, CS = "ncs", "flag", "turn", "wait", "cs"


class Pet(NamedTuple):
    pc: tuple    # per process: ncs | flag | turn | wait | cs
    flag: tuple  # per process: raised?
    turn: int


class Peterson(Model):
    """``fair``: each process's steps are weakly fair; ``turn``: the standard algorithm
    (False: the variant without the turn variable)."""
    name = "peterson"

    def __init__(self, fair: bool = True, turn: bool = True):
        self.turn = turn
        self.weakly_fair = ("Step-0", "Step-1") if fair else ()

    def init_states(self):
        return [Pet((NCS, NCS), (False, False), 0)]

    def actions(self, s):
        out = []
        for p in (0, 1):
            pc, q = s.pc[p], 1 - p
            if pc == NCS:
                out.append(("Try", p))
            elif pc != WAIT or not s.flag[q] or (self.turn and s.turn == p):
                out.append(("Step", p))
        return out

    def next_state(self, s, a):
        kind, p = a
        q = 1 - p
        pc, flag, turn = list(s.pc), list(s.flag), s.turn
        cur = pc[p]
        if kind == "Try":
            pc[p] = FLAG
        elif cur == FLAG:
            flag[p], pc[p] = True, TURN if self.turn else WAIT
        elif cur == TURN:
            turn, pc[p] = q, WAIT
        elif cur == WAIT:
            pc[p] = CS
        else:  # CS: leave it
            flag[p], pc[p] = False, NCS
        return Pet(tuple(pc), tuple(flag), turn)

    def action_name(self, a):
        return f"{a[0]}-{a[1]}"

    def action_names(self):
        return ["Try-0", "Try-1", "Step-0", "Step-1"]

    def action_actor(self, a):
        return f"p{a[1]}"

    def format_action(self, a):
        return f"{a[0]}(p{a[1]})"

    def properties(self):
        return [always("MutualExclusion", lambda s: s.pc != (CS, CS),
                       description="never both processes in the critical section"),
                leads_to("NoStarvation0", lambda s: s.pc[0] != NCS,
                         lambda s: s.pc[0] == CS,
                         description="process 0, once it tries, enters its critical "
                                     "section"),
                leads_to("NoStarvation1", lambda s: s.pc[1] != NCS,
                         lambda s: s.pc[1] == CS,
                         description="process 1, once it tries, enters its critical "
                                     "section")]


# ---- Counter -----------------------------------------------------------------------------
class Counter(Model):
    """``x`` counts up to ``n`` (Inc); ``b`` toggles forever (Toggle, never fair)."""
    name = "counter"

    def __init__(self, n: int = 3, fair: bool = True):
        self.n = n
        self.weakly_fair = ("Inc",) if fair else ()

    def init_states(self):
        return [(0, False)]

    def actions(self, s):
        return (["Inc"] if s[0] < self.n else []) + ["Toggle"]

    def next_state(self, s, a):
        x, b = s
        return (x + 1, b) if a == "Inc" else (x, not b)

    def action_name(self, a):
        return a

    def action_names(self):
        return ["Inc", "Toggle"]

    def properties(self):
        n = self.n
        return [eventually("ReachesN", lambda s: s[0] == n,
                           description=f"the counter eventually reaches {n}")]


# ---- Lossy channel -----------------------------------------------------------------------
class Chan(NamedTuple):
    in_channel: bool
    delivered: bool


class LossyChannel(Model):
    """``fairness``: "none", "weak" (Send and Deliver weakly fair) or "strong" (Send
    weakly fair, Deliver strongly fair). Lose is a fault: never fair."""
    name = "lossy"

    def __init__(self, fairness: str = "strong"):
        self.weakly_fair = () if fairness == "none" else \
            ("Send", "Deliver") if fairness == "weak" else ("Send",)
        self.strongly_fair = ("Deliver",) if fairness == "strong" else ()

    def init_states(self):
        return [Chan(False, False)]

    def actions(self, s):
        if s.delivered:
            return []
        return ["Deliver", "Lose"] if s.in_channel else ["Send"]

    def next_state(self, s, a):
        if a == "Send":
            return Chan(True, False)
        if a == "Lose":
            return Chan(False, False)
        return Chan(False, True)

    def is_fault(self, a):
        return a == "Lose"

    def action_name(self, a):
        return a

    def format_action(self, a):
        return a

    def action_names(self):
        return ["Send", "Deliver", "Lose"]

    def action_actor(self, a):
        return "sender" if a == "Send" else "channel"

    def action_message(self, a, state=None):
        if a == "Send":
            return ("sender", "channel", "msg")
        if a == "Deliver":
            return ("channel", "receiver", "msg")
        return None

    def lanes(self):
        return ["sender", "channel", "receiver"]

    def properties(self):
        return [eventually("EventuallyDelivered", lambda s: s.delivered,
                           description="the message is eventually delivered")]
