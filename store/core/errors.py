"""Every error transcript-store raises on purpose.

The tree::

    StoreError                      base of everything below
    ├── ToolArgumentsError          (also ValueError) arguments fail the one parser;
    │                               ``.kind`` is unsupported_type | non_object_json | invalid_json
    ├── RecordError                 (also ValueError) a record cannot be read
    │   ├── UnrecognizedRecord      no known shape matches; says what was found
    │   │   └── NotAMessage         a known record kind that carries no message (headers)
    │   ├── AmbiguousRecord         two spellings of one key carry different values
    │   ├── TooLargeError           a value over a configured size limit
    │   ├── NestingTooDeep          a JSON value nested deeper than the store accepts
    │   └── ImportFileError         a file that cannot be imported at all (``path``, ``reason``)
    ├── StreamError                 (also ValueError) a stream event cannot be assembled,
    │                               e.g. a fragment for no open call
    ├── AliasError                  (also ValueError) a tool-name alias is malformed
    ├── ParametersError             an argument-schema declaration is wrong
    │   └── FrozenParametersError   a built ``Parameters`` was mutated
    ├── DatabaseError               the database failed or refused an operation (wraps the
    │   │                           driver's error, chained)
    │   ├── SchemaOutOfDate         the database is at an older revision; names the upgrade command
    │   ├── ConflictError           another writer changed the session first (compare-and-delete)
    │   │   ├── KeyConflictError    a checked append found a stored key holding another message
    │   │   └── SessionHeldError    erasing, deleting or pruning a session under legal hold
    │   │                           (``session_id``, ``reason``)
    │   ├── DistributionError       the database cannot be distributed on Citus (``.problem``:
    │   │                           not_citus | not_coordinator | no_workers | worker_unreachable
    │   │                           | missing_extension | not_at_head)
    │   └── SessionNotFound         (also KeyError) no session with that id
    ├── ConfigurationError          (also ValueError) a database URL or option that cannot be used
    ├── UsageError                  (also ValueError) a function called with a value it cannot use
    │                               (a negative limit, an unknown target); names the parameter
    │   ├── RuleError               a Sigma rule that cannot be loaded; names the file and rule
    │   ├── EntryExistsError        an agent's MCP configuration holds another entry of that
    │   │                           name (``path``, ``name``): replacing it needs consent
    │   └── SearchQueryError        a message search query that cannot be read (``query``,
    │                               ``problem``)
    ├── MissingExtra                (also ImportError) an integration used without its framework;
    │                               names the extra to install
    └── ArgumentValidationError     (also ValueError) arguments fail a ``Parameters`` schema;
                                    ``.problems`` lists every problem at once

Each class says when it is raised. Errors carry structured attributes so callers
never have to parse messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

ArgumentErrorKind = Literal["unsupported_type", "non_object_json", "invalid_json"]


class StoreError(Exception):
    """Base class of every error raised on purpose by transcript-store."""


class ToolArgumentsError(StoreError, ValueError):
    """Tool-call arguments that the one parser rejects.

    ``kind`` says which rule failed; the message keeps one of three fixed prefixes:

    * ``unsupported_type``: "tool call arguments expected JSON text or an object, got <type>"
    * ``non_object_json``: "tool call arguments must be a JSON object, got <json type>"
    * ``invalid_json``: "tool call arguments are not valid JSON: <decoder detail>"
    """

    def __init__(self, kind: ArgumentErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ArgumentErrorKind = kind
        self.message = message

    def __reduce__(self) -> tuple[type[ToolArgumentsError], tuple[str, str]]:
        return (type(self), (self.kind, self.message))


class RecordError(StoreError, ValueError):
    """A record (message, tool call, stream event) cannot be read."""


class UnrecognizedRecord(RecordError):
    """No known record shape matches; the message says what was found instead."""


class AmbiguousRecord(RecordError):
    """Two spellings of one structural key carry different non-null values.

    ``key`` is the canonical key name; ``spellings`` the conflicting spellings found.
    """

    def __init__(self, key: str, spellings: tuple[str, ...]) -> None:
        self.key = key
        self.spellings = spellings
        shown = ", ".join(repr(s) for s in spellings)
        super().__init__(
            f"ambiguous record: key {key!r} is given as {shown} with different values"
        )

    def __reduce__(self) -> tuple[type[AmbiguousRecord], tuple[str, tuple[str, ...]]]:
        return (type(self), (self.key, self.spellings))


class NotAMessage(UnrecognizedRecord):
    """A record of a known kind that carries no message (headers, metadata lines)."""


class TooLargeError(RecordError):
    """A value over a configured size limit (``limit`` and ``size`` in bytes)."""

    def __init__(self, what: str, size: int, limit: int) -> None:
        self.what = what
        self.size = size
        self.limit = limit
        super().__init__(f"{what} is {size} bytes, over the limit of {limit} bytes")

    def __reduce__(self) -> tuple[type[TooLargeError], tuple[str, int, int]]:
        return (type(self), (self.what, self.size, self.limit))


class NestingTooDeep(RecordError):
    """A JSON value (arguments, result content, parts, extras, metadata) nested deeper than
    ``limit`` levels (``store.core.depth.MAX_DEPTH``); ``what`` names it, ``depth`` is how
    deep it goes (at least ``limit + 1``)."""

    def __init__(self, what: str, depth: int, limit: int) -> None:
        self.what = what
        self.depth = depth
        self.limit = limit
        super().__init__(f"{what}: nested {depth} levels deep, over the limit of {limit}")

    def __reduce__(self) -> tuple[type[NestingTooDeep], tuple[str, int, int]]:
        return (type(self), (self.what, self.depth, self.limit))


class StreamError(StoreError, ValueError):
    """A stream event that cannot be assembled (a fragment for no open call, a bad event)."""


class AliasError(StoreError, ValueError):
    """A tool-name alias with an empty or non-string name."""


class ParametersError(StoreError):
    """An argument-schema declaration is wrong (duplicate name, bad type, bad JSON Schema)."""


class FrozenParametersError(ParametersError, AttributeError):
    """A ``Parameters`` object was changed after it was built."""


class DatabaseError(StoreError):
    """The database failed or refused an operation; the driver's error is chained."""


