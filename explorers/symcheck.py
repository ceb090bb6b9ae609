"""``--check-symmetry``: is the symmetry reduction sound for this model?

A reduction by ``representative`` explores one state of each orbit and takes its
successors and its verdicts for the whole orbit's. That is sound only if

- ``representative(t)`` lies in the orbit of ``t`` (it is ``t`` or an image of ``t``
  under the group): a representative that maps states of two orbits to one merges them;
- every property has the same value on a state and on each of its images: a property
  that tells symmetric states apart is decided on whichever state of the orbit the
  explorer happened to keep;
- with liveness properties, the fairness classes enabled in a state are enabled in each
  of its images: a class the symmetry does not map onto itself (one process's step fair,
  the other's not) is taken or not depending on which state of the orbit was kept;
- the symmetry commutes with the model's steps: a state and each of its images under the
  group (``Model.symmetric_images``) reach the same orbits. A renaming that misses a
  field (a pending request still naming the old broker) breaks it silently: the counts
  change, states of different orbits are merged or split, and verdicts can be wrong.

For every expanded state the check asks ``symmetric_images`` (it must answer a list for
every state, not only the initial ones), compares the properties' values (safety
properties' predicates, liveness properties' state predicates) on the state and its
images, compares the fairness classes enabled in the state and in its images (when a
liveness property is checked), checks that every successor's representative lies in the
successor's orbit (the
successor itself, one of its images, or an image of those when the model lists
generators), and expands every image as well to compare the representatives both reach.
It costs one expansion more per image, and a search of a successor's orbit only where
its representative is not among its images; a run that passes it explored exactly what
the plain ``--symmetry`` run explores. The first failure stops the run with a
``SymmetryError`` that names the state and what failed.
"""
from __future__ import annotations


#: states ``in_orbit`` keeps, all orbits together, before it starts over
ORBIT_MEMO = 1 << 18


class SymmetryError(RuntimeError):
    """The model's symmetry does not make a sound reduction (``checked``)."""


