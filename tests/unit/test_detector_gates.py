"""The detectors' gates (``Detector.gate``, issue 39): a gate only skips work, never a secret.

A gated detector finds exactly what it finds ungated, and so does ``find_secrets`` with every
built-in detector, on: the true positives, near misses and adversarial inputs of
``test_detectors.py``, every file of the recorded corpus, and texts generated from the
fragments the gated patterns are made of (seeded: the same texts each run), among which many
real matches. And directly: every match of a gated detector's pattern holds a match of its
gate, within the match."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from backends import corpus
from test_detectors import ADVERSARIAL, COMMON, NEAR_MISSES, POSITIVES

from store.redaction.detectors import DETECTORS, Detector
from store.redaction.redact import find_secrets

GATED = [d for d in DETECTORS if d.gate is not None]
UNGATED = tuple(replace(d, gate=None) for d in DETECTORS)


def test_the_keyword_less_detectors_have_gates():
    # the three that no keyword could gate (~70 % of redaction's time before they had one)
    assert {d.kind for d in GATED} >= {"twilio_key", "mailgun_api_key", "discord_bot_token"}
    for det in DETECTORS:
        assert det.keywords or det.gate is not None or det.func is not None \
            or det.kind in _UNGATED_BY_DESIGN, det.kind


#: Detectors whose pattern opens with a literal already (``re`` skips ahead to it in C).
_UNGATED_BY_DESIGN: frozenset[str] = frozenset()


def _same(text: str) -> None:
    for det in GATED:
        assert list(det.spans(text)) == list(replace(det, gate=None).spans(text)), \
            (det.kind, text[:200])
    assert find_secrets(text) == find_secrets(text, UNGATED), text[:200]


def _texts() -> list[str]:
    texts = [text for _, text, _ in POSITIVES] + [text for _, text in NEAR_MISSES]
    texts += [text[:20_000] for inputs in ADVERSARIAL.values() for text in inputs]
    texts += [text[:20_000] for text in COMMON]
    return texts


def test_gates_change_nothing_on_the_detector_tests_inputs():
    texts = _texts()
    for text in texts:
        _same(text)
    # the inputs hold the gated kinds' secrets, so a gate that skipped them would fail here
    found = {kind for text in texts for _, _, kind in find_secrets(text)}
    assert {d.kind for d in GATED} <= found


def test_gates_change_nothing_on_the_recorded_corpus():
    files = [p for p in sorted(corpus().rglob("*")) if p.is_file()]
    assert files
    for path in files:
        _same(path.read_bytes().decode("utf-8", "replace"))


_HEX = "0123456789abcdef"
_TOKEN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def _fragment(rng: random.Random) -> str:
    choice = rng.randrange(13)
    if choice == 0:
        return rng.choice(["SK", "AC", "sk", "ac", "S", "K", "key-", "KEY-", "key"])
    if choice in (1, 2):
        return "".join(rng.choice(_HEX + "ABCDEF" * (choice == 2))
                       for _ in range(rng.choice([7, 8, 9, 31, 32, 33])))
    if choice == 3:
        return rng.choice(["-", ".", " ", "\n", "/", '"', "_", "=", ":"])
    if choice in (4, 5):
        return "".join(rng.choice(_TOKEN) for _ in range(rng.choice([5, 6, 7, 23, 24, 25, 26,
                                                                     27, 30, 38, 39])))
    if choice == 6:
        return rng.choice("MNO")
    if choice in (7, 8):  # a whole secret of a gated shape, sometimes cut or glued
        secret = rng.choice([
            rng.choice(["SK", "AC"]) + "".join(rng.choice(_HEX) for _ in range(32)),
            "key-" + "".join(rng.choice(_HEX) for _ in range(32)),
            "-".join("".join(rng.choice(_HEX) for _ in range(n)) for n in (32, 8, 8)),
            (rng.choice("MNO") + "".join(rng.choice(_TOKEN) for _ in range(24)) + "."
             + "".join(rng.choice(_TOKEN) for _ in range(6)) + "."
             + "".join(rng.choice(_TOKEN) for _ in range(rng.randrange(27, 39)))),
        ])
        cut = rng.randrange(4)
        return secret[1:] if cut == 0 else secret[:-1] if cut == 1 else secret
    return rng.choice(["hello world ", "ls -la ", "token ", "é", "\u2192", "x"])


def test_gates_change_nothing_on_generated_texts():
    rng = random.Random(39)
    matched = 0
    for _ in range(3000):
        text = "".join(_fragment(rng) for _ in range(rng.randrange(1, 14)))
        _same(text)
        matched += any(kind in {d.kind for d in GATED} for _, _, kind in
                       find_secrets(text, UNGATED))
    assert matched > 150  # the texts do hold the gated kinds' secrets


@pytest.mark.parametrize("det", GATED, ids=[d.kind for d in GATED])
def test_every_match_holds_a_match_of_its_gate(det: Detector):
    assert det.pattern is not None and det.gate is not None
    rng = random.Random(det.kind)
    texts = _texts() + ["".join(_fragment(rng) for _ in range(rng.randrange(1, 14)))
                        for _ in range(3000)]
    matches = 0
    for text in texts:
        for found in det.pattern.finditer(text):
            matches += 1
            assert det.gate.search(text, found.start(), found.end()) is not None, found.group()
    assert matches > 50


def test_a_gate_skips_a_text_without_its_run():
    # the gate is what is searched first: a text of none of its characters runs nothing else
    twilio = next(d for d in DETECTORS if d.kind == "twilio_key")
    assert twilio.gate is not None and twilio.gate.search("no key here") is None
    assert list(twilio.spans("no key here")) == []
