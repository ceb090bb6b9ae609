"""Properties, declared once. Knows the model's state types, never an engine."""
from kmc.invariants.properties import (  # noqa: F401
    ALWAYS, QUIESCENT, SOMETIMES, Property, always, quiescent, sometimes,
)
