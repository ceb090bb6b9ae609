"""JUnit XML: one <testcase> per entry, the differences as the <failure> message.

The shape is the common JUnit schema CI services read (Jenkins, GitLab, GitHub actions
such as publish-unit-test-result-action): <testsuites> / <testsuite> / <testcase> with
<failure> for a mismatch and <error> for a run that crashed.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

from kmc.reports.regress.markdown import details
from kmc.reports.regress.runner import ERROR, FAIL, NEW
from kmc.reports.regress.text import expected_text, got_text, totals


#: characters XML 1.0 cannot carry even escaped (a model's exception message may hold
#: a terminal colour code): one of them would make the whole file unreadable to CI
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    """``text`` with the characters XML cannot carry written as ``\\xNN``."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                        else f"\\u{ord(m.group()):04x}", text)


def junit_tree(outcomes, suite_name: str, wall_s: float) -> ET.ElementTree:
    c = totals(outcomes)
    failures, errors = c[FAIL] + c[NEW], c[ERROR]
    counts = {"tests": str(len(outcomes)), "failures": str(failures),
              "errors": str(errors), "time": f"{wall_s:.3f}"}
    root = ET.Element("testsuites", name="kmc regress", **counts)
    suite = ET.SubElement(root, "testsuite", name=_xml(suite_name), skipped="0", **counts)
    for o in outcomes:
        e = o.entry
        family = os.path.basename(e.scenario).removesuffix(".toml")  # a name or a file
        case = ET.SubElement(suite, "testcase", classname=_xml(f"kmc.regress.{family}"),
                             name=_xml(e.id), time=f"{o.elapsed_s:.3f}")
        text = _xml("\n".join(details(o)))
        if o.status in (FAIL, NEW):
            first = text.splitlines()[0] if text else "mismatch"
            f = ET.SubElement(case, "failure", message=first, type="RegressionMismatch")
            f.text = text
        elif o.status == ERROR:
            err = ET.SubElement(case, "error", message=_xml(o.error), type="RunError")
            err.text = text
        out = ET.SubElement(case, "system-out")
        out.text = _xml(f"{e.scenario} [{o.variant or e.variant or 'default'}] "
                        f"params={e.params} explorer={e.explorer}\n"
                        f"expected: {expected_text(o)}\ngot: {got_text(o)}\n"
                        f"states: {o.got.states if o.got else '-'}\n")
    ET.indent(root)
    return ET.ElementTree(root)


def junit_bytes(outcomes, suite_name: str, wall_s: float) -> bytes:
    """The JUnit XML document, with its declaration, as UTF-8 bytes."""
    root = junit_tree(outcomes, suite_name, wall_s).getroot()
    return ET.tostring(root, encoding="UTF-8", xml_declaration=True)
