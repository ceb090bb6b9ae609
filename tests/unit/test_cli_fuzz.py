"""Fuzz the argument and scenario-file parsing: whatever the input, kmc answers with exit
0, 1 or 2 and, for 2, exactly one line on stderr — never a traceback (exit 3)."""
import string

from hypothesis import HealthCheck, given, settings, strategies as st

from kmc.cli import main

words = st.sampled_from(["check", "list", "twophase", "diehard", "tcommit", "--json",
                         "--variant", "standard", "broken-commit", "-p", "rm=2", "rm=-1",
                         "rm=x", "=", "--max-states", "--max-depth", "--time-limit", "5",
                         "0", "-3", "nan", "--explorer", "dfs", "simulate", "--seed",
                         "--walks", "2", "--quiet", "--symmetry", "--help-me", ""])
text = st.text(alphabet=string.printable, max_size=12)


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(argv=st.lists(st.one_of(words, text), max_size=7))
def test_random_arguments_never_crash(argv, capsys):
    argv = [a for a in argv if a not in ("-h", "--help", "--version")]
    if "--max-states" not in argv and "check" in argv:
        argv += ["--max-states", "500", "--quiet"]  # keep each example fast
    code = main(argv)
    _, err = capsys.readouterr()
    assert code in (0, 1, 2, 4), (argv, err)
    if code == 2:
        assert err.count("\n") == 1 and "Traceback" not in err


toml_values = st.one_of(st.integers(-5, 40), st.text(max_size=6), st.booleans(),
                        st.lists(st.integers(), max_size=2))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(scenario=st.sampled_from(["twophase", "diehard", "nope", ""]),
       variant=st.one_of(st.none(), st.sampled_from(["standard", "broken-commit", "zz"])),
       params=st.dictionaries(st.sampled_from(["rm", "x"]), toml_values, max_size=2),
       bounds=st.dictionaries(st.sampled_from(["max_states", "max_depth", "speed"]),
                              toml_values, max_size=2),
       junk=st.text(max_size=10))
def test_random_scenario_files_never_crash(tmp_path, capsys, scenario, variant, params,
                                           bounds, junk):
    import tomli_w
    doc = {"scenario": scenario, "params": params, "bounds": bounds}
    if variant:
        doc["variant"] = variant
    try:
        body = tomli_w.dumps(doc)
    except Exception:
        body = junk
    f = tmp_path / "fuzz.toml"
    f.write_text(body + ("\n" + junk if junk.startswith("#") else ""))
    code = main(["check", str(f), "--max-states", "300", "--quiet"])
    _, err = capsys.readouterr()
    assert code in (0, 1, 2, 4), (body, err)
    if code == 2:
        assert err.count("\n") == 1 and "Traceback" not in err
