"""Shared matplotlib plumbing for the pictures: no pyplot (so no global state and no
display needed), text kept as text in SVG (searchable, and testable), one palette."""
from __future__ import annotations

import io
import logging
import textwrap
import warnings

# matplotlib logs a warning when its configuration and cache directory (under HOME) cannot
# be made, then works from a temporary one: the pictures are the same, and the lines
# would only add to the command's output
_mpl_log = logging.getLogger("matplotlib")
_level = _mpl_log.level
_mpl_log.setLevel(logging.ERROR)
try:
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text
finally:
    _mpl_log.setLevel(_level)

from kmc.reports.inputs import write_atomic  # noqa: E402
from kmc.reports.inputs import printable  # noqa: E402

# one palette for every picture
INK = "#222222"
MUTED = "#777777"
LANE = "#b8c2cc"
ACCENT = "#1f5fa8"  # messages, counterexample path
FAULT = "#c0392b"  # crashes, failovers, violations
VIOLATION_BG = "#fde2e0"
INIT = "#2e8b57"
BOX = "#f4f6f8"

# a character the font lacks (a control character in a property name, say) is drawn as
# a box; matplotlib's warning about it would only add lines to the command's output
warnings.filterwarnings("ignore", message="Glyph .* missing from font")

RC = {"svg.fonttype": "none", "font.family": "DejaVu Sans", "font.size": 9,
      "svg.hashsalt": "kmc"}  # fixed salt: identical SVG bytes on every run


def figure(width_in: float, height_in: float) -> Figure:
    fig = Figure(figsize=(width_in, height_in))
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, stem: str, formats=("png", "svg"), dpi: int = 110) -> dict:
    """Write ``stem.png`` / ``stem.svg``; returns format -> path."""
    out = {}
    plain_text(fig)
    dpi = min(dpi, raster_dpi(fig.get_figwidth(), fig.get_figheight()))
    with matplotlib.rc_context(RC):
        for fmt in formats:
            path = f"{stem}.{fmt}"
            # no bbox_inches="tight": every picture sizes its figure to its content in
            # inches, and "tight" would draw each figure twice
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, dpi=dpi, metadata=_metadata(fmt))
            out[fmt] = write_atomic(path, buf.getvalue())
    return out


#: the largest PNG drawn, in pixels along a side and in all: Agg draws at most 2**16
#: pixels a side, and Pillow (which the report uses to embed a picture) refuses to read
#: an image of more than about 179 million pixels
MAX_SIDE_PX, MAX_PIXELS = 32000, 60_000_000


def raster_dpi(width_in: float, height_in: float) -> float:
    """The resolution at which a figure of this size stays within ``MAX_SIDE_PX`` and
    ``MAX_PIXELS`` (a long trace's picture is drawn smaller rather than not at all)."""
    side = MAX_SIDE_PX / max(width_in, height_in, 1e-9)
    area = (MAX_PIXELS / max(width_in * height_in, 1e-9)) ** 0.5
    return min(side, area)


def plain_text(fig: Figure) -> None:
    """Draw every text of ``fig`` as written, each line at most ``LINE_CHARS``
    characters. Matplotlib reads the text between two ``$`` as TeX math: a model's
    ``Pay $a_b$`` would be drawn with a subscript, and ``$\\foo$`` would stop the
    drawing with a parse error. A line of a hundred thousand characters (a state's
    string) would make the figure so wide that no resolution draws it; the trace files
    and ``kmc show`` keep every character. Call it before measuring."""
    for t in fig.findobj(Text):
        t.set_parse_math(False)
        text = t.get_text()
        safe = printable(text, "\n")  # an ESC or NUL: no SVG reader takes it, none
        if safe is not text:           # shows it
            text = safe
            t.set_text(text)
        if len(text) > LINE_CHARS:
            t.set_text("\n".join(x if len(x) <= LINE_CHARS else x[:LINE_CHARS - 1] + "…"
                                 for x in text.split("\n")))


#: the longest line of text a picture draws
LINE_CHARS = 400


def right_edge(fig: Figure, texts) -> float:
    """The rightmost inch any of ``texts`` reaches (its box padding included), measured
    by matplotlib, on axes whose data unit is one inch from the figure's left edge."""
    plain_text(fig)  # measured as drawn
    renderer = fig.canvas.get_renderer()
    right = 0.0
    for t in texts:
        bb = t.get_window_extent(renderer)
        pad = 0.35 * t.get_fontsize() / 72 if t.get_bbox_patch() else 0.0
        right = max(right, bb.x1 / fig.dpi + pad)
    return right


def _metadata(fmt):
    # no creation dates: the same trace gives the same file
    if fmt == "svg":
        return {"Date": None}
    if fmt == "png":
        return {"Software": None}
    return None


def wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width=max(8, width), break_long_words=True,
                                   break_on_hyphens=False)) or text


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"