class ConnectionLost(DatabaseError):
    """The connection to the database died during a read (the server dropped it, or the
    network did). The store's reads run once more on a new connection before they raise it."""


class SchemaOutOfDate(DatabaseError):
    """The database schema is not at the revision this library needs.

    ``current`` and ``head`` are the revisions; the message names the upgrade command.
    """

    def __init__(self, current: str | None, head: str, url: str) -> None:
        self.current = current
        self.head = head
        super().__init__(
            f"database {url} is at schema revision {current or 'none'}, this store needs {head}; "
            f"run `transcript-store db upgrade --db {url}` (or open it with upgrade=True)"
        )

    def __reduce__(self) -> tuple[type[SchemaOutOfDate], tuple[str | None, str, str]]:
        return (type(self), (self.current, self.head, str(self).split(" ")[1]))


class ConflictError(DatabaseError):
    """Another writer changed the session between reading and writing it."""


class DistributionError(DatabaseError):
    """``db distribute`` refuses: ``problem`` says why (see the tree above), the message names
    the node or table concerned and what to do."""

    def __init__(self, problem: str, message: str) -> None:
        super().__init__(message)
        self.problem = problem
        self.message = message

    def __reduce__(self) -> tuple[type[DistributionError], tuple[str, str]]:
        return (type(self), (self.problem, self.message))


class KeyConflictError(ConflictError):
    """An append asked to check its keys (``append(..., on_key_conflict="raise")``) found a key
    already stored in the session for a *different* message; nothing was stored. ``keys``
    names them (the importer then treats the file as rewritten)."""

    def __init__(self, session_id: str, keys: tuple[str, ...]) -> None:
        self.session_id = session_id
        self.keys = keys
        shown = ", ".join(repr(k) for k in keys[:5]) + (" ..." if len(keys) > 5 else "")
        super().__init__(f"session {session_id!r}: {len(keys)} keys already stored for "
                         f"different messages: {shown}")

    def __reduce__(self) -> tuple[type[KeyConflictError], tuple[str, tuple[str, ...]]]:
        return (type(self), (self.session_id, self.keys))


class SessionHeldError(ConflictError):
    """A session under legal hold (``sessions hold``) cannot be erased, deleted or pruned until
    it is released; ``session_id`` and ``reason`` (the hold's) say which and why. Nothing was
    removed."""

    def __init__(self, session_id: str, reason: str) -> None:
        self.session_id = session_id
        self.reason = reason
        super().__init__(f"session {session_id!r} is under legal hold ({reason}): release it "
                         "first (transcript-store sessions release ID)")

    def __reduce__(self) -> tuple[type[SessionHeldError], tuple[str, str]]:
        return (type(self), (self.session_id, self.reason))


