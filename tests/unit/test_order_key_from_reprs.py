"""The order key a Spark task gives each successor it keys from field reprs
(``explorers.orderkey.partitioned_key``) is the order key of the state itself
(``Core.order_key``): the state's fingerprint below the partition key's bits, for the
plain-printing Kafka records and for a record printed as ``Name(field=...)``."""
from typing import NamedTuple

from kmc.api import build
from kmc.explorers.core import Core
from kmc.explorers.orderkey import HIGH, LOW, partition_high, partitioned_key
from kmc.model.encoding import FieldReprs, fields_key, fingerprint128
from toymodels import reachable


def test_the_key_from_reprs_is_the_order_key_of_every_kafka_state():
    model = build("lifecycle-large", "kip516", {})
    core = Core(model)
    assert core.by_partition_key and model.partition_fields
    states = reachable(model, 3000)
    cls = type(states[0])
    reprs = FieldReprs(len(cls._fields))
    key = partitioned_key(model.partition_fields, fields_key(cls))
    high = partition_high(model.partition_fields)
    parts = {model.partition_key(s) for s in states}
    assert len(parts) > 1  # the partition key's bits differ between states
    for s in states:
        pieces = reprs.of(s)
        assert key(pieces) == core.order_key(s)
        assert high(pieces) == core.order_key(s) & HIGH


class Named(NamedTuple):  # printed by namedtuple's own repr: Named(a=..., b=..., c=...)
    a: int
    b: tuple
    c: str


class Single(NamedTuple):  # one field: its plain repr is "(x,)"
    x: tuple
    __repr__ = tuple.__repr__


def _expected(s, fields):
    part = tuple(s[i] for i in fields)
    return (fingerprint128(s) & LOW) | (fingerprint128(part) & HIGH)


def test_records_of_other_shapes_get_the_same_order_key():
    reprs = FieldReprs(3)
    key = partitioned_key((1, 2), fields_key(Named))
    for s in (Named(1, (2, 3), "x"), Named(1, (2, 3), "y"), Named(7, (), "x")):
        assert key(reprs.of(s)) == _expected(s, (1, 2))
    one = FieldReprs(1)
    key1 = partitioned_key((0,), fields_key(Single))
    for s in (Single((1,)), Single(()), Single(((1, 2), "a"))):
        assert key1(one.of(s)) == _expected(s, (0,))
