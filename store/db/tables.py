"""The schema: SQLAlchemy Core tables (persistence layer; imports SQLAlchemy only).

Every table's primary key leads with ``session_id`` so that the schema can be distributed by
session on a sharded PostgreSQL (Citus: ``create_distributed_table(<table>, 'session_id')``),
except ``tool_aliases``, a small global table (a Citus reference table).

Columns named ``*_json`` hold canonical JSON **text** (exact bytes; JSONB would reorder keys and
drop whitespace). ``tool_calls.arguments`` is the derived, queryable copy of the arguments:
JSON on SQLite, JSONB on PostgreSQL, NULL when the arguments are invalid.

Changing a table here needs an Alembic revision in ``migrations/versions``; a test runs
``alembic check`` to prove the two agree.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    text,
    true,
)
from sqlalchemy.dialects.postgresql import JSONB

from store.tools.vocabulary import VIEW_NAMES

__all__ = [
    "NAMING_CONVENTION",
    "call_secrets",
    "call_views",
    "chain_heads",
    "WIRE_VERSION",
    "messages",
    "metadata",
    "session_holds",
    "sessions",
    "tombstones",
    "tool_aliases",
    "tool_calls",
    "tool_definitions",
    "tool_results",
    "trust_keys",
]

#: Named constraints from the first revision on: SQLite batch migrations need names to drop
#: constraints later (Alembic naming.rst).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

#: The canonical wire form written by this version (tool_calls.wire_version).
WIRE_VERSION = 1

# Arguments as JSON: SQLite's JSON1 text, PostgreSQL's JSONB (GIN-indexable, issue 5).
QueryableJSON = JSON().with_variant(JSONB(), "postgresql")
UTCDateTime = DateTime(timezone=True)

sessions = Table(
    "sessions",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("title", Text),
    Column("provider", String),
    Column("model", String),
    Column("cwd", Text, doc="working directory of the agent"),
    Column("agent", String, doc="the agent that recorded it (claude-code, codex, ...): "
                                "scopes aliases (revision 0005)"),
    Column("tags_json", Text, nullable=False, doc="JSON array of tag strings"),
    Column("metadata_json", Text, nullable=False, doc="JSON object of anything else"),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column(
        "next_position",
        Integer,
        nullable=False,
        doc="position the next appended message gets; allocated under the session row lock",
    ),
    Column(
        "indexed_position",
        Integer,
        nullable=False,
        server_default="0",
        doc="search watermark: the messages before it are in the search index "
            "(store/db/search_index.py)",
    ),
    Column("chain_digest", String,
           doc="digest of the last message's chain (store.trust.chain; revision 0011)"),
    # The sessions whose new messages the search index has not caught up with (revision 0005).
    Index("ix_sessions_search_behind", "session_id",
          sqlite_where=text("next_position > indexed_position"),
          postgresql_where=text("next_position > indexed_position")),
)

messages = Table(
    "messages",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("message_key", String, doc="idempotency key: client-given or provider message id"),
    Column("message_id", String, doc="the provider's or transcript's own id of the message"),
    Column("role", String, nullable=False),
    Column("source", String, doc="the record shape the normalizer recognised"),
    Column("text", Text, nullable=False, doc="visible text, for display and search"),
    Column("parts_json", Text, nullable=False, doc="ordered parts; calls/results by index"),
    Column("extras_json", Text, doc="message-level provider fields kept for replay"),
    Column("metadata_json", Text, doc="transcript envelope: timestamps, parents, sidechains"),
    Column("created_at", UTCDateTime, nullable=False),
    Column("digest", String, doc="chained digest of the message as stored (store.trust.chain; "
                                 "revision 0011)"),
    ForeignKeyConstraint(["session_id"], ["sessions.session_id"], ondelete="CASCADE"),
    Index("ux_messages_session_key", "session_id", "message_key", unique=True),
    # Audit (revision 0004): time-range filters of the audits start from this index ...
    Index("ix_messages_created_at", "created_at"),
    # ... and every audit query reads a call's time through this covering one (an index-only
    # lookup by the call's session and position: the message rows themselves are never read).
    Index("ix_messages_time", "session_id", "position", "created_at"),
)

tool_calls = Table(
    "tool_calls",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("call_index", Integer, primary_key=True, autoincrement=False),
    Column("call_id", String, nullable=False, doc="provider id, or a minted one (id_minted)"),
    Column("id_minted", Boolean, nullable=False),
    Column("raw_name", String, nullable=False, doc="the name as recorded; aliases apply on load"),
    Column("wire_json", Text, nullable=False, doc="canonical wire record, exact text"),
    Column("arguments_status", String, nullable=False),
    Column("arguments_error", Text, doc="the parser's message when the arguments are invalid"),
    Column("arguments", QueryableJSON, doc="queryable copy; NULL when invalid"),
    Column("extras_json", Text, doc="opaque provider fields (signatures, item ids, index)"),
    Column("source", String),
    Column(
        "wire_version",
        Integer,
        nullable=False,
        server_default="1",
        doc="which canonical form wrote wire_json (WIRE_VERSION)",
    ),
    ForeignKeyConstraint(
        ["session_id", "position"],
        ["messages.session_id", "messages.position"],
        ondelete="CASCADE",
    ),
    Index("ix_tool_calls_session_call_id", "session_id", "call_id"),
    # Audit (revision 0004): covers the usage summary (scanned in order, grouped by raw_name,
    # without reading the argument JSON of any call) and the alias-aware tool filter of the
    # call search (raw_name IN ...); it also serves what ix_tool_calls_raw_name did (dropped
    # by revision 0007: a prefix of this one, pure write cost). The indexes that only one
    # backend has (FTS5, GIN) are in store/db/search_schema.py.
    Index("ix_tool_calls_usage", "raw_name", "session_id", "position", "call_index",
          "arguments_status"),
)

tool_results = Table(
    "tool_results",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("result_index", Integer, primary_key=True, autoincrement=False),
    Column("call_id", String, doc="the reference as recorded (may be NULL)"),
    Column("call_position", Integer, doc="the linked call: its message position ..."),
    Column("call_index", Integer, doc="... and index; NULL when no call matched (orphan)"),
    Column("is_error", Boolean, nullable=False),
    Column("name", String),
    Column("content_json", Text, nullable=False, doc="the result content exactly as recorded"),
    Column("extras_json", Text),
    Column("source", String),
    ForeignKeyConstraint(
        ["session_id", "position"],
        ["messages.session_id", "messages.position"],
        ondelete="CASCADE",
    ),
    Index("ix_tool_results_call", "session_id", "call_position", "call_index"),
)

# Audit (revision 0004): error results only (few rows), for the usage summary's error count and
# the "error" status filter of the call search (index-only; is_error makes SQLite see that).
Index(
    "ix_tool_results_errors",
    tool_results.c.session_id,
    tool_results.c.call_position,
    tool_results.c.call_index,
    tool_results.c.is_error,
    sqlite_where=tool_results.c.is_error == true(),
    postgresql_where=tool_results.c.is_error == true(),
)

# Argument views (revision 0007; store.tools.vocabulary.argument_views): the shell command as one
# string, the file path, the search pattern, the URL of a call, one row per view it has. Derived
# data, off the write path: the search catch-up (store/db/search_index.py) fills it from the
# same watermark as the text index, and a search scans the calls it has not reached yet.
call_views = Table(
    "call_views",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("call_index", Integer, primary_key=True, autoincrement=False),
    Column("view", String, primary_key=True, doc=f"one of {', '.join(VIEW_NAMES)}"),
    Column("text", Text, nullable=False, doc="the view, cut to 2,000 characters"),
    ForeignKeyConstraint(
        ["session_id", "position"],
        ["messages.session_id", "messages.position"],
        ondelete="CASCADE",
    ),
)

tool_definitions = Table(
    "tool_definitions",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("name", String, primary_key=True),
    Column("description", Text, nullable=False),
    Column("parameters_json", Text, nullable=False, doc="JSON Schema of the parameters"),
    Column("definition_json", Text, nullable=False, doc="the definition as recorded"),
    Column("recorded_at", UTCDateTime, nullable=False),
    ForeignKeyConstraint(["session_id"], ["sessions.session_id"], ondelete="CASCADE"),
)

tool_aliases = Table(
    "tool_aliases",
    metadata,
    Column("agent", String, primary_key=True, server_default="",
           doc="'' for every agent, else the sessions.agent it holds for (revision 0005)"),
    Column("raw_name", String, primary_key=True),
    Column("current_name", String, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

# Trust (revision 0011, store/trust): what was removed, the heads recorded, the legal holds.
tombstones = Table(
    "tombstones",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("erased_at", UTCDateTime, primary_key=True),
    Column("start_position", Integer, primary_key=True, autoincrement=False,
           doc="the first position removed (0: the whole session)"),
    Column("kind", String, nullable=False, doc="erase | delete | prune | truncate"),
    Column("messages", Integer, nullable=False, doc="how many messages were removed"),
    Column("digest", String, doc="chain digest of the last message removed"),
    Column("reason", Text),
    Column("actor", String, doc="who asked, when known"),
)

chain_heads = Table(
    "chain_heads",
    metadata,
    Column("head", String, primary_key=True, doc="as printed by `db head`"),
    Column("recorded_at", UTCDateTime, nullable=False),
    Column("body", Text, nullable=False, doc="the canonical listing the head is a digest of"),
)

session_holds = Table(
    "session_holds",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("reason", Text, nullable=False),
    Column("held_at", UTCDateTime, nullable=False),
    Column("actor", String),
    ForeignKeyConstraint(["session_id"], ["sessions.session_id"], ondelete="CASCADE"),
)

# Secrets out of the index (revision 0011, store/trust/secrets.py): the keyed digest of every
# secret the detectors found in a call's arguments or a result's content, filled by the search
# catch-up with the index (whose text holds the markers instead), and the per-store key.
call_secrets = Table(
    "call_secrets",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("item", Integer, primary_key=True, autoincrement=False,
           doc="0: a call's arguments, 1: a result's content"),
    Column("item_index", Integer, primary_key=True, autoincrement=False),
    Column("digest", String, primary_key=True, doc="HMAC-SHA256 of the value (trust_keys)"),
    Column("kind", String, nullable=False, doc="the detector's kind (github_token, ...)"),
    Column("call_position", Integer, doc="the call it belongs to (a result: its linked call)"),
    Column("call_index", Integer),
    ForeignKeyConstraint(
        ["session_id", "position"],
        ["messages.session_id", "messages.position"],
        ondelete="CASCADE",
    ),
    Index("ix_call_secrets_digest", "digest"),
)

trust_keys = Table(
    "trust_keys",
    metadata,
    Column("name", String, primary_key=True),
    Column("key", String, nullable=False, doc="hex; made at random by revision 0011"),
)