class SessionNotFound(DatabaseError, KeyError):
    """No session with the given id (``session_id`` says which)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"no session with id {session_id!r}")

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[type[SessionNotFound], tuple[str]]:
        return (type(self), (self.session_id,))


class ConfigurationError(StoreError, ValueError):
    """A database URL or option that cannot be used."""


class UsageError(StoreError, ValueError):
    """A function was called with a value it cannot use (a negative limit, an unknown target,
    an empty search term); the message names the parameter and what it takes."""


class LogProofError(StoreError, ValueError):
    """A transparency-log checkpoint, signature, key or proof that cannot be read or does not
    verify (``store/tlog``); the message says which check failed."""


class AmbiguousSessionId(UsageError):
    """A session id prefix that the ids of several sessions start with: ``prefix``, and the
    ``candidates`` (at most :data:`AMBIGUOUS_SHOWN`; ``more`` when there are others)."""

    def __init__(self, prefix: str, candidates: tuple[str, ...], more: bool = False) -> None:
        self.prefix = prefix
        self.candidates = candidates
        self.more = more
        listed = ", ".join(candidates) + (", ..." if more else "")
        super().__init__(f"session id prefix {prefix!r} is ambiguous: it starts the ids of "
                         f"{'more than ' if more else ''}{len(candidates)} sessions "
                         f"({listed}); give more characters")

    def __reduce__(self) -> tuple[type[AmbiguousSessionId], tuple[str, tuple[str, ...], bool]]:
        return (type(self), (self.prefix, self.candidates, self.more))


#: How many candidates an ambiguous prefix lists.
AMBIGUOUS_SHOWN = 10


class RuleError(UsageError):
    """A Sigma rule file that cannot be loaded (not YAML, not a rule, a modifier or condition
    the evaluator does not support); the message names the file and the rule."""


class EntryExistsError(UsageError):
    """An agent's MCP configuration file (``path``) holds a different entry named ``name``
    already: ``transcript-store mcp --install`` replaces it only when asked to."""

    def __init__(self, path: Path | str, name: str, message: str) -> None:
        self.path = Path(path)
        self.name = name
        super().__init__(message)

    def __reduce__(self) -> tuple[type[EntryExistsError], tuple[Path, str, str]]:
        return (type(self), (self.path, self.name, str(self.args[0])))
class SearchQueryError(UsageError):
    """A message search query that cannot be read (an unclosed quote, a ``*`` inside a word,
    nothing to find): ``query`` as given and ``problem``, what is wrong with it; the message
    also says what the query language takes (``store.core.textquery``)."""
    def __init__(self, query: str, problem: str) -> None:
        self.query = query
        self.problem = problem
        super().__init__(f"search query {query!r}: {problem} (the query takes words, all of "
                         'which must match, "a phrase" in double quotes, a prefix* and '
                         "-word to leave out)")
    def __reduce__(self) -> tuple[type[SearchQueryError], tuple[str, str]]:
        return (type(self), (self.query, self.problem))


class SettingsError(UsageError, TypeError):
    """Settings of the wrong type or with an unknown field (``session_settings={"limitt": 1}``):
    also a ``TypeError``, as the frameworks raise for them."""


class MissingExtra(StoreError, ImportError):
    """An integration was used without its framework installed; the message names the extra."""


class ImportFileError(RecordError):
    """A file that cannot be imported at all; ``path`` names it and ``reason`` says why.

    Raised for that file only: an import of several files reports it and goes on.
    """

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")

    def __reduce__(self) -> tuple[type[ImportFileError], tuple[Path, str]]:
        return (type(self), (self.path, self.reason))


class ArgumentValidationError(StoreError, ValueError):
    """Arguments that fail a ``Parameters`` schema; ``problems`` lists each one."""

    def __init__(self, message: str, problems: tuple[str, ...]) -> None:
        super().__init__(message)
        self.message = message
        self.problems = problems

    def __reduce__(
        self,
    ) -> tuple[type[ArgumentValidationError], tuple[str, tuple[str, ...]]]:
        return (type(self), (self.message, self.problems))
