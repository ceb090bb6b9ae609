"""The Model contract every protocol model implements (names borrowed from Stateright).

A model author writes four methods: ``init_states``, ``actions``, ``next_state`` and
``properties``. Everything else has a default. States must be immutable and canonical
(see ``model.encoding``): equal states encode to equal bytes in every process.

Explorers never call Kafka code directly; they only see this contract.
"""
from __future__ import annotations

from typing import Any, Hashable, Sequence

from kmc.model.encoding import NonCanonicalState, check_canonical


class ModelError(ValueError):
    """A model definition is unusable. The message says what is wrong and how to fix it."""


class Model:
    """Base class of every model. Subclasses override at least the first four methods."""

    #: short name used in reports; subclasses set it
    name: str = "model"

    # ---- the four methods a model author must write -------------------------------------
    def init_states(self) -> Sequence[Hashable]:
        raise NotImplementedError

    def actions(self, state) -> Sequence[Hashable]:
        """Actions enabled in ``state``, in a deterministic order (traces store indices)."""
        raise NotImplementedError

    def next_state(self, state, action):
        """The successor of ``state`` under ``action``, or None when the action does nothing."""
        raise NotImplementedError

    def properties(self) -> Sequence[Any]:
        """``invariants.Property`` values: always / quiescent / sometimes, and the
        liveness kinds eventually / leads_to (``invariants.liveness``)."""
        return ()

    # ---- optional -----------------------------------------------------------------------
    def enabled(self, state) -> Sequence[Hashable]:
        """``actions(state)`` asked by a property (which client still has a step). A
        model may answer from the expansion it has just computed for that very state."""
        return self.actions(state)

    def within_boundary(self, state) -> bool:
        """States outside the boundary are dropped, as in Stateright (neither counted nor
        expanded). Use it for scenario bounds such as "at most 2 incarnations"."""
        return True

    def representative(self, state):
        """Canonical member of the state's symmetry class; identity means no symmetry."""
        return state

    #: set True in subclasses that implement ``representative`` (explorers skip the call
    #: otherwise, because it sits on the hot path)
    has_symmetry: bool = False

    def symmetric_images(self, state):
        """``state`` under the other mappings of the symmetry group ``representative``
        reduces by (all of them, or a set that generates the group), or None when the
        model does not say. ``--check-symmetry`` checks with them that the reduction is
        sound: each image reaches the same representatives as the state itself."""
        return None

    def partition_key(self, state):
        """The part of a state that most actions leave unchanged (None: no such part).
        The Spark explorer gives every state with the same partition key the same owner
        partition (Lerda and Sisto's partial hashing for distributed SPIN), so most
        successors, and most states reached from several parents, stay in one partition
        instead of being shipped once per parent's partition. Only placement changes:
        counts, verdicts and traces do not. Pick fields that change on few transitions
        but take hundreds of values, or the partitions will be unbalanced."""
        return None

    #: when ``partition_key(s)`` is ``tuple(s[i] for i in partition_fields)`` for a
    #: tuple state whose repr is the plain tuple repr: the Spark keys are then made from
    #: one repr per field instead of a repr of the state plus one of its partition key
    #: (the same keys, 20% less fingerprinting on lifecycle-large)
    partition_fields: tuple | None = None

    #: id of a state object that ``successors`` hands out -> ``fingerprint128`` of the
    #: state, for objects that stay alive for the whole run (None: none known). A BFS
    #: takes such a successor's key from here instead of computing it; a successor
    #: function that hands out states recorded by an earlier run (``kmc mutate``'s
    #: reusing runs) knows their keys already
    known_keys: dict | None = None

    # ---- fairness (liveness properties only; model/fairness.py) -------------------------
    #: action names (as ``action_name`` gives them) that are weakly fair: a behaviour in
    #: which one of them stays enabled forever takes it infinitely often (TLA+'s WF, but a
    #: step that leaves the state as it is counts as enabling and taking it). A
    #: name is one class: name the actions per process (``("Step", p)`` -> ``"Step-p"``)
    #: for per-process fairness. Default: nothing is fair, so a behaviour may stop (stutter
    #: forever) in any state, as an unfair TLA+ specification may.
    weakly_fair: tuple = ()
    #: action names that are strongly fair: enabled infinitely often, then taken infinitely
    #: often (TLA+'s SF, no-op steps counting as for weak fairness). Faults and
    #: environment inputs (``action_kind`` other than ``"step"``) are never fair; naming
    #: one is an error.
    strongly_fair: tuple = ()

    def is_fault(self, action) -> bool:
        """Fault actions (crash, loss, failover) do not count when deciding quiescence:
        a state is quiescent when no non-fault action is enabled."""
        return False

    def format_action(self, action) -> str:
        return repr(action)

    def action_kind(self, action) -> str:
        """How displays tag an action: ``"step"`` (the protocol acting), ``"input"`` (the
        environment's requests: an admin operation, a client's call) or ``"fault"`` (a
        crash, a loss, a failover). Default: ``fault`` for ``is_fault`` actions."""
        return "fault" if self.is_fault(action) else "step"

    def action_name(self, action) -> str:
        """The name coverage groups an action under and fairness matches: by default a
        string action itself (``"Send"`` -> ``Send``), the first element of a tuple action
        whose head is a string (``("Deliver", 1)`` -> ``Deliver``), else the formatted
        action."""
        if isinstance(action, str):
            return action
        if isinstance(action, tuple) and action and isinstance(action[0], str):
            return action[0]
        return self.format_action(action)

    def action_names(self) -> Sequence[str] | None:
        """Every action name the model can fire, when it knows them: coverage then lists
        the ones that never fired (a sign of a vacuous scenario). None: not declared."""
        return None

    def caveats(self) -> Sequence[str]:
        """What this configuration of the model does not check soundly, one line each
        (a property left out, and why): every run shows them as warnings. Default: none."""
        return ()

    def format_state(self, state) -> str:
        return repr(state)

    def code_modules(self) -> Sequence[str] | None:
        """The modules holding the model's own code, when the model's class is not
        enough to find them (``kmc mutate`` mutates these modules and the modules of
        their packages they import). None: the module of the model's class."""
        return None

    def state_to_json(self, state):
        """A JSON-ready view of a state (for trace files and reports)."""
        from kmc.model.encoding import to_jsonable

        return to_jsonable(state)

    def action_actor(self, action) -> str:
        """Which component performs the action (lane in sequence pictures)."""
        return "system"

    def action_message(self, action, state=None):
        """For message-sequence pictures: (from lane, to lane, label) when the action sends
        or delivers a message, else None. ``state`` is the state the action is taken in."""
        return None

    def lanes(self) -> list[str]:
        """Lane names for sequence pictures, in display order (controllers, store,
        brokers, clients). Empty means: derive them from the trace's actors."""
        return []

    # ---- compiled models (model.packed sets these) --------------------------------------
    #: True when states are ints below 2**64 that are their own collision-free keys
    packed: bool = False
    #: number of distinct actions when actions are the ints 0..n_actions-1 (packed)
    n_actions: int | None = None
    #: packed models: ``make_successor_states(coverage)`` returns a function giving the
    #: successor states of a state while counting fired actions into ``coverage``
    make_successor_states = None

    # ---- fast path ----------------------------------------------------------------------
    def successors(self, state) -> list[tuple[Any, Any]]:
        """(action, next state) for every enabled action, in ``actions`` order.

        Compiled models (``model.packed``) override this with generated code; the default
        is defined through ``actions``/``next_state`` and is what every explorer calls.
        """
        out = []
        acts = self.actions(state)
        if acts is None or isinstance(acts, (set, frozenset, str, bytes)):
            # a set's order changes from run to run; a str would be split into letters
            _listed(self, "actions(state)", acts, "actions")
        for a in acts:
            t = self.next_state(state, a)
            if t is not None:
                out.append((a, t))
        return out


