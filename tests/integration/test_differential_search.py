"""Differential test of the call search: the same random argument conditions over the same
stored calls, on SQLite and on PostgreSQL, against a pure-Python reference (issue 14).

Each backend is compared with the reference, so the two agree with each other. The calls hold
the awkward cases on purpose: keys with dots, quotes, backslashes, control characters and
digits, arrays, integers beyond 64 bits, integral floats, strings with escapes and non-ASCII.

Full text: ``FULLTEXT_NEEDLES`` and :func:`reference_fulltext` are the hook for the full-text
side (issue 15 moved the full-text index off the write path and made it match decoded text
only; ``tests/integration/test_search_index.py`` adds its own reference, indexed and not).
"""

from __future__ import annotations

import random
import re
from decimal import Decimal
from typing import Any

import pytest

from store import ArgumentCondition, CallQuery, iter_calls

SEED = 1414
KEYS = ["a", "b", "mode", "b.c", 'q"uote', "back\\slash", "ctl\x01x", "0", "ünï", "sp ace",
        "files", "n"]
STRINGS = ["rm -rf build", "line\nbreak", 'say "hi"', "tab\there", "Größe", "ÜBER über",
           "C:\\dir\\x", "nfoo", "plain", "", "a.b[0]"]
NUMBERS: list[Any] = [0, 1, -1, 2.0, 1.5, 10**30, -(2**70), 2**53 + 1, 123456789]


def value(rng: random.Random, depth: int) -> Any:
    kind = rng.random()
    if depth > 2 or kind < 0.35:
        return rng.choice(STRINGS)
    if kind < 0.6:
        return rng.choice(NUMBERS)
    if kind < 0.68:
        return rng.choice([True, False, None])
    if kind < 0.84:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return document(rng, depth + 1)


