"""`kmc check --out DIR`: index.html (self-contained), summary.json, trace files,
pictures and the runnable replay snippet; the page's order (contents, headline, verdicts,
the other counterexamples folded) and its size."""
import base64
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from kmc import api
from kmc.cli import main
from kmc.explorers.bfs import bfs
from kmc.invariants import always
from kmc.model import Model
from kmc.reports import html as report_html
from kmc.reports.summary import summary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Page(HTMLParser):
    """The parts of a page the tests read: ids, in-page links, <details> and images."""

    def __init__(self, text):
        super().__init__()
        self.ids, self.links, self.details, self.images, self.order = [], [], [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
            self.order.append(a["id"])
        if tag == "a" and a.get("href", "").startswith("#"):
            self.links.append(a["href"][1:])
        if tag == "details":
            self.details.append(a)
        if tag == "img":
            self.images.append(a["src"])


def _read(out):
    with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
        return f.read()


@pytest.fixture(scope="module")
def broken_out(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("out"))
    code = main(["check", "twophase", "--variant", "broken-commit", "--quiet", "--out", out])
    return code, out, _read(out)


@pytest.fixture(scope="module")
def stale_out(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("stale"))
    code = main(["check", "stale-read", "--variant", "legacy", "--quiet", "--out", out])
    return code, out, _read(out)


def test_report_has_the_verdict_table(broken_out):
    code, out, page = broken_out
    assert code == 1
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    table = re.search(r"<table id=verdict-table>(.*?)</table>", page, re.S).group(1)
    for name, p in s["properties"].items():
        row = re.search(rf"<tr(?: class=headline)?><td>(?:<a href='#cx-{name}'>)?{name}"
                        rf"(?:</a>)?(?:<br><span class=muted>[^<]*</span>)?</td>(.*?)</tr>",
                        table, re.S)
        assert row and p["verdict"].replace("_", " ") in row.group(1)
    assert f"{s['unique_states']:,}" in page
    for action in s["coverage"]:
        assert f"<td>{action}</td>" in page


def test_report_embeds_valid_pictures(broken_out):
    _code, _out, page = broken_out
    images = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
    assert len(images) == 3  # sequence, state graph, counterexample graph
    for data in images:
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<link" not in page and "<script" not in page  # nothing to fetch, nothing to run


def test_report_has_steps_replay_command_and_snippet(broken_out):
    _code, out, page = broken_out
    trace = os.path.join(out, "trace-TCConsistent.json")
    assert f"kmc replay {trace}" in page
    with open(trace) as f:
        doc = json.load(f)
    steps = re.search(r"<table class=steps>(.*?)</table>", page, re.S).group(1)
    assert steps.count("<tr") == len(doc["steps"]) + 1  # header row + one per state
    for st in doc["steps"][1:]:
        assert f"<td>{st['action']}</td>" in steps
    assert "from kmc.api import build" in page


def test_summary_json_is_the_check_json(broken_out):
    _code, out, _page = broken_out
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    # the command guards its run with the default --max-memory, which the summary records
    fresh = summary(api.check("twophase", "broken-commit", max_memory=s["max_memory"]),
                    {n: p["trace_file"] for n, p in s["properties"].items()})
    drop = ("elapsed_s",)
    assert {k: v for k, v in s.items() if k not in drop} == \
        {k: v for k, v in fresh.items() if k not in drop}


def test_snippet_runs_and_rebuilds_the_violating_state(broken_out):
    _code, out, _page = broken_out
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, os.path.join(out, "replay-TCConsistent.py")],
                       env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    model = api.build("twophase", "broken-commit", {"rm": 3})
    r = api.check("twophase", "broken-commit", {"rm": 3})
    assert p.stdout.strip() == model.format_state(r.discoveries["TCConsistent"].trace.last)


def test_snippet_fails_when_the_model_changed(broken_out, tmp_path):
    _code, out, _page = broken_out
    with open(os.path.join(out, "replay-TCConsistent.py")) as f:
        code = f.read().replace("'broken-commit'", "'standard'")
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode != 0 and "AssertionError" in p.stderr


def test_report_on_a_run_that_holds(tmp_path):
    out = str(tmp_path)
    assert main(["check", "tcommit", "--quiet", "--out", out]) == 0
    page = _read(out)
    assert "<table id=verdict-table>" in page and "class=holds" in page
    assert "Counterexample" not in page and "No violation: 1 of 1 properties hold" in page
    assert set(Page(page).links) <= set(Page(page).ids)
    assert sorted(os.listdir(out)) == ["index.html", "summary.json"]


def test_headline_is_the_first_violated_property_in_declaration_order(stale_out):
    code, out, page = stale_out
    assert code == 1
    with open(os.path.join(out, "summary.json")) as f:
        props = json.load(f)["properties"]
    violated = [n for n, p in props.items() if p["verdict"] == "violated"]
    assert violated[0] == "NoStaleRead" and sorted(violated)[0] != violated[0]
    parsed = Page(page)
    order = parsed.order
    # contents, then the headline (with its counterexample), then the verdicts, counts,
    # coverage and the other counterexamples, in declaration order
    assert order.index("toc") < order.index("headline") < order.index("cx-NoStaleRead") \
        < order.index("verdicts") < order.index("counts") < order.index("coverage") \
        < order.index("others")
    assert [i for i in order if i.startswith("cx-")] == [f"cx-{n}" for n in violated]
    headline = page[page.index("<section id=headline>"):page.index("<section id=verdicts>")]
    assert "NoStaleRead" in headline and "4 more violations below" in headline
    rows = re.findall(r"<tr(?: class=headline)?><td>(?:<a [^>]*>)?(\w+)",
                      page[page.index("<table id=verdict-table>"):])
    assert rows[:len(props)] == list(props)  # NoStaleRead is declared first: no reorder


