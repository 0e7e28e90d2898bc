"""transcript-store: keep LLM agent session transcripts, tool calls in canonical wire form.

The public API is exactly what ``__all__`` lists (a test keeps it sorted and complete).

Names load on first use (PEP 562), so that ``import store`` (and the command line's start-up)
costs only what is used: ``transcript-store --help`` never imports SQLAlchemy or rich.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

# The package logs under "store" (migrations applied, retries after lock conflicts, import
# progress and problems, viewer requests at debug) and is silent until the application
# configures logging (the CLI does with -v).
logging.getLogger("store").addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from store.audit.conditions import ArgumentCondition, ViewCondition
    from store.audit.export import ExportStats, export_calls_csv, export_jsonl
    from store.audit.plans import explain_search, explain_usage, refill_search_index
    from store.audit.schema_audit import SchemaViolation, load_schema_file, schema_audit
    from store.audit.search import CallMatch, CallQuery, count_calls, iter_calls, search_calls
    from store.audit.usage import ToolUsage, count_tools, tool_usage
    from store.core.arguments import (
        ARGUMENT_STATUSES,
        CALL_STATUSES,
        argument_status,
        dumps_arguments,
        loads_json,
        parse_arguments,
    )
    from store.core.errors import (
        AliasError,
        AmbiguousRecord,
        ArgumentValidationError,
        ConfigurationError,
        ConflictError,
        DatabaseError,
        DistributionError,
        FrozenParametersError,
        ImportFileError,
        KeyConflictError,
        MissingExtra,
        NotAMessage,
        ParametersError,
        RecordError,
        SchemaOutOfDate,
        SessionHeldError,
        SessionNotFound,
        SettingsError,
        StoreError,
        StreamError,
        TooLargeError,
        ToolArgumentsError,
        UnrecognizedRecord,
        UsageError,
    )
    from store.core.keys import camelize_args
    from store.core.model import (
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
    from store.core.times import as_utc
    from store.core.transcript import (
        AppendResult,
        LoadedCall,
        SessionInfo,
        StoredMessage,
        ToolDefinition,
        Transcript,
        redact_message,
        redact_transcript,
    )
    from store.db.admin import (
        SchemaStatus,
        check_database,
        database_status,
        distribute_database,
        downgrade_database,
        upgrade_database,
    )
    from store.db.distribute import (
        DEFAULT_SHARD_COUNT,
        DistributionReport,
        DistributionState,
        TableAction,
    )
    from store.db.lite import SessionPage, list_sessions
    from store.db.search_index import IndexUpdate
    from store.db.store import TranscriptStore
    from store.db.verify import VerifyProblem, VerifyReport
    from store.importers import FORMATS as IMPORT_FORMATS
    from store.importers.formats import (
        ImportProblem,
        ParsedFile,
        ParsedSession,
        decode_codex_output,
        detect_format,
        read_sessions,
    )
    from store.importers.walk import ImportProgress, ImportSummary, import_paths
    from store.normalize.calls import normalize_tool_call, parse_text_tool_calls
    from store.normalize.definitions import normalize_tool_definitions
    from store.normalize.messages import normalize_message, normalize_payload
    from store.redaction.redact import Redactor, hide_passwords
    from store.replay.render import render
    from store.replay.repair import RepairChange, Repaired, repair
    from store.replay.targets import TARGETS, Target
    from store.stream.assembler import PROVIDERS, StreamAssembler, assemble, detect_provider
    from store.tools.names import DEFAULT_ALIASES, UNKNOWN_TOOL, AliasTable, display_name
    from store.tools.schemas import (
        PARAMETER_TYPES,
        Parameter,
        Parameters,
        ParametersBuilder,
        ParameterType,
        validate_arguments,
    )
    from store.tools.vocabulary import VOCABULARY
    from store.trust.retention import ErasureReceipt, RetentionPolicy, parse_duration

__version__: str  # the installed distribution's (pyproject.toml is the one place it is
# written), read through importlib.metadata on first use: see __getattr__
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
    "DEFAULT_SHARD_COUNT",
    "DatabaseError",
    "DistributionError",
    "DistributionReport",
    "DistributionState",
    "ErasureReceipt",
    "ExportStats",
    "FrozenParametersError",
    "IMPORT_FORMATS",
    "ImportFileError",
    "ImportProblem",
    "ImportProgress",
    "ImportSummary",
    "IndexUpdate",
    "InvalidToolCall",
    "KeyConflictError",
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
    "RetentionPolicy",
    "SchemaOutOfDate",
    "SchemaStatus",
    "SchemaViolation",
    "ServerToolCall",
    "SessionHeldError",
    "SessionInfo",
    "SessionNotFound",
    "SessionPage",
    "SettingsError",
    "StoreError",
    "StoredMessage",
    "StreamAssembler",
    "StreamError",
    "TARGETS",
    "TableAction",
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
    "VOCABULARY",
    "VerifyProblem",
    "VerifyReport",
    "ViewCondition",
    "__version__",
    "argument_status",
    "as_utc",
    "assemble",
    "camelize_args",
    "check_database",
    "count_calls",
    "count_tools",
    "database_status",
    "decode_codex_output",
    "detect_format",
    "detect_provider",
    "display_name",
    "distribute_database",
    "downgrade_database",
    "dumps_arguments",
    "explain_search",
    "explain_usage",
    "export_calls_csv",
    "export_jsonl",
    "hide_passwords",
    "import_paths",
    "iter_calls",
    "list_sessions",
    "load_schema_file",
    "loads_json",
    "normalize_message",
    "normalize_payload",
    "normalize_tool_call",
    "normalize_tool_definitions",
    "parse_arguments",
    "parse_duration",
    "parse_text_tool_calls",
    "read_sessions",
    "redact_message",
    "redact_transcript",
    "refill_search_index",
    "render",
    "repair",
    "schema_audit",
    "search_calls",
    "tool_usage",
    "upgrade_database",
    "validate_arguments",
]

# name -> (module, attribute): where each public name lives.
_LAZY: dict[str, tuple[str, str]] = {
    "DEFAULT_SHARD_COUNT": ("store.db.distribute", "DEFAULT_SHARD_COUNT"),
    "DistributionReport": ("store.db.distribute", "DistributionReport"),
    "DistributionState": ("store.db.distribute", "DistributionState"),
    "TableAction": ("store.db.distribute", "TableAction"),
    "distribute_database": ("store.db.admin", "distribute_database"),
    "DistributionError": ("store.core.errors", "DistributionError"),
    "ARGUMENT_STATUSES": ("store.core.arguments", "ARGUMENT_STATUSES"),
    "AliasError": ("store.core.errors", "AliasError"),
    "AliasTable": ("store.tools.names", "AliasTable"),
    "AmbiguousRecord": ("store.core.errors", "AmbiguousRecord"),
    "AppendResult": ("store.core.transcript", "AppendResult"),
    "ArgumentCondition": ("store.audit.conditions", "ArgumentCondition"),
    "VOCABULARY": ("store.tools.vocabulary", "VOCABULARY"),
    "ViewCondition": ("store.audit.conditions", "ViewCondition"),
    "count_calls": ("store.audit.search", "count_calls"),
    "count_tools": ("store.audit.usage", "count_tools"),
    "ArgumentValidationError": ("store.core.errors", "ArgumentValidationError"),
    "CALL_STATUSES": ("store.core.arguments", "CALL_STATUSES"),
    "CallMatch": ("store.audit.search", "CallMatch"),
    "CallQuery": ("store.audit.search", "CallQuery"),
    "ConfigurationError": ("store.core.errors", "ConfigurationError"),
    "ConflictError": ("store.core.errors", "ConflictError"),
    "DEFAULT_ALIASES": ("store.tools.names", "DEFAULT_ALIASES"),
    "DatabaseError": ("store.core.errors", "DatabaseError"),
    "ExportStats": ("store.audit.export", "ExportStats"),
    "FrozenParametersError": ("store.core.errors", "FrozenParametersError"),
    "IMPORT_FORMATS": ("store.importers", "FORMATS"),
    "ImportFileError": ("store.core.errors", "ImportFileError"),
    "KeyConflictError": ("store.core.errors", "KeyConflictError"),
    "ImportProblem": ("store.importers.formats", "ImportProblem"),
    "ImportProgress": ("store.importers.walk", "ImportProgress"),
    "ImportSummary": ("store.importers.walk", "ImportSummary"),
    "IndexUpdate": ("store.db.search_index", "IndexUpdate"),
    "InvalidToolCall": ("store.core.model", "InvalidToolCall"),
    "LoadedCall": ("store.core.transcript", "LoadedCall"),
    "Message": ("store.core.model", "Message"),
    "MissingExtra": ("store.core.errors", "MissingExtra"),
    "NotAMessage": ("store.core.errors", "NotAMessage"),
    "OpaquePart": ("store.core.model", "OpaquePart"),
    "PARAMETER_TYPES": ("store.tools.schemas", "PARAMETER_TYPES"),
    "PROVIDERS": ("store.stream.assembler", "PROVIDERS"),
    "Parameter": ("store.tools.schemas", "Parameter"),
    "ParameterType": ("store.tools.schemas", "ParameterType"),
    "Parameters": ("store.tools.schemas", "Parameters"),
    "ParametersBuilder": ("store.tools.schemas", "ParametersBuilder"),
    "ParametersError": ("store.core.errors", "ParametersError"),
    "ParsedFile": ("store.importers.formats", "ParsedFile"),
    "ParsedSession": ("store.importers.formats", "ParsedSession"),
    "Part": ("store.core.model", "Part"),
    "RecordError": ("store.core.errors", "RecordError"),
    "Redactor": ("store.redaction.redact", "Redactor"),
    "RepairChange": ("store.replay.repair", "RepairChange"),
    "Repaired": ("store.replay.repair", "Repaired"),
    "SchemaOutOfDate": ("store.core.errors", "SchemaOutOfDate"),
    "SchemaStatus": ("store.db.admin", "SchemaStatus"),
    "SchemaViolation": ("store.audit.schema_audit", "SchemaViolation"),
    "ServerToolCall": ("store.core.model", "ServerToolCall"),
    "SessionInfo": ("store.core.transcript", "SessionInfo"),
    "SessionPage": ("store.db.lite", "SessionPage"),
    "list_sessions": ("store.db.lite", "list_sessions"),
    "SessionNotFound": ("store.core.errors", "SessionNotFound"),
    "SessionHeldError": ("store.core.errors", "SessionHeldError"),
    "ErasureReceipt": ("store.trust.retention", "ErasureReceipt"),
    "RetentionPolicy": ("store.trust.retention", "RetentionPolicy"),
    "parse_duration": ("store.trust.retention", "parse_duration"),
    "SettingsError": ("store.core.errors", "SettingsError"),
    "StoreError": ("store.core.errors", "StoreError"),
    "StoredMessage": ("store.core.transcript", "StoredMessage"),
    "StreamAssembler": ("store.stream.assembler", "StreamAssembler"),
    "StreamError": ("store.core.errors", "StreamError"),
    "TARGETS": ("store.replay.targets", "TARGETS"),
    "Target": ("store.replay.targets", "Target"),
    "TextPart": ("store.core.model", "TextPart"),
    "ThinkingPart": ("store.core.model", "ThinkingPart"),
    "TooLargeError": ("store.core.errors", "TooLargeError"),
    "ToolArgumentsError": ("store.core.errors", "ToolArgumentsError"),
    "ToolCall": ("store.core.model", "ToolCall"),
    "ToolDefinition": ("store.core.transcript", "ToolDefinition"),
    "ToolResult": ("store.core.model", "ToolResult"),
    "ToolUsage": ("store.audit.usage", "ToolUsage"),
    "Transcript": ("store.core.transcript", "Transcript"),
    "TranscriptStore": ("store.db.store", "TranscriptStore"),
    "UNKNOWN_TOOL": ("store.tools.names", "UNKNOWN_TOOL"),
    "UnrecognizedRecord": ("store.core.errors", "UnrecognizedRecord"),
    "UsageError": ("store.core.errors", "UsageError"),
    "VerifyProblem": ("store.db.verify", "VerifyProblem"),
    "VerifyReport": ("store.db.verify", "VerifyReport"),
    "argument_status": ("store.core.arguments", "argument_status"),
    "as_utc": ("store.core.times", "as_utc"),
    "assemble": ("store.stream.assembler", "assemble"),
    "camelize_args": ("store.core.keys", "camelize_args"),
    "check_database": ("store.db.admin", "check_database"),
    "database_status": ("store.db.admin", "database_status"),
    "downgrade_database": ("store.db.admin", "downgrade_database"),
    "decode_codex_output": ("store.importers.formats", "decode_codex_output"),
    "detect_format": ("store.importers.formats", "detect_format"),
    "detect_provider": ("store.stream.assembler", "detect_provider"),
    "display_name": ("store.tools.names", "display_name"),
    "dumps_arguments": ("store.core.arguments", "dumps_arguments"),
    "explain_search": ("store.audit.plans", "explain_search"),
    "explain_usage": ("store.audit.plans", "explain_usage"),
    "export_calls_csv": ("store.audit.export", "export_calls_csv"),
    "export_jsonl": ("store.audit.export", "export_jsonl"),
    "hide_passwords": ("store.redaction.redact", "hide_passwords"),
    "import_paths": ("store.importers.walk", "import_paths"),
    "iter_calls": ("store.audit.search", "iter_calls"),
    "load_schema_file": ("store.audit.schema_audit", "load_schema_file"),
    "loads_json": ("store.core.arguments", "loads_json"),
    "normalize_message": ("store.normalize.messages", "normalize_message"),
    "normalize_payload": ("store.normalize.messages", "normalize_payload"),
    "normalize_tool_call": ("store.normalize.calls", "normalize_tool_call"),
    "normalize_tool_definitions": ("store.normalize.definitions", "normalize_tool_definitions"),
    "parse_arguments": ("store.core.arguments", "parse_arguments"),
    "parse_text_tool_calls": ("store.normalize.calls", "parse_text_tool_calls"),
    "read_sessions": ("store.importers.formats", "read_sessions"),
    "redact_message": ("store.core.transcript", "redact_message"),
    "redact_transcript": ("store.core.transcript", "redact_transcript"),
    "refill_search_index": ("store.audit.plans", "refill_search_index"),
    "render": ("store.replay.render", "render"),
    "repair": ("store.replay.repair", "repair"),
    "schema_audit": ("store.audit.schema_audit", "schema_audit"),
    "search_calls": ("store.audit.search", "search_calls"),
    "tool_usage": ("store.audit.usage", "tool_usage"),
    "upgrade_database": ("store.db.admin", "upgrade_database"),
    "validate_arguments": ("store.tools.schemas", "validate_arguments"),
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("transcript-store")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = found = _version()
        return found
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'store' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