class SymmetryCheck:
    """The checks above. ``props``: the run's properties; ``rep``, ``succ``: the model's
    representative and own successors; ``within``: the boundary, when the model has
    one."""

    def __init__(self, model, props, rep, succ, within=None):
        from kmc.invariants.fused import Checker

        self.model, self.rep, self.succ, self.within = model, rep, succ, within
        self.parts = _predicates(props)
        self._values = Checker(self.parts).false_at if self.parts else None
        self.fair = None  # the fairness classes, when a liveness property reads them
        if any(getattr(p, "target", None) is not None for p in props) and (
                model.weakly_fair or model.strongly_fair):
            from kmc.model.fairness import FairnessClasses
            self.fair = FairnessClasses(model)
        self._orbits: dict = {}  # representative -> states known to lie in its orbit
        self._memo_size = 0

    def expand(self, s, raw) -> list:
        """Check the expanded state ``s``, whose successors through ``succ`` are ``raw``;
        returns them within the boundary, each mapped to its representative. Raises
        SymmetryError at the first check that fails."""
        model, rep, within = self.model, self.rep, self.within
        images = self.images_of(s)
        if self._values is not None:
            mine_values = self._values(s)
            for i, g in enumerate(images):
                theirs_values = self._values(g)
                if theirs_values != mine_values:
                    first = min(set(mine_values) ^ set(theirs_values))
                    raise SymmetryError(_not_invariant(model, s, i, self.parts[first].name))
        out, mine = [], set()
        for a, t in raw:
            if within is not None and not within(t):
                continue
            r = rep(t)
            self.in_orbit(t, r)
            out.append((a, r))
            mine.add(r)
        fair = self.fair
        classes = None if fair is None else {fair.group(a) for a, _t in raw} - {-1}
        for i, g in enumerate(images):
            their_succ = self.succ(g)
            theirs = {rep(t) for _a, t in their_succ if within is None or within(t)}
            if theirs != mine:
                raise SymmetryError(_describe(model, s, i, mine, theirs))
            if classes is not None:
                enabled = {fair.group(a) for a, _t in their_succ} - {-1}
                if enabled != classes:
                    odd = fair.names[min(enabled ^ classes)]
                    raise SymmetryError(_unfair(model, s, i, odd))
        return out

    def images_of(self, s) -> list:
        got = self.model.symmetric_images(s)
        if not isinstance(got, (list, tuple)):
            raise SymmetryError(
                f"symmetric_images answered {got!r} instead of a list of states, so "
                f"--check-symmetry cannot check the reduction: list the symmetry's "
                f"mappings for every state, not only the initial ones (the state: "
                f"{_one_line(self.model, s)})")
        return got

    def in_orbit(self, t, r) -> None:
        """Raise SymmetryError unless ``r`` (``t``'s representative) is ``t`` or an image
        of it, the images' images included (the model may list generators). The states
        a search went through are kept per representative (up to ``ORBIT_MEMO``): a
        later search stops at any of them, as they lie in the orbit too."""
        if r == t:
            return
        known = self._orbits.get(r)
        if known is None:
            if self._memo_size >= ORBIT_MEMO:
                self._orbits.clear()
                self._memo_size = 0
            known = self._orbits[r] = {r}
        if t in known:
            return
        seen, frontier = {t}, [t]
        while frontier:
            nxt = []
            for x in frontier:
                for g in self.images_of(x):
                    if g in known:
                        known |= seen
                        self._memo_size += len(seen)
                        return
                    if g not in seen:
                        seen.add(g)
                        nxt.append(g)
            frontier = nxt
        raise SymmetryError(
            f"representative() maps a state to one outside its orbit (neither the state "
            f"nor any of its images under symmetric_images), so --symmetry would merge "
            f"states of different orbits; make representative return an image of the "
            f"state (the state: {_one_line(self.model, t)}; its representative: "
            f"{_one_line(self.model, r)})")


def _predicates(props) -> list:
    """The state predicates of ``props``, as Property values: a safety property's own,
    a liveness property's awaited predicate and trigger."""
    out = []
    for p in props:
        target = getattr(p, "target", None)
        if target is None:
            out.append(p)
        else:
            out += [q for q in (target, p.trigger) if q is not None]
    return out


def _not_invariant(model, s, i, name) -> str:
    return (f"property {name} is not symmetric: it has another value on a state and on "
            f"its image #{i + 1} (symmetric_images), so --symmetry would decide it on "
            f"whichever state of the orbit it kept; declare properties that the symmetry "
            f"maps onto themselves, or drop the symmetry (the state: {_one_line(model, s)})")


def _unfair(model, s, i, name) -> str:
    return (f"fairness class {name!r} is enabled in a state and not in its image #{i + 1} "
            f"(symmetric_images), or the other way round: the symmetry does not map the "
            f"fairness classes onto themselves, so --symmetry would take the class on "
            f"whichever state of the orbit it kept; declare one class for all the "
            f"symmetric processes' steps, or drop the symmetry (the state: "
            f"{_one_line(model, s)})")


def _describe(model, s, i, mine, theirs) -> str:
    only_mine, only_theirs = len(mine - theirs), len(theirs - mine)
    return (f"the symmetry does not commute with the model's steps: a state and its image "
            f"#{i + 1} (symmetric_images) reach different orbits ({only_mine} only from the "
            f"state, {only_theirs} only from the image), so --symmetry would merge or split "
            f"states of different orbits; fix representative/symmetric_images so that they "
            f"rename every field (the state: {_one_line(model, s)})")


def _one_line(model, s) -> str:
    try:
        text = model.format_state(s)
    except Exception:  # a display that fails must not hide the finding
        text = repr(s)
    text = " ".join(str(text).split())
    return text if len(text) <= 300 else text[:297] + "..."
