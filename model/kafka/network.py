"""The network: messages in flight, as a canonical value inside the state.

Two shapes, chosen by ``Network(ordered=...)`` (configuration, not state):

- unordered (``ordered=False``): a multiset of messages, stored as a sorted tuple. Any
  message may be delivered next, so every reordering is explored.
- ordered (``ordered=True``): FIFO channels, one per ``(src, dst)`` pair, stored as a
  sorted tuple of ``(channel, messages-in-send-order)``. Only each channel's head may be
  delivered, as over a TCP connection (Kafka's controller-to-broker channels).

Messages are NamedTuples whose first field is a kind string distinct per message type and
which have ``src`` and ``dst`` fields; every field holds ints/strs/bools/tuples of them
(no None), so any two messages are orderable and the sorted form is canonical.

Loss is a model decision: ``lose`` removes a message exactly as ``deliver`` does, and the
model offers it only for the message kinds and scenarios that allow loss. Crashes use
``drop`` (a broken connection loses everything to or from an endpoint).
"""
from __future__ import annotations

from bisect import bisect_left
from typing import Callable, Sequence

from kmc.model.memo import canonical
from kmc.model.kafka.canon import bag_add

EMPTY: tuple = ()
#: every message sent, as the first equal message sent (``memo.canonical``): the
#: messages in flight take a few hundred values against hundreds of thousands of sends
_canon = canonical()


def channel_of(msg) -> tuple:
    return (msg.src, msg.dst)


class Network:
    """Operations on a network value; the instance holds only configuration."""

    __slots__ = ("ordered",)

    def __init__(self, ordered: bool = False):
        self.ordered = ordered

    # ---- building ------------------------------------------------------------------------
    def send(self, net: tuple, msg) -> tuple:
        """``net`` with ``msg`` in flight."""
        msg = _canon(msg)  # pragma: no mutate (the identity while memo tables are off)
        if not self.ordered:
            try:
                return bag_add(net, msg)
            except TypeError:
                raise TypeError(f"message {msg!r} is not orderable against the messages in "
                                "flight: give every message type a distinct kind string as "
                                "its first field and no None fields") from None
        ch = (msg.src, msg.dst)
        i = bisect_left(net, (ch,))  # channels ascend; (ch,) sorts just before (ch, ...)
        if i < len(net) and net[i][0] == ch:
            return net[:i] + ((ch, net[i][1] + (msg,)),) + net[i + 1:]
        return net[:i] + ((ch, (msg,)),) + net[i:]

    def send_all(self, net: tuple, msgs) -> tuple:
        for m in msgs:
            net = self.send(net, m)
        return net

    # ---- reading -------------------------------------------------------------------------
    def deliverable(self, net: tuple) -> list:
        """Messages that may be delivered next, each distinct message once, in a
        deterministic order (traces store action indices). A list, not a generator:
        the models ask it for every state, and a generator costs more per message."""
        if self.ordered:
            return [msgs[0] for _ch, msgs in net]
        out = []
        prev = None
        for m in net:
            if m != prev:
                out.append(m)
                prev = m
        return out

    def messages(self, net: tuple) -> Sequence:
        """Every message in flight (duplicates included), as a sequence (see
        ``deliverable``)."""
        if self.ordered:
            return [x for _ch, msgs in net for x in msgs]
        return net

    def ask(self, net: tuple, question: Callable):
        """``question``'s answer about the messages in flight (a function of them, its
        answer a value): what a step learns from scanning them, asked as one question,
        so that a reader of the step sees what it depends on."""
        return question(self.messages(net))

    def count(self, net: tuple) -> int:
        if self.ordered:
            return sum(len(msgs) for _ch, msgs in net)
        return len(net)

    # ---- removing ------------------------------------------------------------------------
    def deliver(self, net: tuple, msg) -> tuple:
        """``net`` without ``msg`` (a message ``deliverable`` returned)."""
        if not self.ordered:  # ``bag_remove``, inlined: one call per delivery
            i = bisect_left(net, msg)
            if i < len(net) and net[i] == msg:
                return net[:i] + net[i + 1:]
            raise ValueError(f"{msg!r} is not in flight")
        ch = (msg.src, msg.dst)
        i = bisect_left(net, (ch,))  # as in ``send``
        if i < len(net) and net[i][0] == ch:
            c, msgs = net[i]
            if msgs[0] != msg:
                raise ValueError(f"{msg!r} is not at the head of its channel")
            rest = msgs[1:]
            return net[:i] + (((c, rest),) if rest else ()) + net[i + 1:]
        raise ValueError(f"{msg!r} is not in flight")

    #: losing a message has the same effect on the network as delivering it
    lose = deliver

    def drop(self, net: tuple, pred: Callable) -> tuple:
        """``net`` without every message satisfying ``pred`` (e.g. all traffic of a crashed
        endpoint: a broken connection loses what was in flight)."""
        if not self.ordered:
            return tuple(m for m in net if not pred(m))
        out = []
        for ch, msgs in net:
            keep = tuple(m for m in msgs if not pred(m))
            if keep:
                out.append((ch, keep))
        return tuple(out)

    def rename(self, net: tuple, f: Callable) -> tuple:
        """Apply ``f`` to every message and re-canonicalise (symmetry reduction)."""
        out = EMPTY
        for m in self.messages(net):
            out = self.send(out, f(m))
        return out
