"""``--check-symmetry``: is the symmetry reduction sound for this model?

A reduction by ``representative`` explores one state of each orbit and takes its
successors for the whole orbit's. That is sound only if the symmetry commutes with the
model's steps: a state and each of its images under the group (``Model.
symmetric_images``) must reach the same orbits. A renaming that misses a field (a
pending request still naming the old broker) breaks it silently: the counts change,
states of different orbits are merged or split, and verdicts can be wrong. The check
expands every image of every expanded state as well, and compares the representatives
both reach, so it costs one expansion more per image; a run that passes it explored
exactly what the plain ``--symmetry`` run explores.
"""
from __future__ import annotations


class SymmetryError(RuntimeError):
    """The model's symmetry does not commute with its steps (``checked``)."""


def checked(model, expand, rep, succ, within=None):
    """``expand`` (successors, each mapped to its representative) that first checks, for
    the state it expands, that each of ``model.symmetric_images(state)`` reaches the same
    representatives through ``succ`` (the model's own successors; ``within``: the
    boundary, when the model has one). Raises SymmetryError at the first that does not."""
    images = model.symmetric_images

    def expand_checked(s):
        out = expand(s)
        mine = {t for _a, t in out}
        for i, g in enumerate(images(s) or ()):
            theirs = {rep(t) for _a, t in succ(g) if within is None or within(t)}
            if theirs != mine:
                raise SymmetryError(_describe(model, s, i, mine, theirs))
        return out
    return expand_checked


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
