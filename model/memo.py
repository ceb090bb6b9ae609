"""Memoised pure steps: a model function whose answer is a function of its arguments'
values (and of the model's configuration) can keep its answers, since the Kafka models'
components take a few thousand distinct values against hundreds of thousands of states:
a broker's record meets the same request in many states.

``@pure(config)`` memoises ``fn(m, *args)`` by ``(config(m), args)``; ``config`` names
every attribute of the model the function reads (its release-line flags, say), so that
two models never share an answer. ``@pure()`` memoises a function of its arguments
alone, ``fn(*args)`` by ``args``. A call with keyword arguments is computed, not
memoised. The answers must be immutable values (the models'
records are), arguments that compare equal must get the same answer (as the field-wise
keys already require: never ``True`` where ``1`` may occur), and a table holds at most
``LIMIT`` answers before it starts over.

``kmc mutate``'s workers turn every table off (``off``): the recorder learns which code each
expansion runs, and an answer taken from a table would hide that code from it (and a
mutant's answer, kept, would stand for code the mutant's replay then thinks did not run).
A mutant's replay and its explored runs record nothing: each runs with tables that start
empty and are emptied after it (``fresh``), so every answer is the mutant's own.
"""
from __future__ import annotations

import contextlib
import functools

#: answers per function before its table starts over
LIMIT = 1 << 14

#: ``_on[0]``: whether tables answer (a list, so a closure reads the current value)
_on = [True]
_MISS = object()
#: every table, so that ``fresh`` can empty them all
_tables: list = []


def pure(config=None):
    """Decorator: memoise ``fn(m, *args)`` by ``config(m)`` and ``args``; without
    ``config``, ``fn(*args)`` by ``args``."""
    def memoised_by(fn):
        table: dict = {}
        on = _on

        if config is None:
            def memoised(*args, **kw):
                if kw or not on[0]:  # keywords: computed (a key is positional)
                    return fn(*args, **kw)
                got = table.get(args, _MISS)
                if got is _MISS:
                    if len(table) >= LIMIT:
                        table.clear()
                    got = table[args] = fn(*args)
                return got
        else:
            # the last configuration seen and its number in ``configs``: a key holds
            # the number, so the configuration (a model's release-line flags, say) is
            # not hashed at every call; the comparison with the last one is an
            # identity check while the same model asks
            configs: dict = {}
            last = [_MISS, 0]

            def memoised(m, *args, **kw):
                if kw or not on[0]:
                    return fn(m, *args, **kw)
                cfg = config(m)
                if cfg != last[0]:
                    last[0] = cfg
                    last[1] = configs.setdefault(cfg, len(configs))
                key = (last[1], args)
                got = table.get(key, _MISS)
                if got is _MISS:
                    if len(table) >= LIMIT:
                        table.clear()
                    got = table[key] = fn(m, *args)
                return got
        memoised = functools.wraps(fn)(memoised)
        memoised.table = table
        _tables.append(table)
        return memoised
    return memoised_by


def canonical(limit: int = LIMIT):
    """``canon(x)``: the first value equal to ``x`` (and of its type) that ``canon`` was
    given, else ``x`` itself. A value made anew by every step that makes it (a message
    sent) is then one object wherever it occurs: a state's field that holds it compares
    equal to another element by element by identity, and hashes over a few hot objects.
    Nothing depends on which object answers: equal values of one type are the same
    value to the model and to every key. The table follows ``off`` and ``fresh`` as the
    memo tables do (with tables off, ``canon(x)`` is ``x``) and starts over at
    ``limit`` entries."""
    table: dict = {}
    on = _on
    _tables.append(table)

    def canon(x):
        if not on[0]:
            return x
        got = table.get(x)
        if got is None:
            if len(table) >= limit:
                table.clear()
            table[x] = x
            return x
        return got if type(got) is type(x) else x
    canon.table = table
    return canon


def off() -> None:
    """Every memoised function computes its answer from now on, in this process."""
    _on[0] = False


@contextlib.contextmanager
def disabled():
    """Every memoised function computes its answer inside this block (tables are
    neither read nor written)."""
    before = _on[0]
    _on[0] = False
    try:
        yield
    finally:
        _on[0] = before


@contextlib.contextmanager
def fresh():
    """Inside this block every table starts empty and answers, whether or not they
    are off outside it; on leaving, every table is emptied again and the switch is
    what it was. Every answer it gives was computed inside the block, by the code
    loaded then, for the arguments it was asked: a process that loads other code
    (a mutant) explores as fast as with the tables on, and gets the answers it would
    get with them off."""
    before = _on[0]
    _clear()
    _on[0] = True
    try:
        yield
    finally:
        _on[0] = before
        _clear()


def _clear() -> None:
    for table in _tables:
        table.clear()
