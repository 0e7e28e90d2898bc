"""A new SQLite database made at head from the file a migration run leaves (persistence).

Creating a store file ran every revision through Alembic: 0.3-0.45 s on the development
machine, the whole of a first open, and of every new file an integration (an Agents SDK
session on a new path) or a test makes. A run from empty always leaves the same file but for
a few values made per database (the secret index's key, the transparency log's origin, the
seeds' times). ``head_sqlite.json`` holds what it leaves: the schema's statements (tables,
then indexes, views and triggers, each in the order the run created them; FTS5 makes its own
shadow tables, whose rows it then sets as the run left them) and every row, written by
``scripts/bake_schema.py`` (:func:`store.db.schema.migrate.bake`) from two runs. The
columns whose values differ between the two are the per-database ones, remade at each
creation: a hex token of the same length after the same text, or the creation time (the
file keeps their form only, so that a bake writes the same file each time). Only a
file with nothing in it is made so (one a downgrade left with an empty version table goes to
Alembic).

:func:`create_at_head` replays it inside the schema lock's transaction
(:func:`store.db.schema.migrate.ensure_at_head`); a baked file of another revision than the
scripts' head, made on a library that answers otherwise what the revisions ask of it
(:func:`library`: the SQLite versions they compare with, FTS5 and its trigram tokenizer), or
none leaves the creation to Alembic. Tests bake the file again from the
scripts and compare it with the shipped one, and compare a created database with a migrated
one object for object and row for row (``tests/migrations/test_baked_schema.py``).
"""

from __future__ import annotations

import functools
import re
import secrets
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from store.core.errors import DatabaseError

if TYPE_CHECKING:
    from sqlalchemy import Connection

__all__ = ["BAKED", "THRESHOLDS", "baked", "content", "create_at_head", "dump", "library", "write"]

#: The baked file, beside this module (shipped as package data).
BAKED = Path(__file__).with_name("head_sqlite.json")

_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{6})?")
_HEX_TAIL = re.compile(r"[0-9a-f]+\Z")
#: The order a file's objects are made in: a view or trigger after the tables it reads.
_KINDS = ("table", "index", "view", "trigger")
#: SQLite's own tables, never made by a statement: the schema table itself.
_INTERNAL = ("sqlite_schema", "sqlite_temp_schema", "sqlite_master", "sqlite_temp_master")
#: What SQLite makes itself with a table (AUTOINCREMENT's counters: kept by the inserts).
_MADE_WITH = ("sqlite_sequence",)


#: The SQLite versions at which the revisions make another schema (they compare
#: ``sqlite3.sqlite_version_info`` with these; a test finds every such comparison here).
THRESHOLDS = ((3, 34, 0), (3, 35, 0))
#: The FTS5 tables the revisions make only where the library can (a probe each).
_PROBES = {"fts5": "CREATE VIRTUAL TABLE probe USING fts5(body, "
                   "tokenize='unicode61 remove_diacritics 0')",
           "trigram": "CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='trigram')"}


@functools.cache
def library() -> dict[str, bool]:
    """What the revisions ask of this SQLite library (the baked file's schema is the one a
    library answering the same makes)."""
    found = {f"at least {'.'.join(map(str, t))}": sqlite3.sqlite_version_info >= t
             for t in THRESHOLDS}
    for name, probe in _PROBES.items():
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute(probe)
            found[name] = True
        except sqlite3.Error:
            found[name] = False
        finally:
            conn.close()
    return found


