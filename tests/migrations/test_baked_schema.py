"""A new SQLite file is made from the baked head schema (``store.db.schema.baked``) instead of
running every revision through Alembic: the shipped file is what the scripts make now, a file
made from it is the file a migration run makes (every object, every row, the pragmas), the
values made per database are made again for each file, and a baked file of another revision
leaves the creation to Alembic."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from store import TranscriptStore
from store.core.errors import DatabaseError
from store.db.schema import baked, migrate
from store.db.schema.engine import create_store_engine

pytestmark = pytest.mark.sqlite

PRAGMAS = ("journal_mode", "auto_vacuum", "page_size", "encoding", "user_version",
           "application_id", "foreign_keys")


def migrated(path: Path) -> Path:
    """A new file made by Alembic running every revision, then opened as a store is."""
    engine = create_store_engine(f"sqlite:///{path}")
    try:
        migrate.upgrade(engine, "head")
    finally:
        engine.dispose()
    TranscriptStore.open(f"sqlite:///{path}").close()
    return path


def created(path: Path) -> Path:
    TranscriptStore.open(f"sqlite:///{path}").close()
    return path


def objects(path: Path) -> list[tuple[str, str, str]]:
    """Every object of the file (SQLite's own and FTS5's shadow tables too), by name."""
    with sqlite3.connect(path) as conn:
        return sorted(conn.execute("SELECT type, name, tbl_name FROM sqlite_schema"))


def pragmas(path: Path) -> dict[str, object]:
    with sqlite3.connect(path) as conn:
        return {p: conn.execute(f"PRAGMA {p}").fetchone()[0] for p in PRAGMAS}


def masked(tables: dict, fresh: dict) -> dict:
    """The rows with the per-database values taken out."""
    out = {}
    for name, spec in tables.items():
        drop = {spec["columns"].index(c) for c in fresh.get(name, {})}
        out[name] = [[v for i, v in enumerate(row) if i not in drop] for row in spec["rows"]]
    return out


def test_the_shipped_file_is_what_the_scripts_make(tmp_path: Path) -> None:
    shipped = baked.baked()

    assert shipped is not None, f"{baked.BAKED} is missing: run scripts/bake_schema.py"
    made = migrate.bake(tmp_path)
    assert made["revision"] == migrate.head() == shipped["revision"], (
        "a revision was added: run `.venv/bin/python scripts/bake_schema.py`")
    assert made["fresh"] == shipped["fresh"]
    assert made["schema"] == shipped["schema"], "run `.venv/bin/python scripts/bake_schema.py`"
    assert masked(made["tables"], made["fresh"]) == masked(shipped["tables"], shipped["fresh"])
    assert made == shipped  # (the per-database values kept as their form: a bake is the same)


def test_a_new_file_is_the_file_a_migration_run_makes(tmp_path: Path) -> None:
    start = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
    ours, theirs = created(tmp_path / "ours.sqlite"), migrated(tmp_path / "theirs.sqlite")
    end = datetime.now(UTC).replace(tzinfo=None)
    fresh = baked.baked()["fresh"]  # type: ignore[index]

    assert objects(ours) == objects(theirs)
    assert pragmas(ours) == pragmas(theirs)
    schema, tables = baked.dump(ours)
    their_schema, their_tables = baked.dump(theirs)
    assert schema == their_schema
    assert set(tables) == set(their_tables)  # shadow tables and sqlite_sequence included
    assert masked(tables, fresh) == masked(their_tables, fresh)
    assert sum(len(t["rows"]) for t in tables.values()) > 400  # (the seeds are compared)
    for name, columns in fresh.items():
        for column, kind in columns.items():
            i = tables[name]["columns"].index(column)
            for row, their_row in zip(tables[name]["rows"], their_tables[name]["rows"],
                                      strict=True):
                if kind == "time":  # the creation's time, in the migration's form
                    assert start <= datetime.fromisoformat(row[i]) <= end, (name, row)
                    assert ("." in row[i]) == ("." in their_row[i]), (name, row, their_row)
                else:
                    assert row[i] != their_row[i] and len(row[i]) == len(their_row[i])
    with sqlite3.connect(ours) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    with TranscriptStore.open(f"sqlite:///{ours}") as opened:  # and it works as a store
        opened.append("s", [{"role": "user", "content": "hello"}])
        assert [h.session_id for h in opened.search_messages("hello")] == ["s"]


def test_the_values_made_per_database_are_made_for_each_file(tmp_path: Path) -> None:
    first, second = created(tmp_path / "a.sqlite"), created(tmp_path / "b.sqlite")

    def secrets_of(path: Path) -> tuple[str, str]:
        with sqlite3.connect(path) as conn:
            (key,) = conn.execute("SELECT key FROM trust_keys").fetchone()
            (origin,) = conn.execute("SELECT origin FROM log_state").fetchone()
        return key, origin

    (key_a, origin_a), (key_b, origin_b) = secrets_of(first), secrets_of(second)
    assert re.fullmatch("[0-9a-f]{64}", key_a) and key_a != key_b
    assert re.fullmatch("transcript-store.invalid/log/[0-9a-f]{16}", origin_a)
    assert origin_a != origin_b
    assert key_a not in baked.BAKED.read_text()  # (nothing secret is shipped)


def test_a_baked_file_of_another_revision_leaves_the_creation_to_alembic(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = dict(baked.baked() or {}, revision="0001", schema=["CREATE TABLE wrong (x)"])
    monkeypatch.setattr(baked, "baked", lambda: stale)

    made = created(tmp_path / "new.sqlite")

    assert objects(made) == objects(migrated(tmp_path / "theirs.sqlite"))
    assert "wrong" not in {name for _, name, _ in objects(made)}


@pytest.mark.parametrize("values", [("abc", "abd"), ("key-" + "a" * 16, "other-" + "b" * 16),
                                    (1, 2), ("x" * 8 + "0f", "x" * 8 + "1f")])
def test_a_value_that_differs_between_runs_and_is_neither_time_nor_token_is_refused(
        values: tuple[object, object]) -> None:
    with pytest.raises(DatabaseError, match="t.c differs between two migration runs"):
        baked.content("0", ([], {"t": {"kind": "table", "columns": ["c"], "rows": [[values[0]]]}}),
                      ([], {"t": {"kind": "table", "columns": ["c"], "rows": [[values[1]]]}}))


def test_a_library_that_answers_otherwise_leaves_the_creation_to_alembic(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An SQLite older than a version the revisions compare with, or without FTS5 or its
    trigram tokenizer, gets another schema from them: the baked one is not used."""
    other = dict(baked.library(), trigram=False)
    monkeypatch.setattr(baked, "library", lambda: other)
    used = []
    real = baked.create_at_head
    monkeypatch.setattr(baked, "create_at_head",
                        lambda conn, revision: used.append(real(conn, revision)) or used[-1])

    made = created(tmp_path / "new.sqlite")

    assert used == [False]
    assert objects(made) == objects(migrated(tmp_path / "theirs.sqlite"))


def test_every_library_question_of_the_revisions_is_asked() -> None:
    """Each SQLite version a revision compares with is one of ``baked.THRESHOLDS``, and each
    probe a revision makes (which FTS5 tokenizer it can create) is one of the library's."""
    scripts = Path(migrate.script_location()) / "versions"
    texts = [p.read_text() for p in sorted(scripts.glob("*.py"))]
    compared = {tuple(int(n) for n in m) for text in texts for m in re.findall(
        r"sqlite_version_info\s*[<>=!]+\s*\((\d+),\s*(\d+),\s*(\d+)\)", text)}
    assert compared and compared <= set(baked.THRESHOLDS)
    probes = {m for text in texts
              for m in re.findall(r"USING fts5\(body, \"?\s*\"?tokenize='([^']+)'\)", text)}
    assert probes == {"trigram", "unicode61 remove_diacritics 0"}
    assert set(baked.library()) == {"at least 3.34.0", "at least 3.35.0", "fts5", "trigram"}
