"""Schema audit: stored calls validated against their tool schemas (persistence layer).

:func:`schema_audit` validates stored calls against the tool definitions recorded with their
session, or against a schema the caller gives (:func:`load_schema_file`), with the
``Parameters`` validator; one :class:`SchemaViolation` per offending call.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson
from sqlalchemy import (
    Connection,
    select,
)

from store.audit.sql import check_page, connect
from store.core.arguments import loads_json
from store.core.errors import ParametersError
from store.core.model import InvalidToolCall
from store.db.base import alias_table, reads_once
from store.db.schema.tables import tool_calls, tool_definitions
from store.db.schema.wiretext import wire_column
from store.normalize.definitions import normalize_tool_definitions
from store.records.codec import decode_call
from store.redaction.redact import Redactor
from store.tools.names import AliasTable
from store.tools.schemas import Parameters, validate_arguments

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = ["SchemaViolation", "load_schema_file", "schema_audit"]

# -- schema audit -----------------------------------------------------------------------------

SchemaSource = Mapping[str, Parameters | Mapping[str, Any]] | Sequence[Any] | str | Path



@dataclass(frozen=True, slots=True)
class SchemaViolation:
    """A stored call that its tool's schema rejects.

    ``kind``: ``schema`` (the validator's problems), ``invalid_arguments`` (the arguments are not
    a JSON object; the parser's error), ``undefined_tool`` (the session recorded definitions,
    none for this tool), ``unreadable_schema`` (the definition's schema is outside what
    ``Parameters.from_json_schema`` reads). ``source``: ``session`` or ``given``.
    """

    session_id: str
    position: int
    index: int
    call_id: str
    name: str
    raw_name: str
    kind: Literal["schema", "invalid_arguments", "undefined_tool", "unreadable_schema"]
    problems: tuple[str, ...]
    arguments_text: str
    source: Literal["session", "given"]
    redactions: int = field(default=0, compare=False)


def load_schema_file(path: str | Path) -> dict[str, Parameters | ParametersError]:
    """Tool schemas from a JSON file: a list of tool definitions in any provider's shape (or
    ``{"tools": [...]}``, or one definition), or an object mapping tool names to the JSON
    Schema of their parameters. A schema ``Parameters`` cannot read maps to its error."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ParametersError(f"cannot read the schema file {str(path)!r}: {exc}") from exc
    return _schemas(data)


def _schemas(data: Any) -> dict[str, Parameters | ParametersError]:
    if isinstance(data, str | Path):
        return load_schema_file(data)
    if isinstance(data, Mapping) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if isinstance(data, Mapping) and data and all(
        isinstance(v, Parameters) or (isinstance(v, Mapping) and "name" not in v
                                      and ("type" in v or "properties" in v))
        for v in data.values()
    ):
        return {str(name): _parameters(schema) for name, schema in data.items()}
    try:
        definitions = normalize_tool_definitions(data)
    except Exception as exc:  # UnrecognizedRecord and friends: say what the file should be
        raise ParametersError(f"not a list of tool definitions or a name-to-schema object: "
                              f"{exc}") from exc
    return {d.name: _parameters(d.parameters) for d in definitions}


def _parameters(schema: Any) -> Parameters | ParametersError:
    if isinstance(schema, Parameters):
        return schema
    try:
        return Parameters.from_json_schema(schema)
    except ParametersError as exc:
        return exc


@reads_once
def schema_audit(
    store: TranscriptStore,
    *,
    session_id: str | None = None,
    schema: SchemaSource | None = None,
    tool: str | None = None,
    redactor: Redactor | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SchemaViolation]:
    """The stored calls their tool's schema rejects, by session, position and index.

    Without ``schema``, each call is checked against the definitions recorded with its session
    (sessions without definitions are skipped; a call to a tool the session did not define is
    an ``undefined_tool`` violation). With ``schema`` (a name-to-schema mapping, tool
    definitions, or a path for :func:`load_schema_file`), the calls of the tools it names are
    checked against it, in every session (or in ``session_id``). A definition matches a call by
    the call's recorded name, else by its current name. ``tool`` keeps one current tool name.
    """
    if limit is not None:
        check_page(limit, offset)
    given = _schemas(schema) if schema is not None else None
    out: list[SchemaViolation] = []
    skipped = 0
    with connect(store) as conn, closing(
        _violations(conn, session_id, given, tool, redactor)
    ) as violations:
        for violation in violations:
            if skipped < offset:
                skipped += 1
                continue
            if limit is not None and len(out) >= limit:
                break
            out.append(violation)
    return out


