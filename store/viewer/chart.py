"""Tool usage over time as a server-rendered SVG: stacked bars of calls per tool per bucket.

Contract: :func:`usage_series` counts calls per current tool name in consecutive time buckets
of whole days (one day, or several so that there are at most ``max_buckets``), with
:func:`store.tool_usage` over each bucket; the ``top`` most called tools get their own series
and the rest is summed as ``other``. :func:`usage_svg` draws them with no script and no
external resource; every label (tool names come from transcripts) is escaped, and each bar
has a ``<title>`` tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

import store
from store.viewer.markup import Markup, html, join

__all__ = ["OTHERS", "PALETTE", "Series", "day_starts", "stacked_svg", "usage_series",
           "usage_svg"]

#: Series colours (the last one is ``other``), distinguishable and print-safe.
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")
OTHER = "(other tools)"
#: The summed series of any other chart.
OTHERS = "(others)"


@dataclass(frozen=True, slots=True)
class Series:
    """Bucket starts, the bucket length, and calls per tool per bucket (``names`` in stacking
    order, ``counts[name][i]`` for bucket ``i``)."""

    starts: tuple[datetime, ...]
    step: timedelta
    names: tuple[str, ...]
    counts: dict[str, list[float]]

    @property
    def totals(self) -> list[float]:
        return [sum(self.counts[n][i] for n in self.names) for i in range(len(self.starts))]


def usage_series(opened: store.TranscriptStore, since: datetime | None = None,
                 until: datetime | None = None, *, top: int = len(PALETTE) - 1,
                 max_buckets: int = 60) -> Series:
    """Calls per tool per bucket between ``since`` and ``until`` (default: the first and last
    call stored). ``until`` is exclusive."""
    overall = store.tool_usage(opened, since=since, until=until, limit=100_000)
    firsts = [u.first_seen for u in overall if u.first_seen is not None]
    lasts = [u.last_seen for u in overall if u.last_seen is not None]
    if not overall or not firsts or not lasts:
        return Series((), timedelta(days=1), (), {})
    starts, step = day_starts(since or min(firsts),
                              until or max(lasts) + timedelta(microseconds=1), max_buckets)
    named = [u.name for u in overall[:top]]
    chosen = set(named)
    names = tuple(named) + ((OTHER,) if len(overall) > len(named) else ())
    counts: dict[str, list[float]] = {name: [0] * len(starts) for name in names}
    for i, bucket in enumerate(starts):
        lower = max(bucket, since) if since is not None else bucket
        upper = min(bucket + step, until) if until is not None else bucket + step
        for usage in store.tool_usage(opened, since=lower, until=upper, limit=100_000):
            key = usage.name if usage.name in chosen else OTHER
            if key in counts:
                counts[key][i] += usage.calls
    return Series(tuple(starts), step, names, counts)


def day_starts(first: datetime, end: datetime, max_buckets: int = 60
               ) -> tuple[list[datetime], timedelta]:
    """Buckets of whole UTC days from ``first``'s day up to ``end`` (exclusive): one day each,
    or several so that there are at most ``max_buckets``; their starts and length."""
    start = datetime.combine(first.astimezone(UTC).date(), time(), UTC)
    days = max(1, math.ceil((end - start) / timedelta(days=1)))
    step = timedelta(days=max(1, math.ceil(days / max_buckets)))
    starts = []
    moment = start
    while moment < end:
        starts.append(moment)
        moment += step
    return starts, step


def _nice_step(value: float, ticks: int = 4, *, whole: bool = True) -> float:
    """A tick step (1, 2 or 5 times a power of ten; at least 1 when ``whole``) so that
    ``ticks`` steps reach ``value``."""
    raw = max(1.0 if whole else 1e-9, value / ticks)
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power  # pragma: no cover - the loop always returns


def color(number: int, name: str) -> str:
    """The colour of series ``number`` (``other`` is always the last colour)."""
    return PALETTE[-1] if name in (OTHER, OTHERS) else PALETTE[number % (len(PALETTE) - 1)]


def _count(value: float) -> str:
    return f"{value:,.0f}"


def usage_svg(series: Series, *, width: int = 960, height: int = 280) -> Markup:
    """The tools' stacked bar chart (calls per tool per bucket)."""
    return stacked_svg(series, title="Calls per tool", unit="call(s)", fmt=_count,
                       empty="No tool calls in this period.", chart_id="chart-calls",
                       width=width, height=height)


