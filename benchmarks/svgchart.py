# A dependency-free SVG line chart (log-log axes) for benchmark reports.
"""Render series of (x, y) points as an SVG line chart with logarithmic axes.

The benchmarks must run on a machine with nothing but Python, so the chart is plain SVG text
written here rather than through a plotting library.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

__all__ = ["line_chart"]

_PALETTE = (
    "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #393b79"
    " #637939 #8c6d31 #843c39"
).split()


def _log_ticks(lo: float, hi: float) -> list:
    return [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def _label(value: float) -> str:
    exp = round(math.log10(value))
    return f"10^{exp}" if abs(exp) > 3 else f"{value:g}"


def line_chart(series: dict, title: str, x_label: str, y_label: str) -> str:
    """Return an SVG document plotting ``series``.

    Parameters
    ----------
    series : dict
        Maps a legend label to a list of ``(x, y)`` pairs with positive x and y.
    title, x_label, y_label : str
        Texts of the chart's title and axes.

    Returns
    -------
    str
        The SVG document.
    """
    points = [p for pts in series.values() for p in pts if p[0] > 0 and p[1] > 0]
    if not points:
        raise ValueError("line_chart: no positive points to plot")
    x_ticks = _log_ticks(min(p[0] for p in points), max(p[0] for p in points))
    y_ticks = _log_ticks(min(p[1] for p in points), max(p[1] for p in points))
    width, height, left, top, plot_w, plot_h = 900, 520, 70, 40, 500, 420

    def sx(x: float) -> float:
        span = math.log10(x_ticks[-1]) - math.log10(x_ticks[0]) or 1.0
        return left + plot_w * (math.log10(x) - math.log10(x_ticks[0])) / span

    def sy(y: float) -> float:
        span = math.log10(y_ticks[-1]) - math.log10(y_ticks[0]) or 1.0
        return top + plot_h - plot_h * (math.log10(y) - math.log10(y_ticks[0])) / span

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="20" font-size="14">{escape(title)}</text>',
    ]
    for x in x_ticks:
        out.append(f'<line x1="{sx(x):.1f}" y1="{top}" x2="{sx(x):.1f}" y2="{top + plot_h}" '
                   'stroke="#ddd"/>')  # fmt: skip
        out.append(f'<text x="{sx(x):.1f}" y="{top + plot_h + 15}" text-anchor="middle">'
                   f"{_label(x)}</text>")  # fmt: skip
    for y in y_ticks:
        out.append(f'<line x1="{left}" y1="{sy(y):.1f}" x2="{left + plot_w}" y2="{sy(y):.1f}" '
                   'stroke="#ddd"/>')  # fmt: skip
        out.append(f'<text x="{left - 5}" y="{sy(y) + 4:.1f}" text-anchor="end">{_label(y)}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 10}" text-anchor="middle">'
               f"{escape(x_label)}</text>")  # fmt: skip
    out.append(f'<text x="15" y="{top + plot_h / 2}" transform="rotate(-90 15 {top + plot_h / 2})" '
               f'text-anchor="middle">{escape(y_label)}</text>')  # fmt: skip
    for i, (name, pts) in enumerate(series.items()):
        color = _PALETTE[i % len(_PALETTE)]
        good = [p for p in pts if p[0] > 0 and p[1] > 0]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in good)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y in good:
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{color}"/>')
        ly = top + 12 + 16 * i
        out.append(f'<line x1="{left + plot_w + 20}" y1="{ly - 4}" x2="{left + plot_w + 40}" '
                   f'y2="{ly - 4}" stroke="{color}" stroke-width="2"/>')  # fmt: skip
        out.append(f'<text x="{left + plot_w + 45}" y="{ly}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
