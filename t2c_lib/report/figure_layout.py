"""Where a figure's small texts go, and the check that none covers another (issue 51, item 6).

A paper prints a figure a column wide (3.3-3.5 in) or two columns wide, so every text must stand
clear of every other: the k/N labels above bars turn on their side where upright ones would touch
(`declutter_counts`), a point's label goes to the nearest free place around its point inside its
own panel (`place_point_labels`), and `crowded_texts` / `texts_outside` say which texts still
touch or leave the panel they label (`tests/report/test_figure_fitness.py` asserts both are empty).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import matplotlib.pyplot as plt
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg

COUNT_GID = "t2c-count"
"""The gid of a bar's k/N label (`plots._count_labels`)."""
POINT_GID = "t2c-point"
"""The gid of a point's label (`place_point_labels`): it must stay inside its panel."""
CLEARANCE_PT = 1.5
"""Clear space each text keeps around its box, in points: two texts closer than twice this touch on paper."""


@dataclass(frozen=True)
class Placed:
    """One visible text of a drawn figure: its words, where it is (display pixels) and which axes holds it."""

    text: str
    box: Bbox
    artist: Text
    axes: Any


def _visible_texts(fig: plt.Figure, renderer: Any) -> list[Placed]:
    hidden = _ticks_out_of_view(fig)
    found = []
    for artist in fig.findobj(Text):
        if not artist.get_visible() or not artist.get_text().strip() or id(artist) in hidden:
            continue
        box = _words(artist, renderer)
        if box.width > 0 and box.height > 0:
            found.append(Placed(artist.get_text(), box, artist, artist.axes))
    return found


def _words(artist: Text, renderer: Any) -> Bbox:
    """The box of a text's words where it is drawn (an annotation's offset applied, its leader line left out)."""
    if isinstance(artist, Annotation):
        artist.update_positions(renderer)
    return Text.get_window_extent(artist, renderer)


def _tick_labels(fig: plt.Figure) -> list[tuple[Text, bool]]:
    """Every tick label of the figure, and whether its tick lies inside the axis' view (those outside are not drawn)."""
    found = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():
                inside = low - 1e-9 <= tick.get_loc() <= high + 1e-9
                found += [(tick.label1, inside), (tick.label2, inside and tick.label2.get_visible())]
    return found


def agg_renderer(fig: plt.Figure) -> RendererAgg:
    """The renderer of the figure's canvas, an Agg one (plots.py draws with Agg)."""
    return cast("FigureCanvasAgg", fig.canvas).get_renderer()


def _ticks_out_of_view(fig: plt.Figure) -> set[int]:
    return {id(label) for label, inside in _tick_labels(fig) if not inside}


def _together(fig: plt.Figure) -> dict[int, int]:
    """Text -> a group matplotlib lays out itself: tick labels (one group), each legend's texts (one per legend)."""
    groups = {id(label): 0 for label, _ in _tick_labels(fig)}
    legends = [*fig.legends, *(own for ax in fig.axes if (own := ax.get_legend()) is not None)]
    for number, legend in enumerate(legends, start=1):
        groups.update({id(t): number for t in [*legend.get_texts(), legend.get_title()]})
    return groups


def _padded(box: Bbox, pad: float) -> Bbox:
    return Bbox.from_extents(box.x0 - pad, box.y0 - pad, box.x1 + pad, box.y1 + pad)


def crowded_texts(fig: plt.Figure) -> list[tuple[str, str]]:
    """Pairs of texts (tick labels among themselves, a legend's own texts aside) whose boxes, each with
    `CLEARANCE_PT` around it, meet where the saved file has them (`savefig.bbox: tight` crops the canvas first)."""
    from matplotlib._tight_bbox import adjust_bbox  # what savefig does to a figure it crops

    fig.canvas.draw()
    renderer = agg_renderer(fig)
    restore = adjust_bbox(fig, fig.get_tightbbox(renderer).padded(plt.rcParams["savefig.pad_inches"]), fig.dpi)
    try:
        fig.canvas.draw()
        return _crowded(fig, agg_renderer(fig))
    finally:
        restore()
        fig.canvas.draw()


def _crowded(fig: plt.Figure, renderer: Any) -> list[tuple[str, str]]:
    pad = CLEARANCE_PT * fig.dpi / 72
    placed = _visible_texts(fig, renderer)
    together = _together(fig)
    crowded = []
    for i, a in enumerate(placed):
        for b in placed[i + 1 :]:
            group = together.get(id(a.artist))
            if group is not None and group == together.get(id(b.artist)):
                continue
            if _padded(a.box, pad).overlaps(_padded(b.box, pad)):
                crowded.append((a.text, b.text))
    return crowded


