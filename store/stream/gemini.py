"""Gemini streams (SSE chunks or a JSON array of responses)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.core.model import make_tool_call
from store.stream.base import Call, Handler

__all__ = ["GeminiHandler"]


class GeminiHandler(Handler):
    """Each functionCall part (either casing) is one complete call."""

    provider = "gemini"

    def handle(self, event: Mapping[str, Any]) -> list[Call]:
        candidates = event.get("candidates")
        if candidates is None:
            return []
        if not isinstance(candidates, list):
            raise self.error("chunk", None, "'candidates' is not an array")
        done: list[Call] = []
        for c, raw_candidate in enumerate(candidates):
            candidate = self.obj(raw_candidate, "chunk", f"candidate {c}", "a candidate")
            content = candidate.get("content")
            if content is None:
                continue
            parts = self.obj(content, "chunk", f"candidate {c}", "'content'").get("parts")
            if parts is None:
                continue
            if not isinstance(parts, list):
                raise self.error("chunk", f"candidate {c}", "'parts' is not an array")
            for p, raw_part in enumerate(parts):
                key = f"candidate {c} part {p}"
                part = self.obj(raw_part, "chunk", key, "a part")
                function_call = self._either(part, "functionCall", "function_call", key)
                if function_call is not None:
                    done.append(self._call(part, function_call, key))
        return done

    def _either(self, part: Mapping[str, Any], camel: str, snake: str, key: str) -> Any:
        value = part.get(camel)
        other = part.get(snake)
        if value is not None and other is not None and value != other:
            raise self.error("chunk", key, f"{camel!r} and {snake!r} differ")
        return other if value is None else value

    def _call(self, part: Mapping[str, Any], raw: object, key: str) -> Call:
        fc = self.obj(raw, "chunk", key, "'functionCall'")
        if "partialArgs" in fc or fc.get("willContinue"):
            raise self.error("chunk", key, "streamed function-call arguments are not supported")
        call_id = self.text(fc.get("id"), "chunk", key, "functionCall.id")
        name = self.name_of(fc.get("name"), "chunk", key)
        signature = self._either(part, "thoughtSignature", "thought_signature", key)
        extras = {"thought_signature": signature} if signature is not None else None
        return make_tool_call(call_id, name, fc.get("args"), extras=extras, source=self.source)
