"""How many values each field of a Kafka model's state takes over its whole state space:
the sizes a packed encoding of the state would have to hold.

    python bench/kafka_domains.py                        # lifecycle-large kip516
    python bench/kafka_domains.py kraft-large            # another scenario (its default variant)
    python bench/kafka_domains.py stale-read --variant legacy

Every state of the scenario is collected (a plain breadth-first search, as
``bench/kafka_split.py`` does), then, for each field of the state's record type: the
number of distinct values it takes and the bits a table of them needs (a field that
takes one value needs none), and, for a field that is a tuple, the distinct elements
over all its values and its longest value. The sum of the bits is the width of a state
whose every field is a number in a per-field table of the values met. Figures, never
assertions.
"""
from __future__ import annotations

import gc
import sys

from kafka_split import record_scenario, states_of


def bits(n: int) -> int:
    """Bits to number ``n`` distinct values (0 for one value)."""
    return (n - 1).bit_length()


def main(argv=None) -> int:
    got = record_scenario(argv, "kafka_domains", __doc__.splitlines()[0])
    if got is None:
        return 2
    scenario, variant, model, core = got
    gc.disable()
    states = states_of(model, core)
    fields = type(states[0])._fields
    values = [set() for _ in fields]
    elements = [set() for _ in fields]
    longest = [0] * len(fields)
    for s in states:
        for i, v in enumerate(s):
            if v not in values[i]:
                values[i].add(v)
                if type(v) is tuple:
                    elements[i].update(v)
                    longest[i] = max(longest[i], len(v))
    name = scenario + (f" {variant}" if variant else "")
    print(f"{name}: {len(states):,} states")
    total = 0
    for f, vs, es, n in zip(fields, values, elements, longest):
        total += bits(len(vs))
        line = f"  {f:12s} {len(vs):9,} values {bits(len(vs)):3d} bits"
        if es:
            line += f"   a tuple: {len(es):,} distinct elements, at most {n} in one value"
        print(line)
    print(f"  {'every field':12s} {total:23d} bits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
