"""Hostile and mistaken inputs to the `kmc` command, as data: each case is a name, the
files it needs (path relative to a scratch directory -> content; a FIFO is `FIFO`) and
the arguments (``{d}`` is the scratch directory). The expected answer of every case is the
same: exit 2 with one line on stderr, nothing left in the scratch directory but the
case's own files, no process left. tests/unit/test_hostile_inputs.py runs them in
process; ``python tests/hostile_cases.py KMC...`` runs them against any kmc command and
prints the counts (cases, exit 2, exit 3, other, leaks)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

TRACE = None  # filled lazily: a real trace document to corrupt


def _trace() -> dict:
    global TRACE
    if TRACE is None:
        from kmc import api
        from kmc.reports.summary import trace_meta

        r = api.check("twophase", "broken-commit")
        TRACE = r.discoveries["TCConsistent"].trace.to_dict(
            r.extra["model"], **trace_meta(r, "TCConsistent"))
    return json.loads(json.dumps(TRACE))


def _edited(edit) -> str:
    doc = _trace()
    edit(doc)
    return json.dumps(doc)


def cases() -> list[tuple[str, dict, list[str]]]:
    deep_toml = "a = " + "[" * 5000 + "]" * 5000 + "\n"
    deep_json = "[" * 100000 + "]" * 100000
    huge = "1" * 5000
    out = [
        # paths that name the wrong kind of thing, checked before any work
        ("out-is-a-file", {"f": "x"}, ["check", "twophase", "--out", "{d}/f"]),
        ("out-under-a-file", {"f": "x"}, ["check", "twophase", "--out", "{d}/f/sub"]),
        ("out-empty", {}, ["check", "twophase", "--out", ""]),
        ("variant-twice", {}, ["check", "twophase", "--variant", "standard", "--variant",
                               "broken-commit"]),
        ("mutate-tier-with-scenario", {}, ["mutate", "--scenario", "diehard", "--tier",
                                           "full", "--list"]),
        ("show-model-without-state-graph", {"t.json": "TRACE"},
         ["show", "{d}/t.json", "--model", "models.py:make"]),
        ("out-symlink-loop", {"a": "LINK:b", "b": "LINK:a"},
         ["check", "twophase", "--out", "{d}/a"]),
        ("pictures-is-a-file", {"f": "x", "t.json": "TRACE"},
         ["show", "{d}/t.json", "--pictures", "{d}/f"]),
        ("junit-is-a-dir", {"dir/x": "x"}, ["regress", "--tier", "smoke", "--junit", "{d}/dir"]),
        ("markdown-under-a-file", {"f": "x"},
         ["regress", "--tier", "smoke", "--markdown", "{d}/f/s.md"]),
        ("regress-out-is-a-file", {"f": "x"}, ["regress", "--tier", "smoke", "--out", "{d}/f"]),
        ("checkpoint-dir-is-a-file", {"f": "x"},
         ["check", "twophase", "--explorer", "spark", "--checkpoint-dir", "{d}/f"]),
        ("checkpoint-dir-unrelated", {"ck/notes.txt": "mine"},
         ["check", "twophase", "--explorer", "spark", "--checkpoint-dir", "{d}/ck"]),
        ("executors-absurd", {}, ["check", "twophase", "--explorer", "spark",
                                  "--executors", "100000"]),
        ("partitions-absurd", {}, ["check", "twophase", "--explorer", "spark",
                                   "--partitions", "1" + "0" * 30]),
        ("master-empty", {}, ["check", "twophase", "--explorer", "spark", "--master", ""]),
        ("checkpoint-dir-empty", {}, ["check", "twophase", "--explorer", "spark",
                                      "--checkpoint-dir", " "]),
        ("cluster-workers-absurd", {}, ["cluster", "start", "--dir", "{d}/c", "--workers",
                                        "1" + "0" * 20]),
        # hostile files
        ("scenario-fifo", {"s.toml": "FIFO"}, ["check", "{d}/s.toml"]),
        ("trace-fifo", {"t.json": "FIFO"}, ["show", "{d}/t.json"]),
        ("scenario-deep", {"s.toml": deep_toml}, ["check", "{d}/s.toml"]),
        ("suite-deep", {"s.toml": deep_toml}, ["regress", "{d}/s.toml"]),
        ("trace-deep", {"t.json": deep_json}, ["show", "{d}/t.json"]),
        ("replay-deep", {"t.json": deep_json}, ["replay", "{d}/t.json"]),
        ("scenario-is-a-dir", {"s.toml/x": "x"}, ["check", "{d}/s.toml"]),
        ("scenario-description-not-text", {"s.toml": 'scenario = "twophase"\n'
                                                     'description = 5\n'},
         ["check", "{d}/s.toml"]),
        ("trace-unknown-kind", {"t.json": "EDIT:kind=nonsense"}, ["show", "{d}/t.json"]),
        ("trace-step-action-number", {"t.json": "EDIT:steps.1.action=5"},
         ["show", "{d}/t.json"]),
        ("trace-step-fault-text", {"t.json": "EDIT:steps.1.fault=yes"},
         ["show", "{d}/t.json"]),
        ("trace-step-kind-unknown", {"t.json": "EDIT:steps.1.kind=weird"},
         ["show", "{d}/t.json"]),
        ("trace-step-changed-text", {"t.json": "EDIT:steps.1.changed=abc"},
         ["show", "{d}/t.json"]),
        ("trace-lanes-numbers", {"t.json": "EDIT:lanes=[1,2]"}, ["show", "{d}/t.json"]),
        ("trace-fingerprint-not-hex", {"t.json": 'EDIT:steps.1.fingerprint="zz"'},
         ["replay", "{d}/t.json"]),
        ("trace-step-index-wrong", {"t.json": "EDIT:steps.1.index=7"},
         ["replay", "{d}/t.json"]),
        ("trace-version-3-not-a-lasso", {"t.json": "EDIT:version=3"},
         ["replay", "{d}/t.json"]),
        ("trace-key-twice", {"t.json": "TRACE-KEY-TWICE"}, ["replay", "{d}/t.json"]),
        ("trace-symlink-loop", {"a.json": "LINK:b.json", "b.json": "LINK:a.json"},
         ["show", "{d}/a.json"]),
        # a trace file names its model but never chooses code to run
        ("trace-names-code", {"t.json": 'EDIT:scenario="os:system"'},
         ["replay", "{d}/t.json"]),
        ("trace-names-a-file", {"t.json": 'EDIT:scenario="evil.py:make"',
                                "evil.py": "open('ran', 'w').close()\n"},
         ["show", "{d}/t.json", "--pictures", "{d}/p", "--state-graph"]),
        # strict parsing
        ("param-underscore", {}, ["check", "twophase", "-p", "rm=1_0"]),
        ("param-arabic-digit", {}, ["check", "twophase", "-p", "rm=\u0663"]),
        ("param-hex", {}, ["check", "twophase", "-p", "rm=0x3"]),
        ("param-empty-name", {}, ["check", "twophase", "-p", "=3"]),
        ("variant-empty", {}, ["check", "twophase", "--variant", ""]),
        ("walks-with-bfs", {}, ["check", "twophase", "--walks", "3"]),
        ("seed-with-dfs", {}, ["check", "twophase", "--explorer", "dfs", "--seed", "1"]),
        ("master-with-bfs", {}, ["check", "twophase", "--master", "local[1]"]),
        ("newline-argument", {}, ["check", "check", "\n"]),
        ("param-twice", {}, ["check", "twophase", "-p", "rm=3", "-p", "rm=4"]),
        ("unknown-option", {}, ["check", "twophase", "--bogus"]),
        ("scenario-name-not-text", {"s.toml": "scenario = 5\n"}, ["check", "{d}/s.toml"]),
        # a report never replaces what the run reads
        ("junit-is-the-suite", {"s.toml": SUITE}, ["regress", "{d}/s.toml", "--junit",
                                                   "{d}/s.toml"]),
        ("markdown-is-the-suite", {"s.toml": SUITE}, ["regress", "{d}/s.toml", "--markdown",
                                                      "{d}/./s.toml"]),
        ("junit-in-stored-traces", {"s.toml": SUITE, "regressions/diehard/NotSolved.json": "{}"},
         ["regress", "{d}/s.toml", "--junit", "{d}/regressions/diehard/NotSolved.json"]),
        ("junit-and-markdown-one-file", {"s.toml": SUITE},
         ["regress", "{d}/s.toml", "--junit", "{d}/r", "--markdown", "{d}/r"]),
        # suite entries
        ("suite-scenario-not-text", {"s.toml": "[[entry]]\nscenario = 5\n"},
         ["regress", "{d}/s.toml"]),
        ("suite-id-empty", {"s.toml": '[[entry]]\nid = ""\nscenario = "diehard"\n'},
         ["regress", "{d}/s.toml"]),
        ("suite-seed-with-bfs", {"s.toml": SUITE + "seed = 3\n"}, ["regress", "{d}/s.toml"]),
        ("suite-traces-nul", {"s.toml": 'traces = "t\\u0000x"\n' + SUITE},
         ["regress", "{d}/s.toml", "--update"]),
        ("suite-empty", {"s.toml": "version = 1\n"}, ["regress", "{d}/s.toml"]),
        ("suite-only-matches-none", {"s.toml": SUITE},
         ["regress", "{d}/s.toml", "--only", "zzz"]),
        # a user model's own failures are its bugs, named
        ("model-factory-exits", {"exits_in_factory.py": MODEL + "def quits():\n"
                                                          "    raise SystemExit(0)\n"},
         ["check", "{d}/exits_in_factory.py:quits"]),
        ("model-exits-on-import", {"exits_on_import.py": "import sys\nsys.exit(0)\n"},
         ["check", "{d}/exits_on_import.py:make"]),
        ("model-next-state-raises", {"fails_in_next.py": MODEL},
         ["check", "{d}/fails_in_next.py:make"]),
        ("model-properties-raise", {"fails_in_props.py": MODEL + "class N(M):\n"
                                    "    def properties(self): raise ValueError('no')\n"
                                    "def props(): return N()\n"},
         ["check", "{d}/fails_in_props.py:props"]),
        ("model-raises-generator-exit",
         {"genexit.py": MODEL.replace("{}['boom']", "(_ for _ in ()).throw(GeneratorExit)")},
         ["check", "{d}/genexit.py:make"]),
        ("model-is-a-dir", {"dirmodel.py/x": "x"}, ["check", "{d}/dirmodel.py:make"]),
        ("model-without-factory", {"nofactory.py": "x = 1\n"}, ["check", "{d}/nofactory.py"]),
        # a cluster state file that kmc did not write
        ("cluster-state-malformed", {"c/state.json": "{}"},
         ["cluster", "status", "--dir", "{d}/c"]),
        ("cluster-state-not-json", {"c/state.json": "garbage"},
         ["cluster", "stop", "--dir", "{d}/c"]),
        ("cluster-dir-empty", {}, ["cluster", "status", "--dir", ""]),
        # a directory that looks writable and is not (/proc takes no new entries)
        ("pictures-in-proc", {"t.json": "TRACE"},
         ["show", "{d}/t.json", "--pictures", "/proc/kmc-pictures"]),
        ("checkpoint-dir-in-proc", {},
         ["check", "twophase", "--explorer", "spark", "--checkpoint-dir", "/proc/kmc-ckpt"]),
        ("out-in-proc", {}, ["check", "twophase", "--out", "/proc/kmc-out"]),
        ("regress-out-in-sys", {}, ["regress", "--tier", "smoke", "--out", "/sys/kmc-out"]),
        # integers longer than Python converts (4300 digits)
        ("trace-huge-number", {"t.json": '{"version": ' + huge + "}"},
         ["replay", "{d}/t.json"]),
        ("param-huge-number", {}, ["check", "twophase", "-p", "rm=" + huge]),
        ("scenario-huge-number", {"s.toml": 'scenario = "twophase"\n[params]\nrm = '
                                            + huge + "\n"}, ["check", "{d}/s.toml"]),
        ("model-param-huge-number", {"sized.py": MODEL + "def sized(n=1): return M()\n"},
         ["check", "{d}/sized.py:sized", "-p", "n=" + huge]),
        ("mutate-list-with-markdown", {}, ["mutate", "--scenario", "diehard", "--list",
                                           "--markdown", "{d}/m.md"]),
    ]
    return out


#: a suite of one entry
SUITE = '[[entry]]\nscenario = "diehard"\n'
#: a user model whose next_state fails on its fourth state
MODEL = """from kmc import Model, always
class M(Model):
    def init_states(self): return [0]
    def actions(self, s): return [1]
    def next_state(self, s, a): return s + 1 if s < 3 else {}['boom']
    def properties(self): return [always('P', lambda s: True)]