@functools.cache
def baked() -> dict[str, Any] | None:
    """The shipped file, read once (``None``: not there or not readable)."""
    try:
        data: dict[str, Any] = orjson.loads(BAKED.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data


def create_at_head(conn: Connection, revision: str) -> bool:
    """Make the empty database on ``conn`` (in its transaction) what a migration run to
    ``revision`` makes; ``False`` (nothing done) when the baked file is of another revision
    or missing: Alembic then runs the scripts."""
    data = baked()
    if data is None or data.get("revision") != revision or data.get("library") != library() \
            or conn.exec_driver_sql("SELECT count(*) FROM sqlite_schema").scalar_one():
        return False  # (a file left with an empty version table by a downgrade: Alembic)
    for statement in data["schema"]:
        conn.exec_driver_sql(statement)
    now = datetime.now(UTC)
    for table, spec in data["tables"].items():
        fresh = {spec["columns"].index(column): kind
                 for column, kind in data["fresh"].get(table, {}).items()}
        rows = [tuple(_fresh(value, fresh[i], now) if i in fresh else _value(value)
                      for i, value in enumerate(row)) for row in spec["rows"]]
        marks = ", ".join("?" * len(spec["columns"]))
        names = ", ".join(f'"{c}"' for c in spec["columns"])
        if spec.get("shadow"):  # (FTS5's own rows, as the run left them: its index's record)
            conn.exec_driver_sql(f'DELETE FROM "{table}"')
        conn.exec_driver_sql(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', rows)
    return True


def _value(value: Any) -> Any:
    """A baked value as stored (``{"blob": hex}``: bytes)."""
    return bytes.fromhex(value["blob"]) if isinstance(value, dict) else value


def _baked_value(value: Any) -> Any:
    return {"blob": value.hex()} if isinstance(value, bytes) else value


def _fresh(value: str, kind: str, now: datetime) -> str:
    if kind == "time":
        return now.strftime("%Y-%m-%d %H:%M:%S.%f" if "." in value else "%Y-%m-%d %H:%M:%S")
    tail = _HEX_TAIL.search(value)
    assert tail is not None  # (the bake made it a token)
    return value[:tail.start()] + secrets.token_hex(len(tail.group()) // 2)


def dump(path: Path) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """A database file's schema statements (in making order, without what SQLite or FTS5
    makes itself) and every table's rows (by rowid where it has one)."""
    conn = sqlite3.connect(path)
    try:
        listed = conn.execute("PRAGMA table_list").fetchall()  # (schema, name, type, ncol, wr)
        kinds = {name: kind for schema, name, kind, *_ in listed if schema == "main"}
        rowless = {name for schema, name, _, _, wr, *_ in listed if schema == "main" and wr}
        made = conn.execute("SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL "
                            "ORDER BY rowid").fetchall()
        unknown = sorted(name for _, name, _ in made
                         if name.startswith("sqlite_") and name not in _MADE_WITH)
        if unknown:
            raise DatabaseError(f"cannot bake {', '.join(unknown)}: SQLite makes it itself")
        schema = [sql for kind in _KINDS for type_, name, sql in made
                  if type_ == kind and kinds.get(name) != "shadow" and name not in _MADE_WITH]
        tables: dict[str, dict[str, Any]] = {}
        for name, kind in kinds.items():
            if kind not in ("table", "shadow") or name in _INTERNAL:
                continue
            columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{name}")')]
            order = "" if name in rowless else " ORDER BY rowid"
            rows = [[_baked_value(v) for v in row]
                    for row in conn.execute(f'SELECT * FROM "{name}"{order}')]
            tables[name] = {"kind": kind, "columns": columns, "rows": rows}
        return schema, tables
    finally:
        conn.close()


def content(revision: str, first: tuple[list[str], dict[str, dict[str, Any]]],
            second: tuple[list[str], dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """The baked file's content from the :func:`dump` of two migration runs from empty to
    ``revision`` (a second apart, so that their times differ:
    :func:`store.db.schema.migrate.bake`). ``DatabaseError`` for a value that differs between
    the runs and is neither a time nor a hex token (this module must learn to make it)."""
    (schema, tables), (schema_b, tables_b) = first, second
    if schema != schema_b or set(tables) != set(tables_b):
        raise DatabaseError("two migration runs from empty made different schemas")
    fresh: dict[str, dict[str, str]] = {}
    for name, spec in tables.items():
        other = tables_b[name]
        if spec["columns"] != other["columns"] or len(spec["rows"]) != len(other["rows"]):
            raise DatabaseError(f"two migration runs from empty filled {name} differently")
        for i, column in enumerate(spec["columns"]):
            pairs = [(a[i], b[i]) for a, b in zip(spec["rows"], other["rows"], strict=True)]
            if all(a == b for a, b in pairs):
                continue
            fresh.setdefault(name, {})[column] = _kind(name, column, pairs)
    for name, columns in fresh.items():  # (a stand-in for what each new file makes)
        at = {tables[name]["columns"].index(column): kind for column, kind in columns.items()}
        tables[name]["rows"] = [[_stand_in(v, at[i]) if i in at else v for i, v in enumerate(row)]
                                for row in tables[name]["rows"]]
    return {"revision": revision, "library": library(), "schema": schema, "fresh": fresh,
            "tables": {name: {"columns": spec["columns"], "rows": spec["rows"],
                              **({"shadow": True} if spec["kind"] == "shadow" else {})}
                       for name, spec in tables.items()
                       if spec["rows"] and name not in _MADE_WITH}}


def _stand_in(value: str, kind: str) -> str:
    """A per-database value as the baked file keeps it: its form only (with or without a
    fraction of a second; the text before the token and the token's length), so that a bake
    writes the same file each time and ships no key."""
    if kind == "time":
        return "1970-01-01 00:00:00" + (".000000" if "." in value else "")
    tail = _HEX_TAIL.search(value)
    assert tail is not None  # (:func:`_kind` made it a token)
    return value[:tail.start()] + "0" * len(tail.group())


def _kind(table: str, column: str, pairs: list[tuple[Any, Any]]) -> str:
    values = [v for pair in pairs for v in pair]
    if all(isinstance(v, str) and _TIME.fullmatch(v) for v in values):
        return "time"
    tokens = [(_HEX_TAIL.search(a), _HEX_TAIL.search(b)) if isinstance(a, str)
              and isinstance(b, str) else (None, None) for a, b in pairs]
    if all(ta and tb and a[:ta.start()] == b[:tb.start()] and len(ta.group()) == len(tb.group())
           and len(ta.group()) % 2 == 0 and len(ta.group()) >= 16
           for (a, b), (ta, tb) in zip(pairs, tokens, strict=True)):
        return "token"
    raise DatabaseError(f"{table}.{column} differs between two migration runs from empty and "
                        "is neither a time nor a hex token: teach store/db/schema/baked.py "
                        "to make it for each new database")


def write(data: dict[str, Any], path: Path = BAKED) -> None:
    """``data`` as the baked file (one statement or row a line, for readable diffs)."""
    lines = ['{"revision": ' + orjson.dumps(data["revision"]).decode() + ",",
             '"library": ' + orjson.dumps(data["library"]).decode() + ",",
             '"fresh": ' + orjson.dumps(data["fresh"], option=orjson.OPT_SORT_KEYS).decode()
             + ",", '"schema": [']
    lines += [("  " if i == 0 else ", ") + orjson.dumps(sql).decode()
              for i, sql in enumerate(data["schema"])]
    lines.append('], "tables": {')
    for t, (name, spec) in enumerate(data["tables"].items()):
        lines.append(("" if t == 0 else ", ") + orjson.dumps(name).decode() + ': {'
                     + ('"shadow": true, ' if spec.get("shadow") else "") + '"columns": '
                     + orjson.dumps(spec["columns"]).decode() + ', "rows": [')
        lines += [("  " if i == 0 else ", ") + orjson.dumps(row).decode()
                  for i, row in enumerate(spec["rows"])]
        lines.append("]}")
    lines.append("}}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