def _violations(
    conn: Connection,
    session_id: str | None,
    given: dict[str, Parameters | ParametersError] | None,
    tool: str | None,
    redactor: Redactor | None,
) -> Generator[SchemaViolation, None, None]:
    c = tool_calls
    aliases = alias_table(conn)
    statement = select(c.c.session_id, c.c.position, c.c.call_index, c.c.call_id, c.c.raw_name,
                       c.c.arguments_status, c.c.arguments_error,
                       wire_column(c, conn.dialect.name == "postgresql"),
                       c.c.extras_json, c.c.source, c.c.id_minted)
    if session_id is not None:
        statement = statement.where(c.c.session_id == session_id)
    if tool is not None:
        names = [raw for raw in aliases.raw_names(tool) if aliases.display_name(raw) == tool]
        statement = statement.where(c.c.raw_name.in_(names))
    if given is not None:
        # The recorded names a given schema applies to (by raw name, or by current name).
        wanted = {raw for name in given for raw in aliases.raw_names(name)} | set(given)
        statement = statement.where(c.c.raw_name.in_(sorted(wanted)))
    else:
        statement = statement.where(c.c.session_id.in_(
            select(tool_definitions.c.session_id).distinct().scalar_subquery()
        ))
    statement = statement.order_by(c.c.session_id, c.c.position, c.c.call_index)
    rows = conn.execution_options(stream_results=True, yield_per=1000).execute(statement)
    try:
        yield from _check_calls(conn, rows, given, aliases, redactor)
    finally:
        rows.close()


def _check_calls(
    conn: Connection,
    rows: Iterable[Any],
    given: dict[str, Parameters | ParametersError] | None,
    aliases: AliasTable,
    redactor: Redactor | None,
) -> Iterator[SchemaViolation]:
    parsed: dict[str, Parameters | ParametersError] = {}  # by schema text, across sessions
    for sid, calls in groupby(rows, key=lambda row: row[0]):
        if given is not None:
            schemas, source = given, "given"
        else:
            schemas, source = _session_schemas(conn, sid, parsed), "session"
        for row in calls:
            _, pos, idx, call_id, raw, status, error, wire, extras, src, minted = row
            name = aliases.display_name(raw)
            params = schemas.get(raw, schemas.get(name))
            if params is None and given is not None:
                continue  # matched a name the given schema does not define for this call
            call = decode_call(call_id, wire, status, error, extras, src, bool(minted))
            kind: Any
            if params is None:
                kind, problems = "undefined_tool", [
                    f"no tool named {name!r} was recorded with session {sid!r}"]
            elif isinstance(params, ParametersError):
                kind, problems = "unreadable_schema", [str(params)]
            elif isinstance(call, InvalidToolCall):
                kind, problems = "invalid_arguments", [call.error_message]
            else:
                kind, problems = "schema", validate_arguments(params, call.input)
                if not problems:
                    continue
            arguments = call.arguments_text
            redactions = 0
            if redactor is not None:
                arguments, redactions = redactor.redact_text(arguments)
                cleaned = []
                for problem in problems:
                    problem, count = redactor.redact_text(problem)
                    cleaned.append(problem)
                    redactions += count
                problems = cleaned
            yield SchemaViolation(sid, pos, idx, call_id, name, raw, kind, tuple(problems),
                                  arguments, source, redactions)  # type: ignore[arg-type]


def _session_schemas(
    conn: Connection, session_id: str, parsed: dict[str, Parameters | ParametersError]
) -> dict[str, Parameters | ParametersError]:
    rows = conn.execute(
        select(tool_definitions.c.name, tool_definitions.c.parameters_json)
        .where(tool_definitions.c.session_id == session_id)
    ).all()
    out: dict[str, Parameters | ParametersError] = {}
    for name, schema_text in rows:
        if schema_text not in parsed:
            parsed[schema_text] = _parameters(loads_json(schema_text))
        out[name] = parsed[schema_text]
    return out


