"""Where each mutant would change a value: the baseline runs the mutated files with a
probe at the mutation sites whose value it can compare, and each expansion records the
mutants it *infected*.

A mutant changes one expression. Until the first time the mutated code gives another
value than the original, the mutant's process runs exactly the baseline's steps: an
expansion in which no evaluation of the site differs gives the baseline's successors.
A probe returns the original value and computes what each mutant of the site would have
given on the same operand values; a mutant whose value differs goes into ``SINK``, which
the Recorder empties at the start of each expansion and adds to the functions the
expansion called (``recorder.Recorder``). A probed mutant's replay then asks again only
the expansions it infected, not every expansion that called its function
(``steps.untouched``). Probed:

- a comparison with one ``<``, ``<=``, ``>`` or ``>=`` (``cmp``), or with an ``int`` or
  ``bool`` constant operand (``const``, ``bool``; ``in`` excepted): the flipped operator,
  or the changed constant, on the same operands;
- ``and``/``or`` (``drop-and``, ``drop-or``, ``and-or``): the mutated operator or operand
  list folded over the operand values the original evaluated (``bend``; the
  instrumented code keeps each in a local name). An operand the original never
  evaluated is evaluated by the probe where a mutant needs it, when it calls nothing
  (names, attributes, subscripts, operators and comparisons: a lambda, in the same
  scope, that the instrumented code makes only when ``bend`` asks for it; the probes
  inside it infect nothing, since the original skips it). Any other, or one that
  raises, makes the mutant infected. Where only the truth of the result is read (a test
  of ``if``, ``while``, ``assert``, a conditional expression, a comprehension's ``if``,
  ``not``), only the truth is compared. Not probed in a class body;
- a ``_replace`` update (``drop-field``): infected when the new value differs from the
  field's current one (dropping an update to the value already there changes nothing);
- an ``if`` without ``else`` dropped (``drop-stmt``), in a function's body: infected
  where its test is true or raises (``infect``, called by the body's first statement
  and by a handler around the test). Where the test is false the original runs nothing
  more, and the mutant asks nothing: tests are taken to have no side effect, as every
  probed operand is;
- an ``int`` or ``bool`` constant operand of an arithmetic or bitwise operator, or an
  element of a tuple of constants that is one (``(1,) * n``), and an ``int`` index
  (``t[0]``, ``t[-1]``; ``const``, ``bool``): the operation on the changed constant and
  the same other operand, computed only on values whose operators have no side effects
  (numbers, strings and tuples, and lists as indexed; anything else counts as
  infected). ``features[-1]`` for ``features[0]`` of a one-element tuple, or
  ``(0,) * n`` for ``(1,) * n`` with ``n == 0``, gives the original's value and is no
  infection.

Every other mutant (a flipped ``==``, a constant elsewhere, e.g. a call's argument, any
other dropped statement, a swapped branch: they differ whenever they run) is asked again
wherever its function ran. Values are "the same" when they are of one type and equal
(``_same``); an exception while computing a mutant's value counts as infection, and so
does one the original raises at an arithmetic or index site. Only sites inside a
function are probed (a site outside one changes what the module defines:
``replay.affected``), and a probe records only what it infects, so the recorded sets
stay small. A comparison's or operation's answer on ints, strings or None, and an
``and``/``or``'s on bools, is memoised by the operand values.
"""
from __future__ import annotations

#: the numbers of the mutants infected since the Recorder last emptied it (at the start
#: of each expansion)
SINK: set = set()
#: the numbers of every mutant infected in this process, wherever (set-up, expansions,
#: properties, cached functions): a probed mutant not among them after a run gives every
#: value the original gave, so that run is the baseline's (``worker.baseline_task``)
EVER: set = set()
#: site number -> what its probe computes (filled while the instrumented files compile)
SPECS: list = []
NAME = "__kmc_probes__"

#: an operand a probe takes as the original evaluated it
UNKNOWN = object()


#: ``_ASKING[0]``: how many operands the probes are evaluating that the original
#: skipped; the probes inside such an operand infect nothing (the original, and every
#: mutant of those sites, skips it)
_ASKING = [0]


def _same(a, b) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _same_truth(a, b) -> bool:
    try:
        return bool(a) == bool(b)
    except Exception:
        return False