def texts_outside(fig: plt.Figure) -> list[str]:
    """The labels of points (annotations) and bars (k/N) that lie outside the panel they label."""
    fig.canvas.draw()
    renderer = agg_renderer(fig)
    out = []
    for p in _visible_texts(fig, renderer):
        labels_a_mark = isinstance(p.artist, Annotation) or p.artist.get_gid() in (POINT_GID, COUNT_GID)
        if not labels_a_mark or p.axes is None:
            continue
        inside = p.axes.bbox
        if not (
            inside.x0 - 1 <= p.box.x0
            and p.box.x1 <= inside.x1 + 1
            and inside.y0 - 1 <= p.box.y0
            and p.box.y1 <= inside.y1 + 1
        ):
            out.append(p.text)
    return out


def declutter_counts(fig: plt.Figure, small: float = 4.5) -> None:
    """Turn a panel's k/N labels on their side (smaller) where two upright neighbours would touch."""
    fig.canvas.draw()
    renderer = agg_renderer(fig)
    pad = CLEARANCE_PT * fig.dpi / 72
    for ax in fig.axes:
        labels = [t for t in ax.texts if t.get_gid() == COUNT_GID and t.get_rotation() == 0]
        boxes = [_padded(t.get_window_extent(renderer), pad) for t in labels]
        if any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]):
            for label in labels:
                label.set_rotation(90)
                label.set_fontsize(small)


OFFSETS_PT: tuple[tuple[float, float], ...] = (
    (4, 2),
    (4, -9),
    (-4, 2),
    (-4, -9),
    (0, 8),
    (0, -14),
    (10, 8),
    (-10, 8),
    (10, -14),
    (-10, -14),
    (6, 16),
    (-6, 16),
    (6, -22),
    (-6, -22),
    (14, 24),
    (-14, 24),
    (14, -30),
    (-14, -30),
)
"""Where a point's label may go, nearest first (points from the point; negative x: the label ends there); past the
first four a thin leader line joins label and point."""
NEAR = 4


def place_point_labels(ax: plt.Axes, groups: Mapping[tuple[float, float], Sequence[Any]], renderer: Any) -> None:
    """One label per point (`1,4`, `history`) at the nearest free offset around it, inside its panel.

    Free: overlapping no label placed before and no plotted point; where no offset is free, the one
    covering least. A label never leaves its panel, so it cannot cover the next panel's axis label.
    """
    placed: list[Bbox] = []
    points = [ax.transData.transform((x, y)) for (x, y) in groups]
    for (x, y), names in sorted(groups.items()):
        text = ",".join(str(n) for n in names)
        best: tuple[float, Annotation, Bbox] | None = None
        for number, (dx, dy) in enumerate(OFFSETS_PT):
            label = _annotate(ax, text, (x, y), dx, dy, leader=number >= NEAR)
            box = _padded(_words(label, renderer), CLEARANCE_PT * ax.figure.dpi / 72)
            cost = _cost(box, ax.bbox, placed, points, (x, y), ax)
            if best is None or cost < best[0]:
                if best is not None:
                    best[1].remove()
                best = (cost, label, box)
            else:
                label.remove()
            if cost == 0:
                break
        assert best is not None
        placed.append(best[2])


def _annotate(ax: plt.Axes, text: str, at: tuple[float, float], dx: float, dy: float, leader: bool) -> Annotation:
    return ax.annotate(
        text,
        at,
        xytext=(dx, dy),
        textcoords="offset points",
        ha="left" if dx >= 0 else "right",
        va="center" if abs(dy) > 9 else "baseline",
        fontsize=6,
        gid=POINT_GID,
        annotation_clip=False,
        arrowprops={"arrowstyle": "-", "linewidth": 0.3, "color": "#999999", "shrinkA": 1, "shrinkB": 3}
        if leader
        else None,
    )


def _cost(box: Bbox, panel: Bbox, placed: list[Bbox], points: list[Any], own: tuple[float, float], ax: Any) -> float:
    """How much a label at `box` covers: outside its panel counts most, then other labels, then plotted points."""
    outside = max(0.0, panel.x0 - box.x0) + max(0.0, box.x1 - panel.x1) + max(0.0, panel.y0 - box.y0)
    outside += max(0.0, box.y1 - panel.y1)
    covered = sum(_area(box, other) for other in placed)
    mine = ax.transData.transform(own)
    dots = sum(1 for p in points if box.contains(*p) and (p[0], p[1]) != (mine[0], mine[1]))
    return 1000.0 * outside + covered + 50.0 * dots


def _area(a: Bbox, b: Bbox) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width * height if width > 0 and height > 0 else 0.0
