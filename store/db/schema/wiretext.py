"""A call's wire text on SQLite, stored once (persistence; issue 39, "a database no bigger than
the files").

``tool_calls.wire_json`` holds the canonical wire record, exact text:
``{"id":...,"type":"function","function":{"name":...,"arguments":"<the argument text>"}}``.
Its argument text is also the row's queryable copy (``arguments``), and its id and name are
the row's ``call_id`` and ``raw_name``: for almost every call the wire text is those three
columns again (172.7 MB of 3,215 MB at 10^6 messages, every call of the scale benchmark's
home). Since revision 0030, SQLite's writer stores ``''`` instead when the wire text is
exactly what SQLite's ``json_object`` makes of the row's own columns: the comparison runs in the
INSERT itself, with the same SQLite function that rebuilds it on read, so a row is elided
only when its rebuilt text is byte for byte the text given. An argument text that is not an
object (a bare number would be stored as a number: the column's affinity), a minted id, a
name or an argument text the wire form holds otherwise (a provider's spaces in the argument
text, say) keep their wire text whole; so do an id or a name past printable ASCII and an
argument text holding a DEL, U+2028 or U+2029, whose escaping a later SQLite could spell
otherwise: a rebuilt text must be the same text whatever release reads the file (the chains'
digests are over it).

Every reader asks for :func:`wire_sql` / :func:`wire_column` instead of the column: the
stored text where there is one, else the rebuilt one. ``''`` is never a wire text (a wire
record is a JSON object). PostgreSQL stores the text: its queryable copy is JSONB, which keeps
no argument text (its own key order and spacing), so there the wire text is its only copy.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ELIDE_SQL", "insert_value_sql", "wire_column", "wire_sql"]

#: The wire text made of a call's id, name and argument text (``{i}``, ``{n}``, ``{a}``: SQL
#: for each, columns or parameters): SQLite's ``json_object``, compact as the writer's
#: ``orjson``. The one spelling the writer compares with and every reader rebuilds with.
_REBUILT = ("json_object('id', {i}, 'type', 'function', 'function', "
            "json_object('name', {n}, 'arguments', {a}))")

#: What a row must hold for its wire text to be elided, beyond the rebuilt text being the
#: one given: arguments that are an object, and nothing whose escaping another SQLite release
#: might spell otherwise (an id or name past printable ASCII, a DEL, U+2028 or U+2029 in the
#: argument text), so that the rebuilt text stays the same text whatever SQLite reads the file.
_PLAIN = ("substr({a}, 1, 1) = '{{' AND NOT {i} GLOB '*[^ -~]*' AND NOT {n} GLOB '*[^ -~]*' "
          "AND instr({a}, char(127)) = 0 AND instr({a}, char(8232)) = 0 "
          "AND instr({a}, char(8233)) = 0")

_COLUMNS = {"i": "call_id", "n": "raw_name", "a": "arguments"}

#: Whether the stored row's wire text can be elided (``db compact`` elides older rows by it).
ELIDE_SQL = ("wire_json <> '' AND typeof(arguments) = 'text' AND " + _PLAIN.format(**_COLUMNS)
             + " AND wire_json = " + _REBUILT.format(**_COLUMNS))


def wire_sql(postgres: bool, alias: str = "") -> str:
    """The SQL of a call row's wire text (``alias``: the table's name or alias in the
    statement, default none)."""
    p = f"{alias}." if alias else ""
    if postgres:
        return f"{p}wire_json"
    rebuilt = _REBUILT.format(**{key: p + column for key, column in _COLUMNS.items()})
    return f"CASE WHEN {p}wire_json <> '' THEN {p}wire_json ELSE {rebuilt} END"


def wire_column(table: Any, postgres: bool) -> Any:
    """:func:`wire_sql` as a Core column labelled ``wire_json`` for ``table`` (the
    ``tool_calls`` table or an alias of it). (SQLAlchemy imported here: the command line's
    stdlib readers import this module for :func:`wire_sql`.)"""
    from sqlalchemy import literal_column

    if postgres:
        return table.c.wire_json.label("wire_json")
    return literal_column(wire_sql(False, table.name)).label("wire_json")


def insert_value_sql(wire: str, call_id: str, raw_name: str, arguments: str) -> str:
    """SQLite's INSERT value of ``wire_json`` from the statement's (numbered) parameters: ``''``
    where the given wire text is the one rebuilt from the given id, name and arguments (an
    object's text, and nothing another release might escape otherwise), else the text."""
    given = {"i": call_id, "n": raw_name, "a": arguments}
    return (f"CASE WHEN {_PLAIN.format(**given)} AND {wire} = {_REBUILT.format(**given)} "
            f"THEN '' ELSE {wire} END")