def document(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    return {rng.choice(KEYS): value(rng, depth) for _ in range(rng.randint(1, 4))}


def places(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every (path, value) in a document."""
    out: list[tuple[tuple[Any, ...], Any]] = []
    if isinstance(doc, dict):
        for key, item in doc.items():
            out.append(((*prefix, key), item))
            out.extend(places(item, (*prefix, key)))
    elif isinstance(doc, list):
        for index, item in enumerate(doc):
            out.append(((*prefix, index), item))
            out.extend(places(item, (*prefix, index)))
    return out


# -- the reference -----------------------------------------------------------------------------

_MISSING = object()


def at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        if isinstance(step, int):
            if not isinstance(doc, list) or step >= len(doc):
                return _MISSING
        elif not isinstance(doc, dict) or step not in doc:
            return _MISSING
        doc = doc[step]
    return doc


def exact(v: Any) -> Any:
    if v is None or isinstance(v, bool | str):
        return (type(v).__name__, v)
    if isinstance(v, int | float):
        return ("n", Decimal(repr(v)) if isinstance(v, float) else Decimal(v))
    if isinstance(v, list):
        return ("a", tuple(exact(x) for x in v))
    return ("o", frozenset((k, exact(x)) for k, x in v.items()))


def reference(doc: dict[str, Any], condition: ArgumentCondition) -> bool:
    found = at(doc, condition.keys)
    if found is _MISSING:
        return False
    if condition.op == "eq":
        return bool(exact(found) == exact(condition.value))
    if not isinstance(found, str):
        return False
    if condition.op == "contains":
        return condition.value in found
    if condition.op == "icontains":
        return condition.value.lower() in found.lower()  # (argument conditions: lower())
    return re.search(condition.value, found) is not None


#: Full-text needles for the reference below (issue 15 adds the full-text checks).
FULLTEXT_NEEDLES: list[str] = ["nbreak", "say \"hi\"", "größe", "rm -rf"]


def reference_fulltext(doc: dict[str, Any], needle: str) -> bool:
    """Full text matches the decoded text of the arguments (keys and string values),
    case-insensitively, never the JSON escapes."""
    texts = [k for path, _ in places(doc) for k in path if isinstance(k, str)]
    texts += [v for _, v in places(doc) if isinstance(v, str)]
    return any(needle.casefold() in t.casefold() for t in texts)


# -- conditions --------------------------------------------------------------------------------


def perturbed(rng: random.Random, v: Any) -> Any:
    """The value, an equal value of another spelling, or a near miss."""
    pick = rng.random()
    if isinstance(v, bool) or v is None:
        return v if pick < 0.7 else (not v if isinstance(v, bool) else 0)
    if isinstance(v, int):
        return v if pick < 0.4 else float(v) if pick < 0.6 and abs(v) < 2**53 else v + 1
    if isinstance(v, float):
        return v if pick < 0.5 else int(v) if v.is_integer() else v + 0.25
    if isinstance(v, dict):
        items = list(v.items())
        rng.shuffle(items)
        return dict(items)
    return v


def conditions(rng: random.Random, docs: list[dict[str, Any]], count: int
               ) -> list[ArgumentCondition]:
    out: list[ArgumentCondition] = []
    while len(out) < count:
        path, found = rng.choice(places(rng.choice(docs)))
        if rng.random() < 0.15:  # a path that may exist nowhere (or as a key, not an index)
            path = (*path[:-1], rng.choice([0, 1, "0", "zz"]))
        if isinstance(found, str) and found and rng.random() < 0.7:
            start = rng.randrange(len(found))
            needle = found[start:start + rng.randint(1, 5)]
            op = rng.choice(["contains", "icontains", "regex"])
            if op == "icontains":
                needle = needle.swapcase()
            if op == "regex":
                needle = ("^" if start == 0 and rng.random() < 0.5 else "") + re.escape(needle)
            out.append(ArgumentCondition(path, op, needle))  # type: ignore[arg-type]
        else:
            out.append(ArgumentCondition(path, "eq", perturbed(rng, found)))
    return out


@pytest.fixture
def stored(store):
    rng = random.Random(SEED)
    docs = [document(rng) for _ in range(60)]

    from store.core.arguments import dumps_json

    for number, doc in enumerate(docs):
        text = dumps_json(doc)
        store.append(f"diff-{number % 7}", [{"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{number}", "type": "function",
             "function": {"name": "probe", "arguments": text}}]}])
    return store, docs, rng


def matches(store, condition: ArgumentCondition) -> set[str]:
    return {m.call_id for m in iter_calls(store, CallQuery(where=(condition,)))}


def test_random_argument_conditions_agree_with_the_reference(stored):
    store, docs, rng = stored
    checked = []
    for condition in conditions(rng, docs, 160):
        expected = {f"c{n}" for n, doc in enumerate(docs) if reference(doc, condition)}
        got = matches(store, condition)
        assert got == expected, (condition, store.dialect)
        checked.append(bool(expected))
    assert sum(checked) > 80  # most conditions match something: the test is not vacuous


@pytest.mark.parametrize("path, value, expected", [
    ("files[0]", "x", {"arr"}),
    ("files.0", "x", {"key0"}),
    ('"b.c"', 1, {"dots"}),
    ('"q\\"uote"', 1, {"quote"}),
    ('"back\\\\slash"', 1, {"backslash"}),
    ('"ctl\\u0001x"', 1, {"control"}),
    ("n", 10**30, {"big"}),
    ("n", 10**30 + 1, set()),
    ("n", 1.0, {"one"}),
    ("obj", {"y": 1, "x": [1, 2.0]}, {"object"}),
])
def test_the_cases_that_used_to_differ(store, path, value, expected):
    rows = {"arr": {"files": ["x"]}, "key0": {"files": {"0": "x"}}, "dots": {"b.c": 1},
            "quote": {'q"uote': 1}, "backslash": {"back\\slash": 1}, "control": {"ctl\x01x": 1},
            "big": {"n": 10**30}, "one": {"n": 1}, "object": {"obj": {"x": [1, 2], "y": 1}}}
    from store.core.arguments import dumps_json

    for name, doc in rows.items():
        store.append(f"s-{name}", [{"role": "assistant", "content": "", "tool_calls": [
            {"id": name, "type": "function",
             "function": {"name": "probe", "arguments": dumps_json(doc)}}]}])

    assert matches(store, ArgumentCondition(path, "eq", value)) == expected


def test_fulltext_needles_agree_with_the_reference(stored):
    store, docs, _ = stored
    for needle in FULLTEXT_NEEDLES:
        expected = {f"c{n}" for n, doc in enumerate(docs) if reference_fulltext(doc, needle)}
        got = {m.call_id for m in iter_calls(store, CallQuery(text=needle))}
        assert got == expected, needle


# -- one case folding, indexed or not (issue 23) ---------------------------------------------------

#: Texts with the characters whose case folding differs between Python's ``str.lower``,
#: PostgreSQL's ``lower()`` (per character, by locale) and Unicode full case folding.
FOLDING_TEXTS = {
    "greek-upper": "ΣΟΦΟΣ ΑΝΘΡΩΠΟΣ",
    "greek-final": "ο σοφος ανθρωπος",
    "greek-medial": "σοφοσ",
    "german-sharp": "die Straße",
    "german-capital-sharp": "DIE STRAẞE",
    "german-ss": "STRASSE",
    "turkish-dotted": "İSTANBUL",
    "turkish-plain": "istanbul",
    "turkish-dotless": "ıspanak",
    "turkish-upper-i": "ISPANAK",
    "ligature": "ﬁle system",
    "kelvin": "300 \u212a",
}

#: The rule (``store.records.searchtext.fold``), spelled out: which texts each needle finds.
FOLDING_EXPECTED = {
    "σοφος": {"greek-upper", "greek-final", "greek-medial"},
    "ΣΟΦΟΣ": {"greek-upper", "greek-final", "greek-medial"},
    "ανθρωπος": {"greek-upper", "greek-final"},
    "straße": {"german-sharp", "german-capital-sharp", "german-ss"},
    "STRASSE": {"german-sharp", "german-capital-sharp", "german-ss"},
    "İstanbul": {"turkish-dotted"},
    "istanbul": {"turkish-plain"},  # (İ folds to i + U+0307: no Turkish locale rule)
    "ISTANBUL": {"turkish-plain"},
    "ıspanak": {"turkish-dotless"},
    "ispanak": {"turkish-upper-i"},
    "FILE": {"ligature"},
    "300 k": {"kelvin"},
}


def test_case_folding_answers_the_same_before_and_after_the_catch_up(store):
    from sqlalchemy import text

    from store import TranscriptStore

    for name, body in FOLDING_TEXTS.items():
        store.append(f"fold-{name}", [
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": name, "type": "function",
                 "function": {"name": "probe", "arguments": f'{{"q": "{body}"}}'}}]},
            {"role": "tool", "tool_call_id": name, "content": f"result of {name}"}])

    def answers(searcher) -> dict[str, set[str]]:
        return {needle: {m.call_id for m in iter_calls(searcher, CallQuery(text=needle))}
                for needle in FOLDING_EXPECTED}

    with TranscriptStore.open(store.url, read_only=True) as scanning:
        before = answers(scanning)  # nothing indexed: the exact scan in Python
    store.update_search_index()
    with store.engine.connect() as conn:
        behind = conn.execute(text("SELECT count(*) FROM sessions "
                                   "WHERE indexed_position < next_position")).scalar_one()
    assert behind == 0
    after = answers(store)  # everything from the index (FTS5 trigram / pg_trgm)
    assert before == FOLDING_EXPECTED
    assert after == FOLDING_EXPECTED
