"""The detectors' keyword gates in one RE2 pass (``store.redaction.redact._KeywordGates``,
issue 39): the set of detectors run on a text is exactly the one the inline gates (``word in
text.lower()`` for each keyword) pick, so ``find_secrets`` finds the same spans either way, on
the detector tests' inputs, every file of the recorded corpus, and seeded texts made of
keywords (overlapping, in mixed case, next to non-ASCII letters, lone surrogates) with real
secrets among them; and on a caller's own detectors."""

from __future__ import annotations

import random

import pytest
from backends import corpus
from test_detectors import ADVERSARIAL, COMMON, NEAR_MISSES, POSITIVES

from store.redaction import redact as redact_module
from store.redaction.detectors import DETECTORS, Detector
from store.redaction.redact import Redactor, find_secrets

KEYWORDS = sorted({word for det in DETECTORS for word in det.keywords})


class _Inline:
    """Gates that always say "check inline" (the path without RE2)."""

    @staticmethod
    def passing(lowered: str) -> None:
        return None


def _inline(text: str, detectors: tuple[Detector, ...] = DETECTORS,
            monkeypatch: pytest.MonkeyPatch | None = None) -> list[tuple[int, int, str]]:
    assert monkeypatch is not None
    with monkeypatch.context() as patch:
        patch.setattr(redact_module, "_keyword_gates", lambda _: _Inline())
        return find_secrets(text, detectors)


def _same(text: str, monkeypatch: pytest.MonkeyPatch,
          detectors: tuple[Detector, ...] = DETECTORS) -> list[tuple[int, int, str]]:
    fast = find_secrets(text, detectors)
    assert fast == _inline(text, detectors, monkeypatch), text[:200]
    return fast


def test_the_gates_run_on_re2_here():
    gates = redact_module._keyword_gates(DETECTORS)
    assert gates.passing("nothing to see") is not None  # (CI installs google-re2)
    # a text with no keyword runs only the detectors without one
    assert [DETECTORS[r].kind for r in gates.passing("plain words only")] == \
        [d.kind for d in DETECTORS if not d.keywords]
    # a keyword runs its detectors: "token" gates two
    ran = {DETECTORS[r].kind for r in gates.passing("a token here")}
    assert {"aws_session_token", "secret"} <= ran
    assert "github_token" not in ran


def test_the_same_spans_on_the_detector_tests_inputs(monkeypatch):
    texts = [text for _, text, _ in POSITIVES] + [text for _, text in NEAR_MISSES]
    texts += [text[:20_000] for inputs in ADVERSARIAL.values() for text in inputs]
    texts += [text[:20_000] for text in COMMON]
    kinds = set()
    for text in texts:
        kinds.update(kind for _, _, kind in _same(text, monkeypatch))
    # the inputs hold secrets of every keyword-gated kind: a gate that skipped one fails here
    assert {d.kind for d in DETECTORS if d.keywords} <= kinds


def test_the_same_spans_on_the_recorded_corpus(monkeypatch):
    files = [p for p in sorted(corpus().rglob("*")) if p.is_file()]
    assert files
    for path in files:
        _same(path.read_bytes().decode("utf-8", "replace"), monkeypatch)


def _generated(rng: random.Random) -> str:
    pieces = []
    for _ in range(rng.randrange(1, 12)):
        choice = rng.randrange(6)
        if choice == 0:  # a keyword in random case
            word = rng.choice(KEYWORDS)
            pieces.append("".join(c.upper() if rng.random() < 0.5 else c for c in word))
        elif choice == 1:  # two keywords overlapping or nested
            a, b = rng.sample(KEYWORDS, 2)
            cut = rng.randrange(0, len(a) + 1)
            pieces.append(a[:cut] + b + a[cut:])
        elif choice == 2:
            pieces.append(rng.choice(["password=hunter2secret", "token: ghp_" + "a" * 36,
                                      "Bearer abcdefghijklmnop1234", "api_key='k3y-v4lue-99'",
                                      "postgres://u:pw12345678@db/x", "sk-ant-" + "x" * 40]))
        elif choice == 3:
            pieces.append(rng.choice(["é", "İ", "K", "ſ", "\x00", "\ud800", "日本", "\n", " "]))
        else:
            pieces.append("".join(rng.choice("abcdefghijklmnopqrstuvwxyz_-:/. ")
                                  for _ in range(rng.randrange(1, 20))))
    return "".join(pieces)


def test_the_same_spans_on_texts_made_of_keywords(monkeypatch):
    rng = random.Random(39)
    found = 0
    for _ in range(3000):
        found += bool(_same(_generated(rng), monkeypatch))
    assert found > 300  # (real secrets among them, so a skipped detector would show)


def test_a_lone_surrogate_is_gated_inline_and_still_redacted(monkeypatch):
    text = "\ud800 password=hunter2secret"
    assert redact_module._keyword_gates(DETECTORS).passing(text.lower()) is None
    assert [kind for _, _, kind in _same(text, monkeypatch)] == ["password"]


def test_a_callers_own_detectors_are_gated_alike(monkeypatch):
    own = Detector("ticket", r"TCK-[0-9]{6}", keywords=("tck-",))
    plain = Detector("pattern", r"zz[0-9]+")
    redactor = Redactor([own, plain])
    assert redactor("see tck-123456 and TCK-654321, zz42") == \
        "see tck-123456 and [REDACTED:ticket], [REDACTED:pattern]"
    for text in ("no ticket", "TCK-000001", "tck tck- TCK-12345", "zz1 TCK-999999"):
        _same(text, monkeypatch, redactor.detectors)
    # only keyword-less detectors: every text runs them all
    alone = (plain,)
    assert redact_module._keyword_gates(alone).passing("anything") == (0,)
    assert find_secrets("x zz7", alone) == [(2, 5, "pattern")]