def names_partition_key(model: Model) -> bool:
    """Does ``model`` name a partition key: does its class override ``partition_key``,
    or does the model set it itself (a model whose scenarios differ in having one)?"""
    return "partition_key" in vars(model) or \
        type(model).partition_key is not Model.partition_key


def validate_model(model: Model, sample: int = 64) -> None:
    """Eager checks with errors that say how to fix the model.

    Looks at the initial states and the successors of a few of them: no init states,
    non-canonical or unhashable states, duplicate property names, a property that is not a
    Property value, an answer that is not a list (or is a set, whose order changes from
    run to run), a display hook answering with the wrong type, a property whose
    predicate answers something other than True or False on an initial state.
    """
    from kmc.invariants.properties import Property

    if not isinstance(model.name, str) or not model.name:
        raise ModelError(f"model {type(model).__name__}: name is {model.name!r}: set it to "
                         "a non-empty str, the name reports show")
    try:
        inits = _listed(model, "init_states()", model.init_states(), "states")
    except NotImplementedError:
        raise ModelError(f"model {model.name!r} does not define init_states(): "
                         "return a list of initial states") from None
    if not inits:
        raise ModelError(f"model {model.name!r} has no initial states: "
                         "init_states() must return at least one state")
    seen = set()
    props = _listed(model, "properties()", model.properties(), "properties")
    for p in props:
        if not isinstance(p, Property):
            raise ModelError(f"model {model.name!r}: properties() returned {p!r}; "
                             "use invariants.always/sometimes/quiescent to build properties")
        if not isinstance(p.name, str) or not p.name.strip() or not p.name.isprintable() \
                or len(p.name) > NAME_CHARS:
            raise ModelError(f"model {model.name!r}: property name {p.name!r:.80} is not one "
                             f"line of at most {NAME_CHARS} printable characters: name it "
                             "so (reports, file names and suites show it)")
        if p.name in seen:
            raise ModelError(f"model {model.name!r} has two properties named {p.name!r}: "
                             "give each property a unique name")
        seen.add(p.name)
    from kmc.model.fairness import check_declaration
    check_declaration(model)
    for s in inits[:sample]:
        _check_answers(model, props, s)
    frontier = inits[:sample]
    checked = 0
    seen: dict = {}  # the parts found canonical, shared by the sampled states
    printed: dict = {}  # repr -> the sampled state that prints so
    shown = False
    while frontier and checked < sample:
        s = frontier.pop()
        checked += 1
        _check_state(model, s, seen)
        _check_prints_alike(model, s, printed)
        succs = model.successors(s)
        if succs and not shown:
            _check_display(model, s, succs[0][0])
            shown = True
        for a, t in succs:
            _check_action(model, a)
            _check_prints_alike(model, t, printed)
        for _a, t in succs[:4]:
            frontier.append(t)


