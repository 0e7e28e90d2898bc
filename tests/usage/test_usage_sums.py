"""The usage reports sum in the database (per day, session and model) and fold the sums: the
same totals, costs (tiered prices included), sessions, roll-ups and last times as folding
every response in Python, each response counted once (the first of its response/request
ids in time order), on both backends."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from store import Message, TextPart, TranscriptStore, load_prices, usage_report
from store.audit.cost_rows import UNKNOWN, period_key
from store.usage.prices import TIER_TOKENS
from store.usage.tokens import TokenUsage

START = datetime(2025, 9, 1, 22, 0, tzinfo=UTC)


def _tiered_model() -> str:
    table = load_prices()
    return next(name for name, price in sorted(table.prices.items()) if price.above)


def _fill(db: TranscriptStore) -> list[tuple[str, datetime, str | None, str | None, TokenUsage]]:
    """Three sessions over four days; a tiered model, a flat one, an unpriced one and none;
    responses past the tier; response and request ids repeated later (counted once).
    Returns (session, time, agent, cwd, usage) of every stored row."""
    rng = random.Random(39)
    models = [_tiered_model(), "gpt-4o", "no-such-model-xyz", None]
    stored = []
    for n, (sid, agent, cwd) in enumerate([("a", "claude-code", "/w/one"),
                                           ("b", "codex", "/w/two"), ("c", None, None)]):
        db.create_session(sid, agent=agent, cwd=cwd)
        usage: dict[str, TokenUsage] = {}
        messages = []
        for i in range(40):
            at = START + timedelta(hours=2 * i + n)
            key = f"{sid}-{i}"
            messages.append(Message("assistant", (TextPart(f"reply {i}"),),
                                    metadata={"timestamp": at.isoformat()}))
            big = rng.random() < 0.2
            response = f"resp-{i % 7}" if n == 2 and i % 3 == 0 else f"{sid}-r{i}"
            usage[key] = TokenUsage(
                rng.randrange(TIER_TOKENS + 1, TIER_TOKENS * 2) if big else rng.randrange(50_000),
                rng.randrange(4000), rng.randrange(20_000), rng.randrange(300_000),
                rng.randrange(500), models[(i + n) % 4], None if i % 5 else f"req-{i % 7}",
                None if i % 11 == 0 else response)
            stored.append((sid, at, agent, cwd, usage[key]))
        db.append(sid, messages, keys=list(usage))
        assert db.record_usage(sid, usage) == len(usage)
    return stored


def _reference(stored, by: str, roots) -> dict[str, tuple]:
    prices = load_prices()
    seen: set[tuple[str, str | None]] = set()
    out: dict[str, dict] = {}
    for sid, at, agent, cwd, u in sorted(stored, key=lambda r: (r[1], r[0])):
        if u.response_id is not None:
            if (u.response_id, u.request_id) in seen:
                continue
            seen.add((u.response_id, u.request_id))
        root = roots.get(sid)
        key = {"day": period_key("day", at), "week": period_key("week", at),
               "month": period_key("month", at), "session": root[0] if root else sid,
               "model": u.model or UNKNOWN, "agent": agent or UNKNOWN,
               "project": cwd or UNKNOWN}[by]
        t = out.setdefault(key, {"tokens": [0] * 5, "responses": 0, "cost": 0.0,
                                 "sessions": set(), "unpriced": set(), "last": at})
        for j, v in enumerate((u.input_tokens, u.output_tokens, u.cache_creation_tokens,
                               u.cache_read_tokens, u.reasoning_tokens)):
            t["tokens"][j] += v
        t["responses"] += 1
        cost = prices.cost(u)
        if cost is None:
            t["unpriced"].add(u.model or UNKNOWN)
        else:
            t["cost"] += cost
        t["sessions"].add(sid)
        t["last"] = max(t["last"], at)
    return out


@pytest.mark.parametrize("by", ["day", "week", "month", "session", "model", "agent",
                                "project"])
def test_the_sums_give_what_every_response_folded_gives(db: TranscriptStore, by: str) -> None:
    stored = _fill(db)
    want = _reference(stored, by, {})
    got = {t.key: t for t in usage_report(db, by=by)}
    assert sorted(got) == sorted(want)
    for key, t in got.items():
        w = want[key]
        assert [t.input_tokens, t.output_tokens, t.cache_creation_tokens, t.cache_read_tokens,
                t.reasoning_tokens] == w["tokens"], key
        assert t.responses == w["responses"], key
        assert t.cost_usd == pytest.approx(w["cost"], rel=1e-9), key
        assert t.sessions == w["sessions"] and t.unpriced_models == w["unpriced"], key
        assert t.last_at == w["last"], key
    if by in ("day", "week", "month"):
        assert list(got) == sorted(got)  # oldest first


def test_a_repeated_response_counts_once_at_its_first_time(db: TranscriptStore) -> None:
    for sid, hour in (("late", 5), ("early", 1)):
        db.create_session(sid)
        at = START + timedelta(hours=hour)
        db.append(sid, [Message("assistant", (TextPart("x"),),
                                metadata={"timestamp": at.isoformat()})], keys=["k"])
        db.record_usage(sid, {"k": TokenUsage(10, 5, model="gpt-4o", request_id="q",
                                              response_id="same")})
    (only,) = usage_report(db, by="session")
    assert only.key == "early" and only.responses == 1 and only.input_tokens == 10
