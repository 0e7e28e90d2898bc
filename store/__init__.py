"""transcript-store: keep LLM agent session transcripts, tool calls in canonical wire form.

The public API is exactly what ``__all__`` lists (a test keeps it sorted and complete).
"""

from __future__ import annotations

import logging

from store.arguments import (
    ARGUMENT_STATUSES,
    argument_status,
    dumps_arguments,
    loads_json,
    parse_arguments,
)
from store.audit.export import ExportStats, export_calls_csv, export_jsonl
from store.audit.plans import explain_search, explain_usage, refill_search_index
from store.audit.queries import (
    CALL_STATUSES,
    ArgumentCondition,
    CallMatch,
    CallQuery,
    SchemaViolation,
    ToolUsage,
    iter_calls,
    search_calls,
    tool_usage,
)
from store.audit.schema_audit import load_schema_file, schema_audit
from store.db.admin import (
    SchemaStatus,
    check_database,
    database_status,
    downgrade_database,
    upgrade_database,
)
from store.db.search_index import IndexUpdate
from store.db.store import TranscriptStore
from store.db.verify import VerifyProblem, VerifyReport
from store.errors import (
    AliasError,
    AmbiguousRecord,
    ArgumentValidationError,
    ConfigurationError,
    ConflictError,
    DatabaseError,
    FrozenParametersError,
    ImportFileError,
    MissingExtra,
    NotAMessage,
    ParametersError,
    RecordError,
    SchemaOutOfDate,
    SessionNotFound,
    SettingsError,
    StoreError,
    StreamError,
    TooLargeError,
    ToolArgumentsError,
    UnrecognizedRecord,
    UsageError,
)
from store.importers.formats import FORMATS as IMPORT_FORMATS
from store.importers.formats import (
    ImportProblem,
    ParsedFile,
    ParsedSession,
    decode_codex_output,
    detect_format,
    read_sessions,
)
from store.importers.walk import ImportProgress, ImportSummary, import_paths
from store.keys import camelize_args
from store.model import (
    InvalidToolCall,
    Message,
    OpaquePart,
    Part,
    ServerToolCall,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
)
from store.names import DEFAULT_ALIASES, UNKNOWN_TOOL, AliasTable, display_name
from store.normalize.calls import normalize_tool_call, parse_text_tool_calls
from store.normalize.definitions import normalize_tool_definitions
from store.normalize.messages import normalize_message, normalize_payload
from store.providers import TARGETS, Target
from store.redact import Redactor
from store.replay.render import render
from store.replay.repair import RepairChange, Repaired, repair
from store.schemas import (
    PARAMETER_TYPES,
    Parameter,
    Parameters,
    ParametersBuilder,
    ParameterType,
    validate_arguments,
)
from store.stream.assembler import PROVIDERS, StreamAssembler, assemble, detect_provider
from store.times import as_utc
from store.transcript import (
    AppendResult,
    LoadedCall,
    SessionInfo,
    StoredMessage,
    ToolDefinition,
    Transcript,
)

# The package logs under "store" (migrations applied, retries after lock conflicts, import
# progress and problems, viewer requests at debug) and is silent until the application
# configures logging (the CLI does with -v).
logging.getLogger("store").addHandler(logging.NullHandler())


def _version() -> str:
    """The installed distribution's version (pyproject.toml is the one place it is written)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("transcript-store")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


__version__ = _version()

__all__ = [
    "ARGUMENT_STATUSES",
    "AliasError",
    "AliasTable",
    "AmbiguousRecord",
    "AppendResult",
    "ArgumentCondition",
    "ArgumentValidationError",
    "CALL_STATUSES",
    "CallMatch",
    "CallQuery",
    "ConfigurationError",
    "ConflictError",
    "DEFAULT_ALIASES",
    "DatabaseError",
    "ExportStats",
    "FrozenParametersError",
    "IMPORT_FORMATS",
    "ImportFileError",
    "ImportProblem",
    "ImportProgress",
    "ImportSummary",
    "IndexUpdate",
    "InvalidToolCall",
    "LoadedCall",
    "Message",
    "MissingExtra",
    "NotAMessage",
    "OpaquePart",
    "PARAMETER_TYPES",
    "PROVIDERS",
    "Parameter",
    "ParameterType",
    "Parameters",
    "ParametersBuilder",
    "ParametersError",
    "ParsedFile",
    "ParsedSession",
    "Part",
    "RecordError",
    "Redactor",
    "RepairChange",
    "Repaired",
    "SchemaOutOfDate",
    "SchemaStatus",
    "SchemaViolation",
    "ServerToolCall",
    "SessionInfo",
    "SessionNotFound",
    "SettingsError",
    "StoreError",
    "StoredMessage",
    "StreamAssembler",
    "StreamError",
    "TARGETS",
    "Target",
    "TextPart",
    "ThinkingPart",
    "TooLargeError",
    "ToolArgumentsError",
    "ToolCall",
    "ToolDefinition",
    "ToolResult",
    "ToolUsage",
    "Transcript",
    "TranscriptStore",
    "UNKNOWN_TOOL",
    "UnrecognizedRecord",
    "UsageError",
    "VerifyProblem",
    "VerifyReport",
    "__version__",
    "argument_status",
    "as_utc",
    "assemble",
    "camelize_args",
    "check_database",
    "database_status",
    "decode_codex_output",
    "detect_format",
    "detect_provider",
    "display_name",
    "downgrade_database",
    "dumps_arguments",
    "explain_search",
    "explain_usage",
    "export_calls_csv",
    "export_jsonl",
    "import_paths",
    "iter_calls",
    "load_schema_file",
    "loads_json",
    "normalize_message",
    "normalize_payload",
    "normalize_tool_call",
    "normalize_tool_definitions",
    "parse_arguments",
    "parse_text_tool_calls",
    "read_sessions",
    "refill_search_index",
    "render",
    "repair",
    "schema_audit",
    "search_calls",
    "tool_usage",
    "upgrade_database",
    "validate_arguments",
]
