"""What the control planes' scenario modules share: ``-p`` parameters from a bounds tuple
and its help table, and a build that refuses a replication factor above the broker count
(a ModelError: the API reports it as bad input)."""
from __future__ import annotations

from kmc.model.contract import ModelError
from kmc.model.scenario import Param, Scenario


def bound_params(bounds, help_table: dict, choices: dict | None = None) -> tuple:
    """One Param per entry of ``help_table`` (name -> (text, min, max)), its default
    taken from ``bounds``."""
    choices = choices or {}
    return tuple(Param(name, getattr(bounds, name), text, lo, hi, choices.get(name, ()))
                 for name, (text, lo, hi) in help_table.items())


def builder(model_cls, defaults):
    """build(variant, params) for ``model_cls``: ``defaults`` with the parameters that
    are fields of its bounds replaced (others are not this model's)."""
    def build(variant, params):
        bounds = defaults._replace(**{k: v for k, v in params.items()
                                      if k in defaults._fields})
        if bounds.rf > bounds.brokers:
            raise ModelError(f"rf={bounds.rf} needs at least {bounds.rf} brokers: "
                             f"use -p brokers={bounds.rf} or a smaller rf")
        return model_cls(variant, bounds)
    return build


def lifecycle_scenario(name, description, bounds, *, model_cls, help_table, variants,
                       default_variant, family, choices=None) -> Scenario:
    """A scenario of a topic-lifecycle model whose bounds are ``bounds``."""
    return Scenario(name=name, description=description, build=builder(model_cls, bounds),
                    params=bound_params(bounds, help_table, choices), variants=variants,
                    default_variant=default_variant, family=family)