#: the longest property name: tables, file names and pictures show it whole
NAME_CHARS = 200


def _listed(model: Model, method: str, value, what: str) -> list:
    """``value`` as the list it must be: the explorers, the trace files (which store
    the index of an initial state and of each action) and the reports' declaration order
    all read these answers in order, so a set, whose order may change from one run to
    the next (strings hash differently in every process), would make runs disagree and
    traces fail to replay."""
    if isinstance(value, (set, frozenset, str, bytes)) or not hasattr(value, "__iter__"):
        raise ModelError(f"model {model.name!r}: {method} returned "
                         f"{'None' if value is None else type(value).__name__}: "
                         f"return a list of {what}, in a deterministic order")
    return list(value)


#: what the reports need from each display hook (``_check_display``)
_TEXT = "return a str"


def _check_display(model: Model, state, action) -> None:
    """The hooks reports call after the run (the text summary, ``--out``), asked once
    here, so that one answering with the wrong type is named now rather than found
    half-way through writing a report."""
    import json

    def wrong(method, value, fix):
        raise ModelError(f"model {model.name!r}: {method} returned "
                         f"{type(value).__name__} {value!r:.60}: {fix}")
    for method, value in (("format_state(state)", model.format_state(state)),
                          ("format_action(action)", model.format_action(action)),
                          ("action_name(action)", model.action_name(action))):
        if not isinstance(value, str):
            wrong(method, value, _TEXT)
    actor = model.action_actor(action)
    if actor is not None and not isinstance(actor, str):
        wrong("action_actor(action)", actor, "return a lane name (a str)")
    kind = model.action_kind(action)
    if kind not in (None, "step", "input", "fault"):
        wrong("action_kind(action)", kind, "return \"step\", \"input\" or \"fault\"")
    msg = model.action_message(action, state)
    if msg is not None and not (isinstance(msg, (tuple, list)) and len(msg) == 3):
        wrong("action_message(action, state)", msg,
              "return None or (from lane, to lane, label)")
    lanes = model.lanes()
    if not isinstance(lanes, (list, tuple)) or not all(isinstance(x, str) for x in lanes):
        wrong("lanes()", lanes, "return a list of lane names (strs)")
    view = model.state_to_json(state)
    try:
        json.dumps(view, default=str)  # as the trace files are written
    except (TypeError, ValueError) as e:
        raise ModelError(f"model {model.name!r}: state_to_json(state) returned a value "
                         f"JSON cannot hold ({e}): return dicts with str keys, lists, "
                         "strs, numbers, bools and None") from None


