"""Throughput of normalize + parse over the corpus tool calls, next to bare ``orjson.loads``.

Run: ``.venv/bin/python bench/normalize.py [--corpus PATH] [--seconds 2]``

It collects every client tool-call record in the corpus (response bodies, request bodies,
transcripts and, assembled, streams are not needed: the records are what storage reads), then
times ``normalize_tool_call(record)`` (key spellings, shape detection, the strict parser, the
``ToolCall`` value, aliasing) against ``orjson.loads`` of the same argument texts.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from store import ToolCall, normalize_tool_call
from store.normalize.calls import read_call

CALL_MARKERS = {"function", "functionCall", "function_call", "toolUse"}


def candidates(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if (
            isinstance(value.get("function"), dict)
            or value.get("type") in ("tool_use", "function_call")
            or any(isinstance(value.get(k), dict) for k in CALL_MARKERS - {"function"})
        ) and "role" not in value:
            yield value
            return
        for child in value.values():
            yield from candidates(child)
    elif isinstance(value, list):
        for child in value:
            yield from candidates(child)


def corpus_records(root: Path) -> list[dict[str, Any]]:
    records = []
    for path in sorted(root.rglob("*.json*")):
        if "stream" in path.parent.name:
            continue
        text = path.read_bytes()
        docs = (
            [orjson.loads(line) for line in text.splitlines() if line.strip()]
            if path.suffix == ".jsonl"
            else [orjson.loads(text)]
        )
        for doc in docs:
            for record in candidates(doc):
                if isinstance(read_call(record), ToolCall):
                    records.append(record)
    return records


def synthetic_records(count: int = 2000) -> list[dict[str, Any]]:
    """Agent-like calls with arguments of 50 B to 4 KB, a third of them non-ASCII."""
    rng = random.Random(7)
    words = ["alpha", "beta", "grep", "src/store/core/model.py", "fix the bug", "Übersicht", "café",
             "naïve", "日本語", "path/to/file.txt", "TODO", "rm -rf build"]
    records = []
    for i in range(count):
        size = rng.choice([50, 200, 800, 2000, 4000])
        content = ""
        while len(content) < size:
            content += rng.choice(words) + " "
        args = {"path": f"src/module_{i}.py", "content": content, "line": rng.randint(1, 900)}
        records.append({"id": f"call_{i:06d}", "type": "function",
                        "function": {"name": rng.choice(["read_file", "bash", "edit_file"]),
                                     "arguments": orjson.dumps(args).decode()}})
    return records


def rate(function: Callable[[], object], items: int, seconds: float) -> float:
    loops = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        function()
        loops += 1
    return loops * items / elapsed


def compare(label: str, records: list[dict[str, Any]], seconds: float) -> None:
    texts = [normalize_tool_call(r).arguments_text for r in records]
    total_bytes = sum(len(t.encode()) for t in texts)

    def ours() -> None:
        for record in records:
            normalize_tool_call(record)

    def bare() -> None:
        for text in texts:
            orjson.loads(text)

    ours_rate = rate(ours, len(records), seconds)
    bare_rate = rate(bare, len(texts), seconds)
    print(f"{label}: {len(records)} calls, mean arguments {total_bytes / len(texts):.0f} B")
    print(f"  normalize_tool_call       {ours_rate:>12,.0f} calls/s")
    print(f"  orjson.loads(arguments)   {bare_rate:>12,.0f} calls/s")
    print(f"  ratio                     {bare_rate / ours_rate:>12.2f}x  (time ours / time bare)")


def main() -> None:
    default = os.environ.get("TRANSCRIPT_CORPUS") or str(
        Path(__file__).resolve().parents[2] / "shared" / "corpus"
    )
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=default)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    compare("corpus", corpus_records(Path(args.corpus)), args.seconds)
    compare("synthetic agent calls (50 B - 4 KB)", synthetic_records(), args.seconds)


if __name__ == "__main__":
    main()
