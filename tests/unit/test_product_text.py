"""The product's texts speak of the product, not of how it was developed.

README.md, docs/**/*.md and the comments, docstrings and strings of every .py file under
kmc/, model/, invariants/, explorers/, reports/, tests/ and bench/ (theorem texts that
`kmc prove` prints included: they live in invariants/proofs.py) must not name numbered
work periods, tracker items, design files outside this repository or who directed the
work. Code itself (identifiers, a module named after a Spark term, a dict key) is not
text and is not scanned.

The words are assembled from pieces so that this file does not match itself.
"""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE_DIRS = ("kmc", "model", "invariants", "explorers", "reports", "tests", "bench")

SES = "ses" + "sion"
ISSUE = "iss" + "ue"
PATTERNS = [
    (re.compile(rf"\b{SES}s? \d+", re.I), "a numbered work " + SES),
    (re.compile(rf"\bthe {ISSUE}\b", re.I), "the " + ISSUE + " (name what it is instead)"),
    (re.compile(rf"\b(?:{ISSUE}s?|ticket|PR|pull request)\s*#?\d+", re.I),
     "an " + ISSUE + " reference"),
    (re.compile(r"\bGH-\d+\b"), "an " + ISSUE + " reference"),
    (re.compile("DESI" + r"GN\.md"), "a design file outside this repository"),
    (re.compile(r"\bsteer" + r"ing\b", re.I), "who directed the project"),
    (re.compile(r"\bC" + r"EO\b"), "the project's management"),
    (re.compile(r"\bwas built and measured in\b", re.I), "development history"),
]
#: the word alone: allowed only as a domain term (a Spark or ZooKeeper one) or when it
#: names code (`explorers/spark/<word>.py`, `<word>.HOT_CLASSES`, ``<word>``)
WORD = re.compile(rf"\b{SES}\b", re.I)
DOMAIN = re.compile(r"(?:spark|zookeeper)[ -]$", re.I)
IDENTIFIER = re.compile(r"""[rbuRBU]?(["'])\w+\1""")


def _word_hits(text: str) -> bool:
    for m in WORD.finditer(text):
        before, after = text[:m.start()], text[m.end():]
        if DOMAIN.search(before):
            continue
        if before.endswith((".", "`", "/", "_")) or after.startswith((".", "`", "_", "(")):
            continue
        return True
    return False


def hits_in_text(text: str) -> list[tuple[int, str]]:
    """(line number, why) of every development-history phrase in prose."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for pattern, why in PATTERNS:
            if pattern.search(line):
                out.append((n, why))
        if _word_hits(line):
            out.append((n, "the word " + SES + " outside a Spark/ZooKeeper term or code"))
    return out


def hits_in_python(source: str) -> list[tuple[int, str]]:
    """The same, over a Python file's comments and string literals (docstrings and the
    texts it prints) only."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.STRING and IDENTIFIER.fullmatch(tok.string):
            continue  # a dict key or attribute name: code, not text
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            out += [(tok.start[0] + n - 1, why) for n, why in hits_in_text(tok.string)]
    return out


def product_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for d in CODE_DIRS:
        files += sorted(p for p in (ROOT / d).rglob("*.py") if "__pycache__" not in p.parts)
    return files


def test_no_development_history_in_the_product_texts():
    found = []
    for path in product_files():
        text = path.read_text(encoding="utf-8")
        hits = hits_in_python(text) if path.suffix == ".py" else hits_in_text(text)
        found += [f"{path.relative_to(ROOT)}:{n}: {why}" for n, why in hits]
    assert not found, ("state today's behaviour instead of how it was developed:\n"
                       + "\n".join(found))


def test_the_scan_finds_each_kind_of_phrase():
    word = SES
    prose = "\n".join([
        f"measured in {word} 13",
        f"as the {ISSUE}'s table says",
        f"goals ({ISSUE} #2)",
        "see " + "DESI" + "GN.md",
        "in the " + "steer" + "ing repo",
        f"until the last {word} we shipped",
    ])
    assert [n for n, _ in hits_in_text(prose)] == [1, 1, 2, 3, 4, 5, 6]
    code = f'x = 1  # {word} 5 measured it\ny = "the {ISSUE}"\nz = {word}.HOT\n'
    assert [n for n, _ in hits_in_python(code)] == [1, 1, 2]


def test_domain_terms_and_code_names_are_not_hits():
    word = SES
    prose = "\n".join([
        f"the lost ZooKeeper {word} of a broker",
        f"a Spark {word} and Spark{word.title()}",
        f"explorers/spark/{word}.py and `{word}.HOT_CLASSES`, ``{word}``",
        f"a {word}_s key",
    ])
    assert hits_in_text(prose) == []
    code = (f"self.{word} = {word} or Z3{word.title()}()\n"
            f"from kmc.explorers.spark.{word} import x\n"
            f"state = {{'{word}': self.{word}}}\n")
    assert hits_in_python(code) == []