def _check_answers(model: Model, props: list, s) -> None:
    """Each state predicate answers True or False on the initial state ``s``: the
    explorers read an answer by its truth, so a predicate whose ``return`` is missing
    (None) would be violated in every state, and one answering a list or a str would
    hold or fail by its length. Initial states only: the explorers ask them anyway,
    while an answer asked of another state would be a question ``kmc mutate``'s reuse
    of recorded answers does not expect. A predicate that raises is left to the
    explorer, which reports it with its state."""
    for p in props:
        parts = [x for x in (getattr(p, "trigger", None), getattr(p, "target", None))
                 if x is not None] or [p]
        for part in parts:
            try:
                v = part.check(s)
            except Exception:
                continue
            t = type(v)
            if t is not bool and not (t.__module__ == "numpy" and
                                      t.__name__ in ("bool", "bool_")):
                raise ModelError(f"model {model.name!r}: property {p.name!r} answered "
                                 f"{t.__name__} {v!r:.60} for a state: return True or "
                                 "False (a missing `return` answers None)")


def _check_action(model: Model, a) -> None:
    """Coverage counts actions in a dict, and traces name them: an action is a value."""
    try:
        hash(a)
    except TypeError:
        raise ModelError(f"model {model.name!r}: actions(state) answered an action of "
                         f"type {type(a).__name__}, which cannot be hashed: use str, "
                         "tuples or NamedTuples") from None


def _check_prints_alike(model: Model, s, printed: dict) -> None:
    """A state's key is made from its repr (``model.encoding``): two different states
    that print alike are one state to every explorer, so a repr must show every part
    of the state. (Two equal states that print apart, as ``Idle(n=0)`` and ``Busy(n=0)``
    of two NamedTuple types, are two states to every explorer.)"""
    try:
        r = repr(s)
    except RecursionError:
        return  # named by ``_check_state`` when it samples the state
    other = printed.setdefault(r, s)
    if other is not s and other != s:
        raise ModelError(f"model {model.name!r}: two different states print alike "
                         f"({r:.80}): make __repr__ show every field, or kmc counts them "
                         "as one")


def _check_state(model: Model, s, seen: dict) -> None:
    try:
        hash(s)
    except TypeError:
        raise ModelError(f"model {model.name!r} produced an unhashable state of type "
                         f"{type(s).__name__}: use tuples, NamedTuples or frozen dataclasses, "
                         "never lists, dicts or sets") from None
    try:
        check_canonical(s, seen=seen)
    except NonCanonicalState as e:
        raise ModelError(f"model {model.name!r} produced a non-canonical state: {e}") from None
    except RecursionError:
        raise ModelError(f"model {model.name!r} produced a state nested deeper than kmc "
                         "can check (Python's recursion limit): make it flatter, e.g. a "
                         "tuple of fields rather than a chain of nested tuples") from None
