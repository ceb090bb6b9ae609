"""Playing a KRaft story step by step in a test: each step must be one of the model's
enabled actions in the state it is taken from."""


def play(model, steps, w=None):
    """The state after ``steps`` from ``w`` (default: the model's initial state)."""
    if w is None:
        (w,) = model.init_states()
    for a in steps:
        assert a in model.actions(w), (a, model.actions(w))
        w = model.next_state(w, a)
    return w
