"""Candidate states as they travel between Spark tasks: one pickle per batch.

A batch of record states (``model.encoding.fieldwise``) whose field reprs are known
(``Level.pieces``) travels as field tables (``FieldTables``): per field, the distinct
values the batch holds, and per state the index of each of its fields' values. A Kafka
state's fields take few values against the states (a few thousand per field in
lifecycle-large's 325,289 states), so a value is pickled once per batch instead of once
per state, and equal field values arrive as one object. The receiving task looks up the
repr of each distinct value once (its ``FieldReprs`` memos), which gives every state's
field reprs: it neither prints nor looks up a state's fields again to check it or to key
its successors. On lifecycle-large, 4,000 states at a time: 9 us per state to pickle and
3.4-4.2 to unpickle as plain objects, 4.3-4.4 and 3.5-4.1 (the reprs included) as
tables; 130 bytes per state instead of 200.

Two fields share a table entry when their reprs are the same object. A repr comes from
a memo keyed by the field's value (``FieldReprs``), so one repr object stands for values
that compare equal, and ``fieldwise`` types promise that such values are interchangeable
at one position of a record (its memo answers for them alike already). Any other batch
(other states, reprs missing) is one plain pickle of its list of states.
"""
from __future__ import annotations

import pickle
from functools import partial
from operator import itemgetter
from typing import NamedTuple

import numpy as np

_PROTOCOL = pickle.HIGHEST_PROTOCOL


class FieldTables(NamedTuple):
    cls: type          # the states' record type
    values: list       # per field: its distinct values in the batch
    index: np.ndarray  # int32, fields x states: the entry of each state's field


def pack(states: list, pieces=None) -> bytes:
    """``states`` as one pickle: field tables when every state is of one ``fieldwise``
    record type and ``pieces`` (aligned) holds each one's field reprs, else the plain
    list."""
    tables = _tables(states, pieces)
    return pickle.dumps(states if tables is None else tables, protocol=_PROTOCOL)


def unpack(blob: bytes, fields=None) -> tuple[list, list | None]:
    """(states, their field reprs as lists, or None) from a ``pack``. ``fields``: the
    receiver's ``Core.field_keys()``, whose memos give the reprs of a batch of its
    record type that travelled as field tables (else None)."""
    got = pickle.loads(blob)
    if not isinstance(got, FieldTables):
        return got, None
    memos = fields[1].memos if fields is not None and fields[0] is got.cls else None
    cols, rcols = [], []
    for i, (values, idx) in enumerate(zip(got.values, got.index)):
        at = idx.tolist()
        cols.append(list(map(values.__getitem__, at)))
        if memos is not None:
            reprs = list(map(memos[i].__getitem__, values))
            rcols.append(list(map(reprs.__getitem__, at)))
    make = partial(tuple.__new__, got.cls)  # the record's own __new__ is Python code
    states = list(map(make, zip(*cols)))
    return states, None if memos is None else list(map(list, zip(*rcols)))


def _tables(states: list, pieces) -> FieldTables | None:
    if not states or pieces is None or len(pieces) != len(states):
        return None
    cls = type(states[0])
    nfields = len(getattr(cls, "_fields", ()))
    if not nfields or any(type(s) is not cls for s in states) or \
            any(p is None or len(p) != nfields for p in pieces):
        return None
    values, index = [], []
    n = len(states)
    for i in range(nfields):
        col = list(map(itemgetter(i), pieces))
        ids = np.fromiter(map(id, col), dtype=np.int64, count=n)
        _u, first, back = np.unique(ids, return_index=True, return_inverse=True)
        at = first.tolist()
        values.append([states[j][i] for j in at])
        index.append(back.reshape(-1).astype(np.int32))
    return FieldTables(cls, values, np.stack(index))
