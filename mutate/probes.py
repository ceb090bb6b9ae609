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
  list folded over the operand values the original evaluated. An operand the original
  never evaluated is evaluated by the probe where a mutant needs it, when it calls
  nothing (names, attributes, subscripts, operators and comparisons: a lambda the
  instrumented code passes, in the same scope; the probes inside it infect nothing,
  since the original skips it). Any other, or one that raises, makes the mutant
  infected. Where only the
  truth of the result is read (a test of ``if``, ``while``, ``assert``, a conditional
  expression, a comprehension's ``if``, ``not``), only the truth is compared;
- a ``_replace`` update (``drop-field``): infected when the new value differs from the
  field's current one (dropping an update to the value already there changes nothing);
- an ``if`` without ``else`` dropped (``drop-stmt``): infected where its test is true or
  raises (``taken``; the test is asked through a lambda, so that one that raises infects
  it too). Where the test is false the original runs nothing more, and the mutant asks
  nothing: tests are taken to have no side effect, as every probed operand is;
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
stay small.
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
#: per ``and``/``or`` site: the operands its last evaluation evaluated, as a chain of
#: (index, previous link, value); each operand links itself in right after it is
#: evaluated, having read its previous link before, so that an evaluation of the same
#: site nested inside an operand does not break the chain
LAST: dict = {}
NAME, LAST_NAME = "__kmc_probes__", "__kmc_last__"

#: an operand a probe takes as the original evaluated it
UNKNOWN = object()


#: ``_ASKING[0]``: how many operands the probes are evaluating that the original
#: skipped; the probes inside such an operand infect nothing (the original, and every
#: mutant of those sites, skips it)
_ASKING = [0]


def _infected(k) -> None:
    if _ASKING[0]:
        return
    SINK.add(k)
    EVER.add(k)


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
    op, alts = SPECS[sid]
    r = op(a, b)
    _alternatives(r, a, b, alts)
    return r


def _alternatives(r, a, b, alts) -> None:
    """Each mutant of ``alts`` ((number, its operator, its left and right operands,
    ``UNKNOWN`` for the original's)) whose value differs from ``r`` is infected."""
    for k, alt_op, x, y in alts:
        try:
            if not _same(r, alt_op(a if x is UNKNOWN else x, b if y is UNKNOWN else y)):
                _infected(k)
        except Exception:
            _infected(k)


def bend(sid, result, thunks=()):
    """An ``and``/``or`` evaluated to ``result``; ``LAST[sid]``: the chain of the
    operands it evaluated, (index, previous link, value), the last first. ``thunks``:
    per operand, a function that evaluates it, or None; an operand the original never
    evaluated is asked of its thunk, once, where a mutant needs it (one without a thunk,
    or whose thunk raises, infects that mutant).

    The mutants infected depend only on the operands' values: where every value the
    answer read is a bool (and no thunk was asked), it is memoised by those values."""
    values = []
    link = LAST[sid]
    while link is not None:  # the evaluated operands are 0..j, contiguous
        values.append(link[2])
        link = link[1]
    values.reverse()
    key = None
    if result is True or result is False:
        for v in values:
            if v is not True and v is not False:
                break
        else:
            key = (sid, *values)
            got = _BOOLS.get(key)
            if got is not None:
                for k in got:
                    _infected(k)
                return result
    infected = _bend(sid, result, values, thunks)
    if key is not None and infected is not None:
        if len(_BOOLS) >= 1 << 16:
            _BOOLS.clear()
        _BOOLS[key] = infected
    return result


_NOT_ASKED = object()
#: (site, the values of the operands the original evaluated, all bools) -> the mutants
#: of the site they infect (``bend``)
_BOOLS: dict = {}


def _bend(sid, result, values, thunks):
    """Infect the mutants of the ``and``/``or`` site ``sid`` whose value differs from
    ``result``, ``values`` being the operands the original evaluated (in order); returns
    them as a tuple, or None when an operand was asked of its thunk (the answer then
    depends on more than ``values``)."""
    j = len(values) - 1
    truth, alts = SPECS[sid]
    asked = {}
    out = []
    for k, order, is_and in alts:
        last = len(order) - 1
        for pos, i in enumerate(order):
            if i <= j:
                v = values[i]
            else:  # an operand the original never evaluated
                v = asked.get(i, _NOT_ASKED)
                if v is _NOT_ASKED:
                    v = asked[i] = _ask(thunks[i] if i < len(thunks) else None)
                if v is UNKNOWN:
                    out.append(k)
                    break
            if pos == last or (not v if is_and else v):
                if not (_same_truth(v, result) if truth else _same(v, result)):
                    out.append(k)
                break
    for k in out:
        _infected(k)
    return None if asked else tuple(out)


def _ask(thunk):
    """``thunk()``, or ``UNKNOWN`` (no thunk, or it raised)."""
    if thunk is None:
        return UNKNOWN
    _ASKING[0] += 1
    try:
        return thunk()
    except Exception:
        return UNKNOWN
    finally:
        _ASKING[0] -= 1


def taken(sid, test):
    """The test of an ``if`` without ``else``, asked by calling ``test``: where it is
    true, or raises, the mutant that drops the statement (``SPECS[sid]``) is infected;
    where it is false, that mutant (which asks nothing there) runs as the original."""
    try:
        value = test()
        truth = bool(value)
    except BaseException:
        _infected(SPECS[sid])
        raise
    if truth:
        _infected(SPECS[sid])
    return truth


def binop(sid, a, b):
    op, alts = SPECS[sid]
    try:
        r = op(a, b)
    except Exception:  # the mutant may not raise: its value is not known
        _infect_all(alts)
        raise
    if _plain(a) and _plain(b):
        _alternatives(r, a, b, alts)
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
    for k, j in alts:
        try:
            if not _same(r, seq[j]):
                _infected(k)
        except Exception:
            _infected(k)
    return r


def _infect_all(alts) -> None:
    for alt in alts:
        _infected(alt[0])


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
    for k, name in SPECS[sid]:
        try:
            if not _same(getattr(obj, name), kw[name]):
                _infected(k)
        except Exception:
            _infected(k)
    return obj._replace(**kw)
