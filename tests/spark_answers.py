"""What the Spark explorer must give exactly as BFS does (the differential tests compare
these): counts, depth, how the run ended, verdicts and counterexample lengths."""


def summary(r):
    return {"unique": r.unique_states, "generated": r.generated_states,
            "depth": r.max_depth, "stopped_by": r.stopped_by, "verdicts": r.verdicts(),
            "trace_lengths": {n: len(d.trace) for n, d in r.discoveries.items()}}
