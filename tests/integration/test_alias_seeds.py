"""Issue 33: an agent's own tool names (``AgentDefinition.tools``) reach every database
without a revision: a writable open seeds the rows never seeded (revision 0020's
``alias_seeds``), a user's removal or change stays, and a read-only open writes nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

import store
import store.db.schema.seeds as seeds
from store.agents.registry import vocabulary_rows
from store.db.schema.tables import alias_seeds

NEW = ("new-agent", "do_shell", "bash")


def _seeded(db: store.TranscriptStore) -> int:
    with db.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(alias_seeds)).scalar_one())


def test_every_vocabulary_row_is_seeded_once_and_kept(store_url: str) -> None:
    with store.TranscriptStore.open(store_url) as db:
        rows = {(a or "", r): c for a, r, c in db.aliases().rows()}
        assert all(rows.get((a or "", r)) == c for a, r, c in vocabulary_rows())
        assert _seeded(db) == len({(a or "", r) for a, r, _ in vocabulary_rows()})
    with store.TranscriptStore.open(store_url) as db:  # a second open adds nothing
        assert seeds.seed_vocabulary(db.engine) == 0


def test_a_new_agents_names_are_seeded_and_a_users_removal_stays(
        store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with store.TranscriptStore.open(store_url):
        pass
    monkeypatch.setattr(seeds, "vocabulary_rows", lambda: (*vocabulary_rows(), NEW))
    with store.TranscriptStore.open(store_url, read_only=True) as db:  # reads never write
        assert ("new-agent", "do_shell") not in db.aliases().scoped
    with store.TranscriptStore.open(store_url) as db:
        assert db.aliases().scoped[("new-agent", "do_shell")] == "bash"
        db.remove_alias("do_shell", agent="new-agent")
    with store.TranscriptStore.open(store_url) as db:  # not seeded again
        assert ("new-agent", "do_shell") not in db.aliases().scoped


def test_a_users_own_row_wins_over_a_later_seed(store_url: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with store.TranscriptStore.open(store_url) as db:
        db.add_alias("do_shell", "python", agent="new-agent")
    monkeypatch.setattr(seeds, "vocabulary_rows", lambda: (*vocabulary_rows(), NEW))
    with store.TranscriptStore.open(store_url) as db:
        assert db.aliases().scoped[("new-agent", "do_shell")] == "python"
