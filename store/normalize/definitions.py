"""Tool definitions of every provider, read into ``ToolDefinition`` values (domain).

Shapes: OpenAI Chat ``{type: function, function: {name, description, parameters}}``,
Responses ``{type: function, name, description, parameters}``, Anthropic
``{name, description, input_schema}``, Gemini ``{functionDeclarations: [...]}`` (or one
declaration, ``parameters`` or ``parametersJsonSchema``), Bedrock
``{toolSpec: {name, description, inputSchema: {json: ...}}}``; any key spelling. A definition
without parameters gets the empty object schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from store.core.errors import UnrecognizedRecord
from store.core.keys import canonical_keys
from store.core.transcript import ToolDefinition

__all__ = ["normalize_tool_definitions"]

_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


def normalize_tool_definitions(
    records: Mapping[str, Any] | Iterable[Mapping[str, Any]],
) -> list[ToolDefinition]:
    """Read one definition, a Gemini ``tools`` entry, or a list of either."""
    items = [records] if isinstance(records, Mapping) else list(records)
    out: list[ToolDefinition] = []
    for record in items:
        if not isinstance(record, Mapping):
            raise UnrecognizedRecord(f"a tool definition must be an object, got {record!r}")
        top, _ = canonical_keys(record)
        declarations = top.get("function_declarations")
        if isinstance(declarations, list):
            out.extend(normalize_tool_definitions(declarations))
            continue
        body: Mapping[str, Any] = top
        for wrapper in ("function", "tool_spec"):
            inner = top.get(wrapper)
            if isinstance(inner, Mapping):
                body, _ = canonical_keys(inner)
                break
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise UnrecognizedRecord(
                f"a tool definition needs a non-empty name: found keys {sorted(map(str, record))}"
            )
        description = body.get("description") or ""
        if not isinstance(description, str):
            raise UnrecognizedRecord(f"tool {name!r}: description must be text")
        schema: Any = None
        for key in ("parameters", "input_schema", "parameters_json_schema"):
            if body.get(key) is not None:
                schema = body[key]
                break
        if isinstance(schema, Mapping) and set(schema) == {"json"}:  # Bedrock inputSchema
            schema = schema["json"]
        if schema is None:
            schema = _EMPTY_SCHEMA
        if not isinstance(schema, Mapping):
            raise UnrecognizedRecord(f"tool {name!r}: parameters must be a JSON Schema object")
        out.append(ToolDefinition(name, description, dict(schema), dict(record)))
    return out