def stacked_svg(series: Series, *, title: str, unit: str, fmt: Callable[[float], str],
                empty: str, chart_id: str, width: int = 960, height: int = 280) -> Markup:
    """Stacked bars as an inline ``<svg>``: ``title`` per bucket, each bar's tooltip its value
    (``fmt``) and ``unit``; an ``empty`` paragraph when there is nothing to draw. ``chart_id``
    must be unique on the page."""
    totals = series.totals
    if not series.starts or not any(totals):
        return html('<p class="empty">{e}</p>', e=empty)
    whole = all(float(v).is_integer() for v in totals)
    left, right, top, bottom = 56, 44, 12, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    n = len(series.starts)
    step = _nice_step(max(totals), whole=whole)
    ticks = max(1, math.ceil(max(totals) / step - 1e-9))
    ymax = step * ticks
    slot = plot_w / n
    bar = max(1.0, slot * 0.8)
    pieces: list[Markup] = []
    for tick in range(ticks + 1):
        y = top + plot_h - plot_h * tick / ticks
        pieces.append(html('<line x1="{x1}" x2="{x2}" y1="{y}" y2="{y}" '
                           'class="grid" stroke="#ddd"/><text x="{tx}" y="{ty}" '
                           'text-anchor="end" class="axis">{v}</text>',
                           x1=left, x2=width - right, y=f"{y:.1f}", tx=left - 6,
                           ty=f"{y + 4:.1f}", v=fmt(step * tick)))
    label_every = max(1, math.ceil(n / 8))
    day = series.step == timedelta(days=1)
    for i, start in enumerate(series.starts):
        x = left + slot * i + (slot - bar) / 2
        base: float = top + plot_h
        period = start.strftime("%Y-%m-%d") + (
            "" if day else " – " + (start + series.step - timedelta(days=1)).strftime("%Y-%m-%d"))
        for number, name in enumerate(series.names):
            value = series.counts[name][i]
            if not value:
                continue
            h = plot_h * value / ymax
            base -= h
            pieces.append(html(
                '<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{c}"><title>{name}: '
                "{value} {unit}, {period}</title></rect>", x=f"{x:.1f}", y=f"{base:.1f}",
                w=f"{bar:.1f}", h=f"{h:.1f}", c=color(number, name), name=name,
                value=fmt(value), unit=unit, period=period))
        if i % label_every == 0:
            pieces.append(html('<text x="{x}" y="{y}" text-anchor="middle" class="axis">'
                               "{label}</text>", x=f"{left + slot * i + slot / 2:.1f}",
                               y=height - bottom + 16, label=start.strftime("%Y-%m-%d")))
    pieces.append(html('<line x1="{l}" x2="{r}" y1="{y}" y2="{y}" stroke="#555"/>', l=left,
                       r=width - right, y=top + plot_h))
    per = "day" if day else f"{series.step.days} days"
    legend = join(html('<li><svg width="12" height="12" aria-hidden="true"><rect width="12" '
                       'height="12" fill="{c}"/></svg> {name} <small>({total})</small></li>',
                       c=color(number, name), name=name, total=fmt(sum(series.counts[name])))
                  for number, name in enumerate(series.names))
    return html(
        '<figure class="chart"><svg class="usage" viewBox="0 0 {w} {h}" width="{w}" '
        'height="{h}" role="img" aria-labelledby="{cid}"><title id="{cid}">{title} per {per}'
        "</title>{pieces}</svg><figcaption>{title} per {per}, stacked (UTC)."
        "<ul class=\"legend\">{legend}</ul></figcaption></figure>",
        w=width, h=height, per=per, cid=chart_id, title=title, pieces=join(pieces),
        legend=legend)
