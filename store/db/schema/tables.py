"""The schema: SQLAlchemy Core tables (persistence layer; imports SQLAlchemy only).

Every table's primary key leads with ``session_id`` so that the schema can be distributed by
session on a sharded PostgreSQL (Citus: ``create_distributed_table(<table>, 'session_id')``),
except ``tool_aliases``, a small global table, and ``source_files``, where each source file's
read stopped (both Citus reference tables).

Columns named ``*_json`` hold canonical JSON **text** (exact bytes; JSONB would reorder keys and
drop whitespace). ``tool_calls.arguments`` is the derived, queryable copy of the arguments:
JSON on SQLite, JSONB on PostgreSQL, NULL when the arguments are invalid.

Changing a table here needs an Alembic revision in ``migrations/versions``; a test runs
``alembic check`` to prove the two agree.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    text,
    true,
)
from sqlalchemy.dialects.postgresql import JSONB

from store.db.index.search_schema import unindexed_sql
from store.tools.vocabulary import VIEW_NAMES

__all__ = [
    "alias_seeds",
    "call_secrets",
    "call_views",
    "chain_heads",
    "context_summary",
    "findings",
    "log_leaves",
    "log_state",
    "message_usage",
    "messages",
    "metadata",
    "NAMING_CONVENTION",
    "session_holds",
    "session_sources",
    "session_summaries",
    "sessions",
    "source_files",
    "tombstones",
    "tool_aliases",
    "tool_calls",
    "tool_definitions",
    "tool_results",
    "tool_summary",
    "trust_keys",
    "usage_summary",
    "WIRE_VERSION",
    "written_columns",
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

def _search_columns() -> list[Column[object]]:
    """The columns of a call or result the search catch-up derives (revision 0023)."""
    return [
        Column("search_body", Text, doc="derived: the decoded, redacted, folded text the call "
                                        "search reads; NULL until the catch-up"),
        Column("search_id", Integer, doc="derived, SQLite: the id of its entry in search_fts "
                                         "(unique: ux_tool_calls_search_id / "
                                         "ux_tool_results_search_id); NULL on PostgreSQL"),
    ]


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
    Column("created_at", UTCDateTime, nullable=False,
           doc="when the store first stored the session (its wall clock, not the session's)"),
    Column("updated_at", UTCDateTime, nullable=False,
           doc="when the store last wrote the row (its wall clock; shown as a stored time)"),
    # The session's own activity (revision 0016): its agent's start record, else its first
    # message's own time; its last message's (the append's time only for messages that carry
    # none). NULL until the first message. Lists sort, filters and prune compare by it.
    Column("started_at", UTCDateTime, doc="the session's own first activity (revision 0016)"),
    Column("last_activity_at", UTCDateTime,
           doc="the session's own last activity (revision 0016)"),
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
            "(store/db/index/search_index.py)",
    ),
    Column(
        "message_indexed_position",
        Integer,
        nullable=False,
        server_default="0",
        doc="message search watermark: the messages before it are in the message index "
            "(store/db/index/message_index.py; revision 0017)",
    ),
    Column("chain_digest", String,
           doc="digest of the last message's chain (store.trust.chain; revision 0011)"),
    Column(
        "logged_position",
        Integer,
        nullable=False,
        server_default="0",
        doc="transparency-log watermark: the messages before it are leaves of the log "
            "(store/db/proofs/tlog.py, revision 0018)",
    ),
    # Lineage (revision 0015, store.core.lineage): the session it descends from (not a
    # foreign key: a subagent's file may be imported before its parent's), how (subagent,
    # fork, continuation) and the parent's call that spawned it.
    Column("parent_session_id", String, doc="the parent session's id (store.core.lineage)"),
    Column("lineage", String, doc="subagent | fork | continuation (when it has a parent)"),
    Column("parent_call_id", String, doc="the parent's call that spawned it (a subagent)"),
    # The sessions whose new messages the search index has not caught up with (revision 0005).
    Index("ix_sessions_search_behind", "session_id",
          sqlite_where=text("next_position > indexed_position"),
          postgresql_where=text("next_position > indexed_position")),
    # The sessions whose new messages the message index has not caught up with (0017).
    Index("ix_sessions_messages_behind", "session_id",
          sqlite_where=text("next_position > message_indexed_position"),
          postgresql_where=text("next_position > message_indexed_position")),
    # The sessions whose new messages the transparency log has not caught up with (0018).
    Index("ix_sessions_log_behind", "session_id",
          sqlite_where=text("next_position > logged_position"),
          postgresql_where=text("next_position > logged_position")),
    # A session's children (revision 0015): `sessions list --parent`, trees, --with-children.
    Index("ix_sessions_parent", "parent_session_id"),
    # Prune's range and the listing's order by activity (revision 0016).
    Index("ix_sessions_last_activity", "last_activity_at"),
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
    *_search_columns(),
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
    # backend has (FTS5, GIN) are in store/db/index/search_schema.py.
    Index("ix_tool_calls_usage", "raw_name", "session_id", "position", "call_index",
          "arguments_status"),
    # The calls the search catch-up has not reached (revision 0023): few rows, so that a search
    # checks in one probe that every call below the watermark has its text.
    Index("ix_tool_calls_unindexed", "session_id", "position",
          sqlite_where=text(unindexed_sql(False)), postgresql_where=text(unindexed_sql(True))),
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
    *_search_columns(),
    ForeignKeyConstraint(
        ["session_id", "position"],
        ["messages.session_id", "messages.position"],
        ondelete="CASCADE",
    ),
    Index("ix_tool_results_call", "session_id", "call_position", "call_index"),
    # The results the search catch-up has not reached (revision 0023), as for the calls.
    Index("ix_tool_results_unindexed", "session_id", "position",
          sqlite_where=text(unindexed_sql(False)), postgresql_where=text(unindexed_sql(True))),
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
# data, off the write path: the search catch-up (store/db/index/search_index.py) fills it from the
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

# Token usage (revision 0008): what the provider billed for the response a message holds, as
# the agent recorded it, one row per message that has any. Written by the importers
# (TranscriptStore.record_usage), off the append path; one response repeated on several lines
# (Claude Code: one line per content block) is one message, so one row.
message_usage = Table(
    "message_usage",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("model", String, doc="the model that answered, as recorded"),
    Column("request_id", String, doc="the provider's request id (Claude Code requestId)"),
    Column("response_id", String, doc="the provider's response id (Anthropic message id)"),
    Column("input_tokens", Integer, nullable=False, server_default="0",
           doc="input tokens not read from or written to a cache"),
    Column("output_tokens", Integer, nullable=False, server_default="0",
           doc="output tokens, reasoning included"),
    Column("cache_creation_tokens", Integer, nullable=False, server_default="0"),
    Column("cache_read_tokens", Integer, nullable=False, server_default="0"),
    Column("reasoning_tokens", Integer, nullable=False, server_default="0",
           doc="of output_tokens, those spent reasoning (when the agent says)"),
    ForeignKeyConstraint(
        ["session_id", "position"],
        ["messages.session_id", "messages.position"],
        ondelete="CASCADE",
    ),
    # the rows of one response (a resumed session's file repeats its parent's): the reports
    # count it once (revision 0022)
    Index("ix_message_usage_response", "response_id", "request_id"),
)

# Summaries (revision 0022, store/db/index/summaries.py): what ``tools usage`` and the usage
# reports fold, per session, kept by the search catch-up off the write path. Derived data:
# a session's rows are used only while its stamp (``session_summaries``) still matches the
# session (``next_position`` and ``chain_digest``: any append, truncation or rewrite changes
# one; ``record_usage`` deletes the stamp) and ``version`` is the library's; a report reads
# the other sessions' calls and usage as before. Deleting the session deletes them.
session_summaries = Table(
    "session_summaries",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("next_position", Integer, nullable=False, doc="the session's, when summarized"),
    Column("chain_digest", String, nullable=False, doc="the session's, when summarized"),
    Column("version", String, nullable=False, doc="what the rows mean (summaries.VERSION)"),
    Column("repeats", Boolean, nullable=False,
           doc="a usage row of it shares its response with another stored row"),
    ForeignKeyConstraint(["session_id"], ["sessions.session_id"], ondelete="CASCADE"),
)
tool_summary = Table(
    "tool_summary",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("item", Integer, primary_key=True, autoincrement=False),
    Column("raw_name", String, nullable=False),
    Column("action", String, doc="an editor tool's action (store.tools.actions), else NULL"),
    Column("calls", Integer, nullable=False),
    Column("invalid_calls", Integer, nullable=False),
    Column("error_calls", Integer, nullable=False, doc="calls with an error result"),
    Column("unanswered_calls", Integer, nullable=False, doc="calls without a result"),
    Column("first_at", UTCDateTime, nullable=False),
    Column("last_at", UTCDateTime, nullable=False),
    Column("agent", String, doc="the session's agent (revision 0026: the totals' index)"),
    ForeignKeyConstraint(["session_id"], ["sessions.session_id"], ondelete="CASCADE"),
    # ``tools usage`` over the whole store (or an agent's sessions): the totals per (agent,
    # raw name, action) read in this index's order, no join and no sort (revision 0026).
    Index("ix_tool_summary_totals", "agent", "raw_name", "action", "session_id", "calls",
          "invalid_calls", "error_calls", "unanswered_calls", "first_at", "last_at"),
)
context_summary = Table(
    "context_summary",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("item", Integer, primary_key=True, autoincrement=False),
    Column("day", String, nullable=False, doc="UTC day of the calls (YYYY-MM-DD)"),
    Column("model", String, doc="the model of the calls' message usage, else NULL"),
    Column("raw_name", String, nullable=False),
    Column("calls", Integer, nullable=False),
    Column("results", Integer, nullable=False),
    Column("error_results", Integer, nullable=False),
    Column("result_chars", BigInteger, nullable=False,
           doc="the results' stored JSON, in characters (tools usage --by: context tokens)"),
    Column("agent", String, doc="the session's agent (revision 0028: the totals' index)"),
    ForeignKeyConstraint(["session_id"], ["sessions.session_id"], ondelete="CASCADE"),
    # ``tools usage --by``: its sums read in this index's order, no join, no sort (rev. 0028).
    Index("ix_context_summary_totals", "agent", "raw_name", "day", "model", "session_id",
          "calls", "results", "result_chars", "error_results"),
)
usage_summary = Table(
    "usage_summary",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("item", Integer, primary_key=True, autoincrement=False),
    Column("day", String, nullable=False, doc="UTC day of the responses (YYYY-MM-DD)"),
    Column("model", String),
    Column("responses", Integer, nullable=False),
    *(Column(name, BigInteger, nullable=False) for name in (
        "input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
        "reasoning_tokens", "input_past", "output_past", "cache_creation_past",
        "cache_read_past")),
    Column("last_at", UTCDateTime, nullable=False),
    ForeignKeyConstraint(["session_id"], ["sessions.session_id"], ondelete="CASCADE"),
)

# Findings (revision 0009; store/rules, ``rules check --save``): a Sigma rule that matched a
# call, one row per (call, rule); saving again replaces the row. Derived data: deleting the
# session or the message deletes them.
findings = Table(
    "findings",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("call_index", Integer, primary_key=True, autoincrement=False),
    Column("rule_id", String, primary_key=True),
    Column("call_id", String, nullable=False),
    Column("title", Text, nullable=False),
    Column("level", String, nullable=False, doc="informational, low, medium, high, critical"),
    Column("tags_json", Text, nullable=False, doc="JSON array of the rule's tags"),
    Column("agent", String),
    Column("tool", String, nullable=False, doc="canonical tool name when found"),
    Column("raw_tool", String, nullable=False),
    Column("field", String, nullable=False, doc="the Sigma field that matched"),
    Column("matched", Text, nullable=False, doc="the text that matched (secrets redacted)"),
    Column("found_at", UTCDateTime, nullable=False),
    ForeignKeyConstraint(
        ["session_id", "position"],
        ["messages.session_id", "messages.position"],
        ondelete="CASCADE",
    ),
    Index("ix_findings_rule", "rule_id"),
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

# Which vocabulary rows were ever seeded (revision 0020): an agent's own rows
# (``AgentDefinition.tools``) are seeded into tool_aliases on a writable open when their key is
# not here (store/db/schema/seeds.py), so a row a user removed is not seeded again. Global (a Citus
# reference table).
alias_seeds = Table(
    "alias_seeds",
    metadata,
    Column("agent", String, primary_key=True, server_default="",
           doc="'' for every agent, else the sessions.agent the row holds for"),
    Column("raw_name", String, primary_key=True),
    Column("seeded_at", UTCDateTime, nullable=False),
)

# Capture (revision 0010, store/capture): where the last read of each source file stopped, so
# that a pass reads only what is new (store/db/writing/sources.py); written in the transaction of
# the
# rows read. A global table keyed by path (a Citus reference table).
source_files = Table(
    "source_files",
    metadata,
    Column("path", String, primary_key=True, doc="the file's resolved path"),
    Column("identity", String, nullable=False, doc="<device>:<inode> when it was read"),
    Column("size", BigInteger, nullable=False),
    Column("mtime_ns", BigInteger, nullable=False),
    Column("read_offset", BigInteger, nullable=False, doc="bytes read up to (a line start)"),
    Column("read_lines", BigInteger, nullable=False, doc="lines before read_offset"),
    Column("digest", String, nullable=False, doc="of the read part's ends (capture/files.py)"),
    Column("format", String),
    Column("context_json", Text, nullable=False,
           doc="records a read from the offset needs again: [[line, record], ...]"),
    Column("pending", Boolean, nullable=False, doc="something was held back"),
    Column("read_at", UTCDateTime, nullable=False),
    Column("gone_at", UTCDateTime, doc="when a pass found the file deleted (NULL: present)"),
    # What each record kind of the file became (revision 0019, store/importers/account.py):
    # {kind: {outcome: count}}; NULL: read before the revision.
    Column("kinds_json", Text, doc="per record kind: stored, merged, skipped ... counts"),
)

# Which sessions each source file fed (revision 0010): a session whose file is gone says so.
session_sources = Table(
    "session_sources",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("path", String, primary_key=True),
    ForeignKeyConstraint(["session_id"], ["sessions.session_id"], ondelete="CASCADE"),
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


# The transparency log (revision 0018, store/db/proofs/tlog.py, docs/trust.md): one RFC 9162 tree
# per
# store whose leaves are the messages and the trust events in append order. No ``session_id``
# column (a leaf outlives its session): on Citus both are reference tables.
log_leaves = Table(
    "log_leaves",
    metadata,
    Column("leaf_index", BigInteger, primary_key=True, autoincrement=False),
    Column("leaf_hash", LargeBinary, nullable=False,
           doc="SHA-256(0x00 || salt || SHA-256(entry)) (store/tlog/bundle.py)"),
    Column("kind", String, nullable=False, doc="message | tombstone | hold | release"),
    Column("subject", String, nullable=False, doc="the session the entry is about"),
    Column("position", Integer, doc="a message's position; a tombstone's first position"),
    Column("salt", LargeBinary, doc="32 random bytes; NULL once the content is erased"),
    Column("entry", Text, doc="the canonical entry (JSON); NULL once the content is erased"),
    Column("logged_at", UTCDateTime, nullable=False),
    Index("ix_log_leaves_subject", "subject", "position"),
)

log_state = Table(
    "log_state",
    metadata,
    Column("name", String, primary_key=True, doc="'log': the one row, locked by each append"),
    Column("origin", String, nullable=False, doc="the checkpoints' origin line (random id)"),
    Column("created_at", UTCDateTime, nullable=False),
)


#: Columns the search catch-up derives and fills later (revision 0023): not written by an
#: append, not copied by a fork.
DERIVED_COLUMNS = frozenset({"search_body", "search_id"})


def written_columns(table: Table) -> list[Column[object]]:
    """The columns of ``table`` an append writes (every one but the derived ones)."""
    return [c for c in table.columns if c.name not in DERIVED_COLUMNS]