# ---- what the instrumented code calls ---------------------------------------------------
def cmp(sid, a, b):
    op, alts, memo = SPECS[sid]
    r = op(a, b)
    if type(a) in _KEYED and type(b) in _KEYED:
        _keyed(memo, r, a, b, alts)
    else:
        _infect(_alternatives(r, a, b, alts))
    return r


#: operand types by whose values a comparison's or operation's answer is memoised
#: (``bool`` is not one: ``True`` and ``1`` are one key)
_KEYED = frozenset({int, str, type(None)})


def _keyed(memo, r, a, b, alts) -> None:
    got = memo.get((a, b))
    if got is None:
        got = _remember(memo, (a, b), _alternatives(r, a, b, alts))
    if got and not _ASKING[0]:
        SINK.update(got)
        EVER.update(got)


def _remember(memo, key, got):
    """``got``, kept in ``memo`` (if any) under ``key`` while the memo has room."""
    if memo is not None and len(memo) < _MEMO_SIZE:
        memo[key] = got
    return got


def _infect(hit) -> None:
    """Mark the mutants of ``hit`` infected, unless an operand the original skipped is
    being asked."""
    if hit and not _ASKING[0]:
        SINK.update(hit)
        EVER.update(hit)


def _alternatives(r, a, b, alts) -> tuple:
    """The mutants of ``alts`` ((number, its operator, its left and right operands,
    ``UNKNOWN`` for the original's)) whose value differs from ``r`` (a value is the
    same when it is ``r`` or of its type and equal: ``_same``)."""
    hit = []
    for k, alt_op, x, y in alts:
        try:
            v = alt_op(a if x is UNKNOWN else x, b if y is UNKNOWN else y)
            if v is r or type(v) is type(r) and bool(v == r):
                continue
        except Exception:
            pass
        hit.append(k)
    return tuple(hit)


def bend(sid, result, *values):
    """An ``and``/``or`` evaluated to ``result``; ``values``: what each operand gave,
    None for those it never evaluated (the operator's own rule tells which ran: an
    ``and`` stops at its first false operand, an ``or`` at its first true one).
    Returns ``result``, or ``NEED`` where a mutant needs an operand the original never
    evaluated: the instrumented code then calls ``asked``.

    Where every value is a bool or None, the answer is memoised by the values (they
    decide which operands ran, and ``result``, the last one's value)."""
    memo = None
    for v in values:
        if v is not True and v is not False and v is not None:
            break
    else:
        memo = _BOOLS.get(sid)
        if memo is None:
            memo = _BOOLS[sid] = {}
        got = memo.get(values)
        if got is not None:
            if got is NEED:
                return _answer(got, sid, result, values, memo)
            if got and not _ASKING[0]:  # the common case, inline
                SINK.update(got)
                EVER.update(got)
            return result
    got = _remember(memo, values, _bend(sid, result, values, None))
    return _answer(got, sid, result, values, memo)


def _answer(got, sid, result, values, memo):
    if got is NEED:
        _PENDING[0] = (sid, result, values, memo)
        return NEED
    _infect(got)
    return result


def asked(thunk):
    """The rest of the ``bend`` that answered ``NEED``: ``thunk(i)`` evaluates the
    operand ``i``, for the later operands that call nothing (``sites.visit_BoolOp``);
    each of those the original skipped is asked once (one that raises gives
    ``UNKNOWN``). A mutant that needs one it could not ask is infected. Returns the
    original's result; the answer is memoised by the values and the answers."""
    sid, result, values, memo = _PENDING[0]
    _PENDING[0] = None
    j = _last(values, SPECS[sid][2])
    extra = tuple(_ask(thunk, i) for i in SPECS[sid][3] if i > j)
    key = (values, extra)
    if memo is not None:
        for v in extra:
            if v is not True and v is not False and v is not None and v is not UNKNOWN:
                memo = None
                break
        else:
            got = memo.get(key)
            if got is not None:
                return _answer(got, sid, result, values, None)
    got = _remember(memo, key, _bend(sid, result, values, extra))
    return _answer(got, sid, result, values, None)


