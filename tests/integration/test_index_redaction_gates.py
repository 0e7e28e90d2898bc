"""The search indexes hold the same redacted text with the detectors' gates as without them
(issue 39: the gates only skip work), on both backends: every row of the message index, the
call index, the argument views and the secret digests, for messages, calls and results that
hold a secret of every kind (the gated kinds among them), glued and near-missed."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import text

import store.trust.secrets as index_secrets
from store.audit.plans import refill_search_index
from store.redaction.detectors import DETECTORS
from store.redaction.redact import find_secrets

UNGATED = tuple(replace(d, gate=None) for d in DETECTORS)

HEX = "0123456789abcdef" * 2
SECRETS = [
    "SK" + HEX, "AC" + HEX.upper(), "key-" + HEX, f"{HEX}-0123abcd-4567ef01",
    "MTA1" + "NjQ3ODk0MzIxMDk4NzY1" + "." + "GhIjKl" + "." + "AbCdEfGhIjKlMnOpQrStUvWxYz0",
    "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R", "AKIAIOSFODNN7EXAMPLE",
    "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    # near misses and glued ones: the gates open, the detectors refuse
    "SK" + HEX[:-1], "xSK" + HEX, "key-" + HEX + "x", HEX + "-0123abcd-4567ef0",
    "MTA1NjQ3.GhIjKl.AbCdEf", "a.bcdefg." + "h" * 27,
]


def _messages() -> list[dict]:
    out: list[dict] = []
    for number, secret in enumerate(SECRETS):
        out += [
            {"role": "user", "content": f"use {secret} please\npassword={secret}"},
            {"role": "assistant", "content": f"thinking about {secret}", "tool_calls": [
                {"id": f"c{number}", "type": "function", "function": {
                    "name": "bash",
                    "arguments": f'{{"command": "curl -H \'X-Key: {secret}\' https://x/y"}}'}}]},
            {"role": "tool", "tool_call_id": f"c{number}", "content": f"echoed {secret} ok"},
        ]
    return out


def _index_rows(store) -> dict[str, list[tuple]]:
    with store.engine.connect() as conn:
        return {
            "message_search": sorted(conn.execute(text(
                "SELECT session_id, position, role, body FROM message_search")).all()),
            "search_items": sorted(conn.execute(text(
                "SELECT session_id, position, kind, item_index, body FROM search_items")).all()),
            "call_views": sorted(conn.execute(text(
                "SELECT session_id, position, call_index, view, text FROM call_views")).all()),
            "call_secrets": sorted(tuple(map(str, row)) for row in conn.execute(text(
                "SELECT * FROM call_secrets")).all()),
        }


def test_the_indexes_hold_the_same_text_gated_and_ungated(store, monkeypatch):
    store.append("s", _messages())
    store.update_search_index()
    gated = _index_rows(store)
    assert gated["message_search"] and gated["search_items"] and gated["call_secrets"]
    held = "\n".join(str(row) for rows in gated.values() for row in rows)
    for kind in ("twilio_key", "mailgun_api_key", "discord_bot_token"):
        assert f"[REDACTED:{kind}]" in held
    for secret in SECRETS[:8]:  # (the near misses below hold some of them, glued)
        assert f"use {secret} please" not in held and f"echoed {secret} ok" not in held

    # the same indexes built again with every detector ungated: row for row the same
    _, marker = index_secrets._detectors()  # (loaded by the first text to index)
    monkeypatch.setattr(index_secrets, "_loaded",
                        (lambda value: find_secrets(value, UNGATED), marker))
    refill_search_index(store)
    assert _index_rows(store) == gated


@pytest.mark.parametrize("secret", SECRETS)
def test_each_text_redacts_the_same(secret):
    for value in (secret, f"x {secret} y", f'"{secret}"', secret * 2, f"{secret}\n{secret}"):
        assert find_secrets(value) == find_secrets(value, UNGATED)
