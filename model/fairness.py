"""Fairness classes: which actions a liveness check may assume are eventually taken.

A model names its fair actions by ``action_name`` in ``Model.weakly_fair`` and
``Model.strongly_fair`` (model/contract.py). Each name is one fairness class, every action
of that name: a weakly fair class that stays enabled forever is taken infinitely often; a
strongly fair class that is enabled infinitely often is taken infinitely often. Unlike
TLA+'s ``WF_vars(A)`` / ``SF_vars(A)``, which are about ``<A>_vars`` (A's steps that change
something), a step of the class that leads back to its own state both enables and takes
the class (docs/invariants.md, "Liveness"). Faults and environment inputs (``action_kind``
other than ``"step"``) are never fair: naming one is a ModelError.

``FairnessClasses(model).group(action)`` gives an action's class index (or -1); a state's
enabled classes are a bit mask (bit g for class g), which is what the state graph keeps.
"""
from __future__ import annotations

WEAK = "weak"
STRONG = "strong"
#: classes a model may declare (one bit each in a uint64 mask)
MAX_CLASSES = 64


class FairnessClasses:
    """The model's fairness classes, in declaration order (weak first, then strong)."""

    def __init__(self, model):
        from kmc.model.contract import ModelError

        weak = list(model.weakly_fair or ())
        strong = list(model.strongly_fair or ())
        self.model = model
        self.names = weak + strong
        self.kinds = [WEAK] * len(weak) + [STRONG] * len(strong)
        if len(self.names) > MAX_CLASSES:
            raise ModelError(f"model {model.name!r} declares {len(self.names)} fair action "
                             f"names; at most {MAX_CLASSES} are supported")
        self.index = {n: g for g, n in enumerate(self.names)}
        self.weak_mask = sum(1 << g for g, k in enumerate(self.kinds) if k == WEAK)
        self.strong_mask = sum(1 << g for g, k in enumerate(self.kinds) if k == STRONG)
        self.all_mask = self.weak_mask | self.strong_mask
        self._cache: dict = {}

    def __len__(self) -> int:
        return len(self.names)

    def group(self, action) -> int:
        """The fairness class of ``action``: its index, or -1 when it is not fair."""
        g = self._cache.get(action)
        if g is None:
            g = self.index.get(self.model.action_name(action), -1)
            if g >= 0 and self.model.action_kind(action) != "step":
                from kmc.model.contract import ModelError
                raise ModelError(
                    f"model {self.model.name!r} declares {self.names[g]!r} fair, but "
                    f"{self.model.format_action(action)} is a "
                    f"{self.model.action_kind(action)}: faults and environment inputs are "
                    "never fair; remove the name from weakly_fair/strongly_fair or give "
                    "the step its own action name")
            if len(self._cache) < 1 << 20:
                self._cache[action] = g
        return g

    def enabled_mask(self, actions) -> int:
        """Bit mask of the classes of ``actions`` (the actions enabled in a state)."""
        m = 0
        for a in actions:
            g = self.group(a)
            if g >= 0:
                m |= 1 << g
        return m

    def describe(self, mask: int) -> list[str]:
        return [self.names[g] for g in range(len(self.names)) if mask >> g & 1]


def check_declaration(model) -> None:
    """Eager checks of a model's fairness declaration (``validate_model`` calls it)."""
    from kmc.model.contract import ModelError

    weak, strong = model.weakly_fair or (), model.strongly_fair or ()
    for attr, names in (("weakly_fair", weak), ("strongly_fair", strong)):
        if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
            raise ModelError(f"model {model.name!r}: {attr} must be a tuple of action "
                             f"names (as action_name gives them), got {names!r}")
    both = sorted(set(weak) & set(strong))
    if both:
        raise ModelError(f"model {model.name!r} declares {', '.join(both)} both weakly and "
                         "strongly fair: keep it in strongly_fair only")
    if len(set(weak)) + len(set(strong)) != len(weak) + len(strong):
        raise ModelError(f"model {model.name!r} names a fair action twice")
    known = model.action_names()
    if known is not None:
        unknown = [n for n in list(weak) + list(strong) if n not in known]
        if unknown:
            raise ModelError(f"model {model.name!r} declares unknown action "
                             f"{', '.join(map(repr, unknown))} fair: its actions are "
                             f"{', '.join(known)}")
    FairnessClasses(model)  # the class count


def unmatched_warning(model, seen) -> str | None:
    """One line naming the declared fair classes that no action of a run was named by,
    when the model does not list its action names (``check_declaration`` refuses an
    unknown name when it does). ``seen`` is the action names the run fired (its
    coverage). None when every class matched an action. A warning, not an error: a class
    may name an action that this configuration or these bounds never enable."""
    if model.action_names() is not None:
        return None
    names = list(model.weakly_fair or ()) + list(model.strongly_fair or ())
    seen = sorted(set(seen))
    missing = [n for n in names if n not in seen]
    if not missing:
        return None
    return (f"model {model.name!r} declares {', '.join(map(repr, missing))} fair, but no "
            f"action of this run has that name (action_name gave "
            f"{', '.join(map(repr, seen)) or 'no name: no action fired'}): the class is "
            f"never enabled, so it constrains nothing; check the spelling, or give the "
            f"model action_names() to have it checked before the run")
