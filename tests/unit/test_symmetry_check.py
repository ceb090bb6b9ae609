"""``--check-symmetry`` (explorers/symcheck.py): every expanded state's symmetric images
must reach the orbits the state reaches. A sound symmetry passes and explores exactly
what ``--symmetry`` explores; a renaming that misses a field is named by SymmetryError."""
import pytest
from kmc.explorers.symcheck import SymmetryError
from kmc.model.validation.twophase import TwoPhase
from toymodels import Sys, Workers

from kmc import api, eventually
from kmc.cli import main
from kmc.errors import UsageError


class SwappingWorkers(Workers):
    """Workers whose symmetry lists its generators: neighbouring processes swapped, the
    log renamed with them (``log_renamed=False``: a renaming that forgets the log)."""

    def __init__(self, log_renamed=True, **kw):
        super().__init__(**kw)
        self.log_renamed = log_renamed

    def representative(self, s):
        if self.log_renamed:
            return super().representative(s)
        return Sys(tuple(sorted(s.procs)), s.log)  # the log keeps the old ids

    def symmetric_images(self, s):
        out = []
        for i in range(self.n - 1):
            procs = list(s.procs)
            procs[i], procs[i + 1] = procs[i + 1], procs[i]
            swap = {i: i + 1, i + 1: i}
            log = tuple(sorted(swap.get(x, x) for x in s.log)) if self.log_renamed else s.log
            out.append(Sys(tuple(procs), log))
        return out


def _summary(r):
    return r.unique_states, r.generated_states, r.verdicts()


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_a_sound_symmetry_passes_and_explores_what_symmetry_explores(explorer):
    plain = api.check(SwappingWorkers(), explorer=explorer, symmetry=True)
    checked = api.check(SwappingWorkers(), explorer=explorer, check_symmetry=True)
    assert _summary(checked) == _summary(plain)
    assert plain.unique_states < api.check(SwappingWorkers(), explorer=explorer).unique_states


@pytest.mark.parametrize("explorer", ["bfs", "dfs", "simulate"])
def test_a_renaming_that_forgets_a_field_is_named(explorer):
    model = SwappingWorkers(log_renamed=False)
    with pytest.raises(SymmetryError, match="does not commute with the model's steps"):
        api.check(model, explorer=explorer, check_symmetry=True)


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_the_check_runs_when_liveness_is_checked_as_well(explorer):
    class Live(SwappingWorkers):  # liveness records the graph with its own successors
        def properties(self):
            return super().properties() + [
                eventually("SomeDone", lambda s: any(c == self.k for _st, c in s.procs))]
    assert api.check(Live(), explorer=explorer, check_symmetry=True).verdicts() == \
        api.check(Live(), explorer=explorer, symmetry=True).verdicts()
    with pytest.raises(SymmetryError, match="does not commute with the model's steps"):
        api.check(Live(log_renamed=False), explorer=explorer, check_symmetry=True)


def test_the_packed_models_swap_neighbouring_processes():
    plain = api.check(TwoPhase(4), symmetry=True)
    assert _summary(api.check(TwoPhase(4), check_symmetry=True)) == _summary(plain)

    class HalfSymmetric(TwoPhase):  # the TM's record of who prepared is not permuted
        def declare(self, spec):
            super().declare(spec)
            spec.symmetric("RM", ["rmState", "msgPrepared"])
    with pytest.raises(SymmetryError):
        api.check(HalfSymmetric(3), check_symmetry=True)


def test_the_topic_models_broker_renaming_is_checked(monkeypatch):
    plain = api.check("recreate-race", "kip516", symmetry=True)
    checked = api.check("recreate-race", "kip516", check_symmetry=True)
    assert _summary(checked) == _summary(plain)

    from kmc.model.kafka.zk import symmetry
    rename = symmetry.rename

    def forgets_pending(model, w, mp):  # a pending StopReplica keeps its old broker id
        return rename(model, w, mp)._replace(mem=w.mem)
    monkeypatch.setattr(symmetry, "rename", forgets_pending)
    assert api.check("recreate-race", "kip516", symmetry=True).unique_states != \
        plain.unique_states
    with pytest.raises(SymmetryError):
        api.check("recreate-race", "kip516", check_symmetry=True)


def test_models_that_cannot_be_checked_are_bad_input(capsys):
    with pytest.raises(UsageError, match="has no symmetry to check"):
        api.check("diehard", check_symmetry=True)
    with pytest.raises(UsageError, match="define symmetric_images"):
        api.check(Workers(), check_symmetry=True)  # a representative, no mappings listed
    code = main(["check", "diehard", "--check-symmetry", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.startswith("kmc: error: diehard has no symmetry")
    assert len(err.strip().splitlines()) == 1


def test_the_summary_says_what_symmetry_did(capsys):
    runs = {("twophase", "--symmetry"): "reduced",
            ("twophase", "--check-symmetry"): "reduced and checked",
            ("diehard", "--symmetry"): "none declared by the model (not reduced)"}
    for (scenario, flag), said in runs.items():
        main(["check", scenario, flag, "--quiet"])
        first = capsys.readouterr().out.splitlines()[0]
        assert first.endswith(f"— explorer bfs, symmetry {said}"), first
    main(["check", "twophase", "--quiet"])
    assert "symmetry" not in capsys.readouterr().out.splitlines()[0]
    r = api.check("twophase", symmetry=True)
    from kmc.reports.summary import summary
    assert summary(r)["symmetry"] == "reduced" and "symmetry" not in summary(
        api.check("twophase"))
