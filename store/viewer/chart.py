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
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

import store
from store.viewer.markup import Markup, html, join

__all__ = ["PALETTE", "Series", "usage_series", "usage_svg"]

#: Series colours (the last one is ``other``), distinguishable and print-safe.
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")
OTHER = "(other tools)"


@dataclass(frozen=True, slots=True)
class Series:
    """Bucket starts, the bucket length, and calls per tool per bucket (``names`` in stacking
    order, ``counts[name][i]`` for bucket ``i``)."""

    starts: tuple[datetime, ...]
    step: timedelta
    names: tuple[str, ...]
    counts: dict[str, list[int]]

    @property
    def totals(self) -> list[int]:
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
    start = since or min(firsts)
    end = until or max(lasts) + timedelta(microseconds=1)
    start = datetime.combine(start.astimezone(UTC).date(), time(), UTC)
    days = max(1, math.ceil((end - start) / timedelta(days=1)))
    step = timedelta(days=max(1, math.ceil(days / max_buckets)))
    starts = []
    moment = start
    while moment < end:
        starts.append(moment)
        moment += step
    named = [u.name for u in overall[:top]]
    chosen = set(named)
    names = tuple(named) + ((OTHER,) if len(overall) > len(named) else ())
    counts = {name: [0] * len(starts) for name in names}
    for i, bucket in enumerate(starts):
        lower = max(bucket, since) if since is not None else bucket
        upper = min(bucket + step, until) if until is not None else bucket + step
        for usage in store.tool_usage(opened, since=lower, until=upper, limit=100_000):
            key = usage.name if usage.name in chosen else OTHER
            if key in counts:
                counts[key][i] += usage.calls
    return Series(tuple(starts), step, names, counts)


def _nice_step(value: int, ticks: int = 4) -> int:
    """A whole tick step (1, 2 or 5 times a power of ten) so that ``ticks`` steps reach
    ``value``."""
    raw = max(1.0, value / ticks)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return int(factor * power)
    return int(10 * power)  # pragma: no cover - the loop always returns


def color(number: int, name: str) -> str:
    """The colour of series ``number`` (``other`` is always the last colour)."""
    return PALETTE[-1] if name == OTHER else PALETTE[number % (len(PALETTE) - 1)]


def usage_svg(series: Series, *, width: int = 960, height: int = 280) -> Markup:
    """The stacked bar chart as an inline ``<svg>`` (an empty-state paragraph when there is
    nothing to draw)."""
    if not series.starts or not any(series.totals):
        return html('<p class="empty">No tool calls in this period.</p>')
    left, right, top, bottom = 48, 44, 12, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    n = len(series.starts)
    step = _nice_step(max(series.totals))
    ticks = -(-max(series.totals) // step)
    ymax = step * ticks
    slot = plot_w / n
    bar = max(1.0, slot * 0.8)
    pieces: list[Markup] = []
    for tick in range(ticks + 1):
        value = step * tick
        y = top + plot_h - plot_h * tick / ticks
        pieces.append(html('<line x1="{x1}" x2="{x2}" y1="{y}" y2="{y}" '
                           'class="grid" stroke="#ddd"/><text x="{tx}" y="{ty}" '
                           'text-anchor="end" class="axis">{v}</text>',
                           x1=left, x2=width - right, y=f"{y:.1f}", tx=left - 6,
                           ty=f"{y + 4:.1f}", v=value))
    label_every = max(1, math.ceil(n / 8))
    day = series.step == timedelta(days=1)
    for i, start in enumerate(series.starts):
        x = left + slot * i + (slot - bar) / 2
        base: float = top + plot_h
        period = start.strftime("%Y-%m-%d") + (
            "" if day else " – " + (start + series.step - timedelta(days=1)).strftime("%Y-%m-%d"))
        for number, name in enumerate(series.names):
            count = series.counts[name][i]
            if not count:
                continue
            h = plot_h * count / ymax
            base -= h
            pieces.append(html(
                '<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{c}"><title>{name}: '
                "{count} call(s), {period}</title></rect>", x=f"{x:.1f}", y=f"{base:.1f}",
                w=f"{bar:.1f}", h=f"{h:.1f}", c=color(number, name), name=name, count=count,
                period=period))
        if i % label_every == 0:
            pieces.append(html('<text x="{x}" y="{y}" text-anchor="middle" class="axis">'
                               "{label}</text>", x=f"{left + slot * i + slot / 2:.1f}",
                               y=height - bottom + 16, label=start.strftime("%Y-%m-%d")))
    pieces.append(html('<line x1="{l}" x2="{r}" y1="{y}" y2="{y}" stroke="#555"/>', l=left,
                       r=width - right, y=top + plot_h))
    unit = "day" if day else f"{series.step.days} days"
    legend = join(html('<li><svg width="12" height="12" aria-hidden="true"><rect width="12" '
                       'height="12" fill="{c}"/></svg> {name} <small>({total})</small></li>',
                       c=color(number, name), name=name, total=sum(series.counts[name]))
                  for number, name in enumerate(series.names))
    return html(
        '<figure class="chart"><svg class="usage" viewBox="0 0 {w} {h}" width="{w}" '
        'height="{h}" role="img" aria-labelledby="chart-title"><title id="chart-title">Calls '
        "per tool per {unit}</title>{pieces}</svg><figcaption>Calls per tool per {unit}, "
        "stacked (UTC).<ul class=\"legend\">{legend}</ul></figcaption></figure>",
        w=width, h=height, unit=unit, pieces=join(pieces), legend=legend)
