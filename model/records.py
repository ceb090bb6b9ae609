"""Faster ``_replace`` for the NamedTuple records states are made of.

``collections.namedtuple``'s ``_replace`` pops every field name from a keyword dict and
calls ``_make`` (two Python calls and a ``map`` per update): a third of the time the
Kafka models spend building successor states. ``fast_replace(cls)`` gives ``cls`` a
generated ``_replace`` with one keyword parameter per field (default: a marker meaning
"unchanged") that builds the new tuple in one expression. Same results, same type; an
unknown field name is a TypeError instead of a ValueError.
"""
from __future__ import annotations

_KEEP = object()


def fast_replace(cls):
    """Give the NamedTuple class ``cls`` the generated ``_replace``; returns ``cls``."""
    fields = cls._fields
    if not fields:
        return cls
    params = ", ".join(f"{f}=_KEEP" for f in fields)
    values = ", ".join(f"self[{i}] if {f} is _KEEP else {f}" for i, f in enumerate(fields))
    src = (f"def _replace(self, /, *, {params}):\n"
           f"    return _new(_cls, ({values},))\n")
    ns = {"_KEEP": _KEEP, "_new": tuple.__new__, "_cls": cls}
    exec(compile(src, f"<{cls.__name__}._replace>", "exec"), ns)  # noqa: S102
    fn = ns["_replace"]
    fn.__doc__ = f"{cls.__name__} with the given fields replaced."
    cls._replace = fn
    return cls


def fast_replace_all(namespace) -> None:
    """``fast_replace`` every NamedTuple class defined in a module's namespace (``vars(m)``
    or ``globals()``)."""
    for value in list(namespace.values()):
        if isinstance(value, type) and issubclass(value, tuple) and \
                hasattr(value, "_fields") and value.__module__ == namespace.get("__name__"):
            fast_replace(value)