def test_contents_links_resolve_and_other_counterexamples_fold(stale_out):
    _code, _out, page = stale_out
    parsed = Page(page)
    toc = page[page.index("<nav id=toc>"):page.index("</nav>")]
    targets = re.findall(r"href='#([^']+)'", toc)
    assert {"headline", "verdicts", "counts", "coverage", "others"} <= set(targets)
    assert set(parsed.links) <= set(parsed.ids)  # every in-page link has its target
    assert len(parsed.ids) == len(set(parsed.ids))
    folded = {d["id"] for d in parsed.details if d.get("class") == "cx"}
    assert folded == {"cx-NoStaleReplication", "cx-RecreateAfterDelete",
                      "cx-StaleReplicasCleaned", "cx-DeletionCompletes"}
    assert all("open" not in d for d in parsed.details if d.get("class") == "cx")
    # the headline's 14-step table is folded too, but open
    steps = [d for d in parsed.details if d.get("class") == "steps"]
    assert steps and "open" in steps[0]


def test_page_wraps_instead_of_overflowing(stale_out):
    _code, _out, page = stale_out
    css = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert re.search(r"table\{[^}]*table-layout:fixed", css)
    assert re.search(r"td,th\{[^}]*overflow-wrap:anywhere", css)
    assert re.search(r"pre\{[^}]*white-space:pre-wrap", css)
    assert re.search(r"img\{[^}]*max-width:100%", css)


def test_page_stays_under_a_megabyte_with_its_pictures(stale_out):
    _code, out, page = stale_out
    size = os.path.getsize(os.path.join(out, "index.html"))
    assert size < 1_000_000, size
    images = Page(page).images
    assert len(images) == 15  # 5 counterexamples x 3 pictures, all within the budget
    for src in images:
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


class Counter(Model):
    """0 -> 1 -> 2 -> 3: three properties, the first holding, declared out of
    alphabetical order."""
    name = "counter"

    def init_states(self):
        return [0]

    def actions(self, s):
        return ["Inc"] if s < 3 else []

    def next_state(self, s, a):
        return s + 1

    def properties(self):
        return [always("Fine", lambda s: s < 10), always("Zeta", lambda s: s < 2),
                always("Alpha", lambda s: s < 3)]


def test_pictures_beyond_the_budget_are_linked_not_embedded(tmp_path, monkeypatch):
    r = bfs(Counter())
    r.extra.update(model=Counter(), scenario="counter", variant="toy", params={})
    first = report_html.write_report(r, str(tmp_path / "all"), {})
    assert len(Page(open(first).read()).images) == 6
    monkeypatch.setattr(report_html, "EMBED_BUDGET", 1)
    path = report_html.write_report(r, str(tmp_path / "none"), {})
    page = open(path).read()
    assert not Page(page).images
    linked = re.findall(r"not embedded, to keep this page small — open <a href='([^']+)'",
                        page)
    assert len(linked) == 6 and all(os.path.exists(tmp_path / "none" / x) for x in linked)
    # the headline is Zeta, the first violated in declaration order (not Alpha)
    assert "Headline: Zeta violated" in page
    assert page.index("id='cx-Zeta'") < page.index("id='cx-Alpha'")


CHAIN = '''from kmc import Model, always


class Chain(Model):
    def __init__(self, n):
        self.n = n

    def init_states(self):
        return [0]

    def actions(self, s):
        return ["inc"] if s < self.n else []

    def next_state(self, s, a):
        return s + 1

    def properties(self):
        return [always("Small", lambda s: s < self.n)]


def make(n: int = 3):
    return Chain(n)
'''


def test_a_counterexample_too_long_to_draw_has_its_exports_and_says_so(tmp_path, capsys):
    """Past DRAWN_STATES a picture would be tens of thousands of pixels tall and take
    minutes: the run writes the trace, the graph exports, the snippet and the report,
    which says why there are no pictures, and so does `kmc show --pictures`."""
    from kmc.reports.artifacts import DRAWN_STATES

    (tmp_path / "chain_model.py").write_text(CHAIN)
    ref = f"{tmp_path / 'chain_model.py'}:make"
    out = tmp_path / "out"
    assert main(["check", ref, "-p", f"n={DRAWN_STATES}", "--out", str(out), "--quiet"]) == 1
    names = set(os.listdir(out))
    assert {"trace-Small.json", "graph-Small.dot", "graph-Small.graphml",
            "graph-Small.json", "replay-Small.py", "index.html"} <= names
    assert not any(n.endswith((".png", ".svg")) for n in names)
    with open(out / "index.html") as f:
        page = f.read()
    assert f"No pictures: the counterexample has {DRAWN_STATES + 1} states" in page
    capsys.readouterr()
    assert main(["show", str(out / "trace-Small.json"), "--pictures", str(tmp_path / "p")]) == 0
    assert "no pictures: the counterexample has" in capsys.readouterr().out


def test_a_tall_picture_is_drawn_at_a_resolution_that_fits():
    from kmc.reports.draw import MAX_PIXELS, MAX_SIDE_PX, raster_dpi

    for w, h in ((3.0, 400.0), (400.0, 3.0), (250.0, 250.0), (2.0, 2.0)):
        dpi = min(110, raster_dpi(w, h))
        assert max(w, h) * dpi <= MAX_SIDE_PX and w * h * dpi * dpi <= MAX_PIXELS * 1.0001
    assert raster_dpi(2.0, 2.0) > 110  # a small picture keeps its resolution
