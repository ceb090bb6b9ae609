"""The stale-read legacy report in a real browser: Debian's chromium, headless, 1024 px
wide. A copy of the page gets a small script that, once loaded, unfolds every <details>,
measures every element and writes what overflows the page width (and any in-page link
without a target) into the DOM; chromium's --dump-dom hands that back to the test.

The browser runs in its own process group and is killed by that id if it outlives its
timeout. .ci/run installs chromium (apt-get install chromium) when it is missing."""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import time

import pytest

from kmc.cli import main

pytestmark = pytest.mark.slow

WIDTH, HEIGHT = 1024, 800
TIMEOUT = 120  # seconds for one browser run

PROBE = """<script>
window.addEventListener('load', function () {
  var opened = 0;
  document.querySelectorAll('details').forEach(function (d) {
    if (!d.open) opened++;
    d.open = true;
  });
  var W = window.innerWidth, bad = [], all = document.body.getElementsByTagName('*');
  for (var i = 0; i < all.length; i++) {
    var el = all[i], r = el.getBoundingClientRect();
    if (r.width > 0 && (r.right > W + 1 || r.left < -1)) {
      bad.push({tag: el.tagName, id: el.id, cls: String(el.className),
                right: Math.round(r.right), text: (el.textContent || '').slice(0, 80)});
    }
  }
  var missing = [];
  document.querySelectorAll('a[href^="#"]').forEach(function (a) {
    if (!document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1)))) {
      missing.push(a.getAttribute('href'));
    }
  });
  var out = document.createElement('pre');
  out.id = 'overflow-result';
  var root = document.documentElement;
  out.textContent = JSON.stringify({inner_width: W, scroll_width: root.scrollWidth,
    client_width: root.clientWidth, checked: all.length, opened: opened,
    offenders: bad.slice(0, 40), count: bad.length, missing_targets: missing});
  document.body.appendChild(out);
});
</script>"""

#: turns the page's wrapping off: the probe must then see overflow (a negative control)
NO_WRAP = ("<style>body,td,th,pre,code{overflow-wrap:normal!important;word-break:normal!important;"
           "white-space:pre!important}table{table-layout:auto!important;width:auto!important}"
           "</style>")


def chromium() -> str:
    path = shutil.which("chromium")
    assert path, "chromium not found: apt-get install -y chromium (.ci/run installs it)"
    return path


def run_browser(args: list[str], profile) -> str:
    """Run chromium headless with ``args``; returns its stdout. Killed (its whole process
    group, by the id of the process this test started) when it overruns TIMEOUT."""
    cmd = [chromium(), "--headless", "--disable-gpu", "--no-sandbox",
           "--disable-dev-shm-usage", "--no-first-run", f"--window-size={WIDTH},{HEIGHT}",
           f"--user-data-dir={profile}", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        _stop(proc.pid)
        proc.communicate()
        pytest.fail(f"chromium did not finish within {TIMEOUT} s (killed)")
    finally:
        _stop(proc.pid)  # any helper of this browser still alive in its group
    assert proc.returncode == 0, err[-2000:]
    return out


def _stop(pid: int) -> None:
    """Kill the process group led by ``pid`` (the browser this test started)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def probe(page_path: str, profile, extra: str = "") -> dict:
    """Measure a copy of ``page_path`` (with the probe script, and ``extra`` in its head)."""
    with open(page_path, encoding="utf-8") as f:
        page = f.read()
    copy = page_path.replace(".html", "-probe.html")
    with open(copy, "w", encoding="utf-8") as f:
        f.write(page.replace("</head>", extra + PROBE + "</head>", 1))
    dom = run_browser(["--run-all-compositor-stages-before-draw", "--virtual-time-budget=5000",
                       "--dump-dom", "file://" + copy], profile)
    found = re.search(r'<pre id="overflow-result">(.*?)</pre>', dom, re.S)
    assert found, "the probe did not run: " + dom[-500:]
    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    started = time.perf_counter()
    code = main(["check", "stale-read", "--variant", "legacy", "--out", str(out), "--quiet"])
    assert code == 1  # violations found
    return str(out / "index.html"), time.perf_counter() - started


def test_no_element_overflows_the_page_width(report, tmp_path):
    path, _s = report
    result = probe(path, tmp_path / "profile")
    assert result["inner_width"] == WIDTH
    assert result["checked"] > 500 and result["opened"] >= 4  # the folded sections too
    assert result["offenders"] == [], json.dumps(result, indent=1)
    assert result["scroll_width"] <= result["inner_width"]
    assert result["scroll_width"] <= result["client_width"]  # no horizontal scrollbar


def test_probe_sees_overflow_when_wrapping_is_off(report, tmp_path):
    path, _s = report
    result = probe(path, tmp_path / "profile", extra=NO_WRAP)
    assert result["count"] > 0 and result["scroll_width"] > result["inner_width"]


def test_contents_links_resolve_and_the_page_is_small(report, tmp_path):
    path, _s = report
    assert os.path.getsize(path) < 1_000_000
    with open(path, encoding="utf-8") as f:
        page = f.read()
    toc = page[page.index("<nav id=toc>"):page.index("</nav>")]
    links = re.findall(r"href='#([^']+)'", toc)
    ids = set(re.findall(r"""\bid=['"]?([\w-]+)""", page))
    assert len(links) >= 8 and set(links) <= ids
    assert probe(path, tmp_path / "profile")["missing_targets"] == []


def test_screenshot(report, tmp_path):
    path, _s = report
    shot = tmp_path / "report.png"
    run_browser([f"--screenshot={shot}", "file://" + path], tmp_path / "profile")
    with open(shot, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", head[16:24]) == (WIDTH, HEIGHT)