def make(): return M()
"""


def materialise(d: str, files: dict) -> None:
    for rel, content in files.items():
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if content == "FIFO":
            os.mkfifo(path)
        elif content == "TRACE":
            with open(path, "w") as f:
                json.dump(_trace(), f)
        elif content == "TRACE-KEY-TWICE":  # a key given twice: the last would win
            with open(path, "w") as f:
                f.write(json.dumps(_trace()).replace('"init_index": 0',
                                                     '"init_index": 0, "init_index": 5', 1))
        elif content.startswith("LINK:"):
            os.symlink(content[5:], path)
        elif content.startswith("EDIT:"):
            key, _, value = content[5:].partition("=")
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass

            def edit(doc, key=key, value=value):
                *head, last = key.split(".")
                for k in head:
                    doc = doc[int(k)] if isinstance(doc, list) else doc[k]
                doc[int(last) if isinstance(doc, list) else last] = value
            with open(path, "w") as f:
                f.write(_edited(edit))
        else:
            with open(path, "w") as f:
                f.write(content)


def listing(d: str) -> set:
    return {os.path.relpath(os.path.join(r, n), d) for r, ds, fs in os.walk(d)
            for n in ds + fs}


def main(cmd: list[str]) -> None:
    counts = {"cases": 0, "exit 2": 0, "exit 3": 0, "other": 0, "leaks": 0}
    for name, files, argv in cases():
        with tempfile.TemporaryDirectory() as d:
            materialise(d, files)
            before = listing(d)
            try:
                p = subprocess.run(cmd + [a.replace("{d}", d) for a in argv], cwd=d,
                                   capture_output=True, text=True, timeout=60)
                code, err = p.returncode, p.stderr
            except subprocess.TimeoutExpired:
                code, err = "timeout", ""
            counts["cases"] += 1
            key = {2: "exit 2", 3: "exit 3"}.get(code, "other")
            counts[key] += 1
            left = listing(d) - before
            counts["leaks"] += bool(left)
            last = err.strip().splitlines()[-1][:90] if err.strip() else ""
            print(f"{name:<32} {code!s:<8} {last}"
                  + (f"  LEFT: {sorted(left)[:3]}" if left else ""))
    print(counts)


if __name__ == "__main__":
    main(sys.argv[1:] or ["kmc"])