def _last(values, is_and) -> int:
    """The index of the last operand an ``and`` (``is_and``) or ``or`` evaluated."""
    j, last = 0, len(values) - 1
    while j < last and (values[j] if is_and else not values[j]):
        j += 1
    return j


#: what ``bend`` answers when it needs an operand the original skipped
NEED = object()
#: the ``bend`` that answered ``NEED``: nothing runs before its ``asked`` but the
#: creation of its thunk
_PENDING = [None]
#: site -> its memo: operand values (bools or None) -> the mutants they infect, or
#: ``NEED``; (those values, the answers ``asked`` got) -> the mutants they infect
_BOOLS: dict = {}
_MEMO_SIZE = 1 << 12


def _bend(sid, result, values, extra):
    """The mutants of the ``and``/``or`` site ``sid`` whose value differs from
    ``result``, ``values`` being the operands' values; with no ``extra`` (the answers
    of the later plain operands the original skipped, in order), ``NEED`` where a
    mutant needs one of those."""
    truth, alts, is_and, later = SPECS[sid]
    j = _last(values, is_and)
    asked = {} if extra is None else dict(zip([i for i in later if i > j], extra))
    out = []
    for k, order, and_ in alts:
        last = len(order) - 1
        for pos, i in enumerate(order):
            if i <= j:
                v = values[i]
            elif i not in later:  # never evaluated, and it calls code: not asked
                out.append(k)
                break
            elif extra is None:
                return NEED
            else:
                v = asked[i]
                if v is UNKNOWN:
                    out.append(k)
                    break
            if pos == last or (not v if and_ else v):
                if not (_same_truth(v, result) if truth else _same(v, result)):
                    out.append(k)
                break
    return tuple(out)


def _ask(thunk, i):
    """``thunk(i)``, or ``UNKNOWN`` if it raised; the probes it runs infect nothing."""
    _ASKING[0] += 1
    try:
        return thunk(i)
    except Exception:
        return UNKNOWN
    finally:
        _ASKING[0] -= 1


def infect(k) -> None:
    """Mutant ``k`` gives another value here (a dropped ``if`` whose test held or
    raised: ``sites.visit_If``)."""
    if not _ASKING[0]:
        SINK.add(k)
        EVER.add(k)


def binop(sid, a, b):
    op, alts, memo = SPECS[sid]
    try:
        r = op(a, b)
    except Exception:  # the mutant may not raise: its value is not known
        _infect_all(alts)
        raise
    if type(a) in _KEYED and type(b) in _KEYED:
        _keyed(memo, r, a, b, alts)
    elif _plain(a) and _plain(b):
        _infect(_alternatives(r, a, b, alts))
    else:
        _infect_all(alts)
    return r


def index(sid, seq):
    i, alts = SPECS[sid]
    try:
        r = seq[i]
    except Exception:
        _infect_all(alts)
        raise
    if type(seq).__getitem__ not in _PLAIN_GETITEM:
        _infect_all(alts)
        return r
    hit = []
    for k, j in alts:
        try:
            v = seq[j]
            if v is r or type(v) is type(r) and bool(v == r):
                continue
        except Exception:
            pass
        hit.append(k)
    _infect(hit)
    return r


def _infect_all(alts) -> None:
    _infect([alt[0] for alt in alts])


#: operand types whose arithmetic has no side effect (a tuple subclass that keeps
#: tuple's operators, a NamedTuple, counts as a tuple)
_PLAIN = frozenset({int, bool, float, str, bytes, tuple, frozenset, type(None)})
_TUPLE_OPS = ("__add__", "__mul__", "__rmul__")
_PLAIN_GETITEM = frozenset({tuple.__getitem__, list.__getitem__, str.__getitem__,
                            bytes.__getitem__, range.__getitem__})


def _plain(v) -> bool:
    t = type(v)
    return t in _PLAIN or (issubclass(t, tuple) and
                           all(getattr(t, n) is getattr(tuple, n, None) for n in _TUPLE_OPS))


def replace(sid, obj, **kw):
    hit = []
    for k, name in SPECS[sid]:
        try:
            v, r = getattr(obj, name), kw[name]
            if v is r or type(v) is type(r) and bool(v == r):
                continue
        except Exception:
            pass
        hit.append(k)
    _infect(hit)
    return obj._replace(**kw)
