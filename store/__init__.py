"""transcript-store: keep LLM agent session transcripts, tool calls in canonical wire form.

The public API is exactly what ``__all__`` lists (a test keeps it sorted and complete).

Names load on first use (PEP 562), so that ``import store`` (and the command line's start-up)
costs only what is used: ``transcript-store --help`` never imports SQLAlchemy or rich.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The package logs under "store" (migrations applied, retries after lock conflicts, import
# progress and problems, viewer requests at debug) and is silent until the application
# configures logging (the CLI does with -v): its loggers (store.core.logs) attach the
# NullHandler on their first message, so that importing the package imports no logging.

if TYPE_CHECKING:
    from store.agents.registry import AgentDefinition
    from store.agents.registry import agents as agent_definitions
    from store.audit.call_rows import CallMatch, CallQuery
    from store.audit.conditions import ArgumentCondition, ViewCondition
    from store.audit.costs import (
        MissingUsage,
        ToolContext,
        UsageTotals,
        sessions_without_usage,
        tool_context,
        usage_report,
    )
    from store.audit.detections import check_rules, new_calls, next_positions
    from store.audit.export import ExportStats, export_calls_csv, export_jsonl
    from store.audit.files import FileTouch, sessions_touching
    from store.audit.plans import explain_search, explain_usage, refill_search_index
    from store.audit.schema_audit import SchemaViolation, load_schema_file, schema_audit
    from store.audit.search import count_calls, iter_calls, search_calls
    from store.audit.usage import ToolUsage, count_tools, tool_usage
    from store.capture.agents import (
        AGENT_FOLDERS,
        AgentFolders,
        agent_folders,
        describe_agent_folders,
    )
    from store.capture.config import StoreConfig, load_config
    from store.capture.files import FileState
    from store.capture.service import ServiceFile, hook_transcript, service_file
    from store.core.arguments import (
        ARGUMENT_STATUSES,
        CALL_STATUSES,
        argument_status,
        arguments_status,
        dumps_arguments,
        loads_json,
        parse_arguments,
        result_status,
    )
    from store.core.errors import (
        AliasError,
        AmbiguousRecord,
        AmbiguousSessionId,
        ArgumentValidationError,
        ConfigurationError,
        ConflictError,
        DatabaseError,
        DistributionError,
        EntryExistsError,
        FrozenParametersError,
        ImportFileError,
        KeyConflictError,
        LogProofError,
        MissingExtra,
        NestingTooDeep,
        NotAMessage,
        ParametersError,
        RecordError,
        RuleError,
        SchemaOutOfDate,
        SearchQueryError,
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
    from store.core.lineage import LINEAGE_KINDS, SessionLink
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
    from store.core.sessioninfo import SessionInfo, SessionSource, SessionTree
    from store.core.textquery import MessageHit
    from store.core.times import as_utc
    from store.core.transcript import (
        AppendResult,
        LoadedCall,
        StoredMessage,
        ToolDefinition,
        Transcript,
        redact_message,
        redact_transcript,
    )
    from store.db.compact import CompactReport, compact_database
    from store.db.packing import unpacked
    from store.db.schema.admin import (
        DatabaseSizes,
        ObjectSize,
        Revision,
        SchemaStatus,
        check_database,
        database_sizes,
        database_status,
        distribute_database,
        downgrade_database,
        schema_history,
        upgrade_database,
    )
    from store.db.schema.distribute import (
        DEFAULT_SHARD_COUNT,
        DistributionReport,
        DistributionState,
        TableAction,
    )
    from store.db.store import TranscriptStore
    from store.importers import FORMATS as IMPORT_FORMATS
    from store.importers.account import OUTCOMES as RECORD_OUTCOMES
    from store.importers.explain import FileExplanation, explain_file
    from store.importers.formats import (
        ImportProblem,
        ParsedFile,
        ParsedSession,
        decode_codex_output,
        detect_format,
        read_sessions,
    )
    from store.importers.listing import iter_import_files
    from store.importers.reread import FieldChange, StoredSession, session_changes
    from store.importers.walk import ImportProgress, ImportSummary, import_paths
    from store.normalize.calls import normalize_tool_call, parse_text_tool_calls
    from store.normalize.definitions import normalize_tool_definitions
    from store.normalize.messages import normalize_message, normalize_payload
    from store.redaction.redact import Redactor, hide_passwords
    from store.replay.native import AGENT_TARGETS, NativeSession, native_session
    from store.replay.render import render
    from store.replay.repair import RepairChange, Repaired, repair
    from store.replay.targets import TARGETS, Target
    from store.replay.tools import TOOLS_FIELD, recorded_names, render_tools
    from store.rules.engine import RuleSet, builtin_rules, load_rules
    from store.rules.events import CallRecord, call_events
    from store.rules.findings import Finding, level_reached, sarif_report
    from store.rules.sigma import Rule as SigmaRule
    from store.rules.sigma import parse_rules
    from store.stream.assembler import PROVIDERS, StreamAssembler, assemble, detect_provider
    from store.tlog.keyfile import default_key_path as default_log_key_path
    from store.tlog.keyfile import load_signer as load_log_key
    from store.tlog.note import Signer as LogSigner
    from store.tlog.note import Verifier as LogVerifier
    from store.tlog.verifier import VerificationError as LogVerificationError
    from store.tlog.verifier import verify_text as verify_log_text
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
    from store.usage.prices import PriceTable, load_prices
    from store.usage.tokens import TokenUsage

__version__: str  # the installed distribution's (pyproject.toml is the one place it is
# written), read through importlib.metadata on first use: see __getattr__
__all__ = [
    "AGENT_FOLDERS", "AGENT_TARGETS", "ARGUMENT_STATUSES", "AgentDefinition", "AgentFolders",
    "AliasError", "AliasTable", "AmbiguousRecord", "AmbiguousSessionId", "AppendResult",
    "ArgumentCondition", "ArgumentValidationError", "CALL_STATUSES", "CallMatch", "CallQuery",
    "CallRecord", "CompactReport", "ConfigurationError", "ConflictError", "DEFAULT_ALIASES",
    "DEFAULT_SHARD_COUNT",
    "DatabaseError", "DatabaseSizes", "DistributionError", "DistributionReport",
    "DistributionState",
    "EntryExistsError", "ErasureReceipt", "ExportStats", "FieldChange", "FileExplanation",
    "FileState", "FileTouch", "Finding", "FrozenParametersError", "IMPORT_FORMATS",
    "ImportFileError", "ImportProblem", "ImportProgress", "ImportSummary", "IndexUpdate",
    "InvalidToolCall", "KeyConflictError", "LINEAGE_KINDS", "LoadedCall", "LogProofError",
    "LogSigner", "LogVerificationError", "LogVerifier", "Message", "MessageHit", "MissingExtra",
    "MissingUsage", "NativeSession", "NestingTooDeep", "NotAMessage", "ObjectSize",
    "OpaquePart", "PARAMETER_TYPES", "PROVIDERS", "Parameter", "ParameterType", "Parameters",
    "ParametersBuilder", "ParametersError", "ParsedFile", "ParsedSession", "Part", "PriceTable",
    "RECORD_OUTCOMES", "ReadOnlyStore", "RecordError", "Redactor", "RepairChange", "Repaired",
    "RetentionPolicy",
    "Revision", "RuleError", "RuleSet", "SchemaOutOfDate", "SchemaStatus", "SchemaViolation",
    "SearchQueryError", "ServerToolCall", "ServiceFile", "SessionHeldError", "SessionInfo",
    "SessionLink", "SessionNotFound", "SessionPage", "SessionSource", "SessionTree",
    "SettingsError", "SigmaRule", "StoreConfig", "StoreError", "StoredMessage", "StoredSession",
    "StreamAssembler", "StreamError", "TARGETS", "TOOLS_FIELD", "TableAction", "Target",
    "TextPart", "ThinkingPart", "TokenUsage", "TooLargeError", "ToolArgumentsError", "ToolCall",
    "ToolContext", "ToolDefinition", "ToolResult", "ToolUsage", "Transcript", "TranscriptStore",
    "UNKNOWN_TOOL", "UnrecognizedRecord", "UsageError", "UsageTotals", "VOCABULARY",
    "VerifyProblem", "VerifyReport", "ViewCondition", "__version__", "agent_definitions",
    "agent_folders", "argument_status", "arguments_status", "as_utc", "assemble", "builtin_rules",
    "call_events", "camelize_args", "check_database", "check_rules", "compact_database",
    "count_calls", "count_tools",
    "database_sizes", "database_status", "decode_codex_output", "default_log_key_path",
    "describe_agent_folders",
    "detect_format", "detect_provider", "display_name", "distribute_database",
    "downgrade_database", "dumps_arguments", "explain_file", "explain_search", "explain_usage",
    "export_calls_csv", "export_jsonl", "hide_passwords", "hook_transcript", "import_paths",
    "iter_calls", "iter_import_files", "level_reached", "list_sessions", "load_config",
    "load_findings", "load_log_key", "load_prices", "load_rules", "load_schema_file", "loads_json",
    "native_session", "new_calls", "next_positions", "normalize_message", "normalize_payload",
    "normalize_tool_call", "normalize_tool_definitions", "parse_arguments", "parse_duration",
    "parse_rules", "parse_text_tool_calls", "read_sessions", "recorded_names", "redact_message",
    "redact_transcript", "refill_search_index", "render", "render_tools", "repair",
    "result_status", "sarif_report", "save_findings", "schema_audit", "schema_history",
    "search_calls", "service_file", "session_changes", "sessions_touching",
    "sessions_without_usage", "tool_context", "tool_usage", "unpacked", "upgrade_database",
    "usage_report",
    "validate_arguments", "verify_log_text",
]

# name -> (module, attribute): where each public name lives.
_LAZY: dict[str, tuple[str, str]] = {
    "ToolContext": ("store.audit.costs", "ToolContext"),
    "FileTouch": ("store.audit.files", "FileTouch"),
    "sessions_touching": ("store.audit.files", "sessions_touching"),
    "UsageTotals": ("store.audit.costs", "UsageTotals"),
    "tool_context": ("store.audit.costs", "tool_context"),
    "usage_report": ("store.audit.costs", "usage_report"),
    "MissingUsage": ("store.audit.costs", "MissingUsage"),
    "sessions_without_usage": ("store.audit.costs", "sessions_without_usage"),
    "PriceTable": ("store.usage.prices", "PriceTable"),
    "load_prices": ("store.usage.prices", "load_prices"),
    "TokenUsage": ("store.usage.tokens", "TokenUsage"),
    "CallRecord": ("store.rules.events", "CallRecord"),
    "Finding": ("store.rules.findings", "Finding"),
    "RuleError": ("store.core.errors", "RuleError"),
    "RuleSet": ("store.rules.engine", "RuleSet"),
    "SigmaRule": ("store.rules.sigma", "Rule"),
    "builtin_rules": ("store.rules.engine", "builtin_rules"),
    "load_rules": ("store.rules.engine", "load_rules"),
    "call_events": ("store.rules.events", "call_events"),
    "check_rules": ("store.audit.detections", "check_rules"),
    "new_calls": ("store.audit.detections", "new_calls"),
    "next_positions": ("store.audit.detections", "next_positions"),
    "load_config": ("store.capture.config", "load_config"),
    "StoreConfig": ("store.capture.config", "StoreConfig"),
    "load_findings": ("store.db.reading.findings", "load_findings"),
    "save_findings": ("store.db.reading.findings", "save_findings"),
    "sarif_report": ("store.rules.findings", "sarif_report"),
    "level_reached": ("store.rules.findings", "level_reached"),
    "parse_rules": ("store.rules.sigma", "parse_rules"),
    "DEFAULT_SHARD_COUNT": ("store.db.schema.distribute", "DEFAULT_SHARD_COUNT"),
    "DistributionReport": ("store.db.schema.distribute", "DistributionReport"),
    "DistributionState": ("store.db.schema.distribute", "DistributionState"),
    "TableAction": ("store.db.schema.distribute", "TableAction"),
    "distribute_database": ("store.db.schema.admin", "distribute_database"),
    "DistributionError": ("store.core.errors", "DistributionError"),
    "ARGUMENT_STATUSES": ("store.core.arguments", "ARGUMENT_STATUSES"),
    "AliasError": ("store.core.errors", "AliasError"),
    "AliasTable": ("store.tools.names", "AliasTable"),
    "AmbiguousRecord": ("store.core.errors", "AmbiguousRecord"),
    "AmbiguousSessionId": ("store.core.errors", "AmbiguousSessionId"),
    "AppendResult": ("store.core.transcript", "AppendResult"),
    "ArgumentCondition": ("store.audit.conditions", "ArgumentCondition"),
    "VOCABULARY": ("store.tools.vocabulary", "VOCABULARY"),
    "ViewCondition": ("store.audit.conditions", "ViewCondition"),
    "count_calls": ("store.audit.search", "count_calls"),
    "count_tools": ("store.audit.usage", "count_tools"),
    "ArgumentValidationError": ("store.core.errors", "ArgumentValidationError"),
    "CALL_STATUSES": ("store.core.arguments", "CALL_STATUSES"),
    "CallMatch": ("store.audit.call_rows", "CallMatch"),
    "CallQuery": ("store.audit.call_rows", "CallQuery"),
    "ConfigurationError": ("store.core.errors", "ConfigurationError"),
    "ConflictError": ("store.core.errors", "ConflictError"),
    "DEFAULT_ALIASES": ("store.tools.names", "DEFAULT_ALIASES"),
    "DatabaseError": ("store.core.errors", "DatabaseError"),
    "ExportStats": ("store.audit.export", "ExportStats"),
    "FrozenParametersError": ("store.core.errors", "FrozenParametersError"),
    "IMPORT_FORMATS": ("store.importers", "FORMATS"),
    "RECORD_OUTCOMES": ("store.importers.account", "OUTCOMES"),
    "AgentDefinition": ("store.agents.registry", "AgentDefinition"),
    "FileExplanation": ("store.importers.explain", "FileExplanation"),
    "agent_definitions": ("store.agents.registry", "agents"),
    "explain_file": ("store.importers.explain", "explain_file"),
    "StoredSession": ("store.importers.reread", "StoredSession"),
    "FieldChange": ("store.importers.reread", "FieldChange"),
    "session_changes": ("store.importers.reread", "session_changes"),
    "iter_import_files": ("store.importers.listing", "iter_import_files"),
    "ImportFileError": ("store.core.errors", "ImportFileError"),
    "KeyConflictError": ("store.core.errors", "KeyConflictError"),
    "ImportProblem": ("store.importers.formats", "ImportProblem"),
    "ImportProgress": ("store.importers.walk", "ImportProgress"),
    "ImportSummary": ("store.importers.walk", "ImportSummary"),
    "IndexUpdate": ("store.db.index.search_index", "IndexUpdate"),
    "InvalidToolCall": ("store.core.model", "InvalidToolCall"),
    "LoadedCall": ("store.core.transcript", "LoadedCall"),
    "Message": ("store.core.model", "Message"),
    "MessageHit": ("store.core.textquery", "MessageHit"),
    "MissingExtra": ("store.core.errors", "MissingExtra"),
    "NestingTooDeep": ("store.core.errors", "NestingTooDeep"),
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
    "ReadOnlyStore": ("store.audit.reader", "ReadOnlyStore"),
    "Redactor": ("store.redaction.redact", "Redactor"),
    "Revision": ("store.db.schema.admin", "Revision"),
    "RepairChange": ("store.replay.repair", "RepairChange"),
    "Repaired": ("store.replay.repair", "Repaired"),
    "SchemaOutOfDate": ("store.core.errors", "SchemaOutOfDate"),
    "SearchQueryError": ("store.core.errors", "SearchQueryError"),
    "SchemaStatus": ("store.db.schema.admin", "SchemaStatus"),
    "SchemaViolation": ("store.audit.schema_audit", "SchemaViolation"),
    "ServerToolCall": ("store.core.model", "ServerToolCall"),
    "SessionInfo": ("store.core.sessioninfo", "SessionInfo"),
    "SessionLink": ("store.core.lineage", "SessionLink"),
    "SessionTree": ("store.core.sessioninfo", "SessionTree"),
    "LINEAGE_KINDS": ("store.core.lineage", "LINEAGE_KINDS"),
    "SessionPage": ("store.db.reading.lite", "SessionPage"),
    "list_sessions": ("store.db.reading.lite", "list_sessions"),
    "SessionNotFound": ("store.core.errors", "SessionNotFound"),
    "SessionHeldError": ("store.core.errors", "SessionHeldError"),
    "ErasureReceipt": ("store.trust.retention", "ErasureReceipt"),
    "RetentionPolicy": ("store.trust.retention", "RetentionPolicy"),
    "parse_duration": ("store.trust.retention", "parse_duration"),
    "SettingsError": ("store.core.errors", "SettingsError"),
    "StoreError": ("store.core.errors", "StoreError"),
    "EntryExistsError": ("store.core.errors", "EntryExistsError"),
    "LogProofError": ("store.core.errors", "LogProofError"),
    "LogSigner": ("store.tlog.note", "Signer"),
    "LogVerifier": ("store.tlog.note", "Verifier"),
    "LogVerificationError": ("store.tlog.verifier", "VerificationError"),
    "default_log_key_path": ("store.tlog.keyfile", "default_key_path"),
    "load_log_key": ("store.tlog.keyfile", "load_signer"),
    "verify_log_text": ("store.tlog.verifier", "verify_text"),
    "StoredMessage": ("store.core.transcript", "StoredMessage"),
    "StreamAssembler": ("store.stream.assembler", "StreamAssembler"),
    "StreamError": ("store.core.errors", "StreamError"),
    "TARGETS": ("store.replay.targets", "TARGETS"),
    "TOOLS_FIELD": ("store.replay.tools", "TOOLS_FIELD"),
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
    "VerifyProblem": ("store.db.proofs.verify", "VerifyProblem"),
    "VerifyReport": ("store.db.proofs.verify", "VerifyReport"),
    "argument_status": ("store.core.arguments", "argument_status"),
    "arguments_status": ("store.core.arguments", "arguments_status"),
    "as_utc": ("store.core.times", "as_utc"),
    "assemble": ("store.stream.assembler", "assemble"),
    "camelize_args": ("store.core.keys", "camelize_args"),
    "check_database": ("store.db.schema.admin", "check_database"),
    "compact_database": ("store.db.compact", "compact_database"),
    "CompactReport": ("store.db.compact", "CompactReport"),
    "database_status": ("store.db.schema.admin", "database_status"),
    "database_sizes": ("store.db.schema.admin", "database_sizes"),
    "DatabaseSizes": ("store.db.schema.admin", "DatabaseSizes"),
    "ObjectSize": ("store.db.schema.admin", "ObjectSize"),
    "downgrade_database": ("store.db.schema.admin", "downgrade_database"),
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
    "recorded_names": ("store.replay.tools", "recorded_names"),
    "render": ("store.replay.render", "render"),
    "render_tools": ("store.replay.tools", "render_tools"),
    "repair": ("store.replay.repair", "repair"),
    "result_status": ("store.core.arguments", "result_status"),
    "schema_audit": ("store.audit.schema_audit", "schema_audit"),
    "schema_history": ("store.db.schema.admin", "schema_history"),
    "search_calls": ("store.audit.search", "search_calls"),
    "tool_usage": ("store.audit.usage", "tool_usage"),
    "unpacked": ("store.db.packing", "unpacked"),
    "upgrade_database": ("store.db.schema.admin", "upgrade_database"),
    "validate_arguments": ("store.tools.schemas", "validate_arguments"),
    "AGENT_FOLDERS": ("store.capture.agents", "AGENT_FOLDERS"),
    "AgentFolders": ("store.capture.agents", "AgentFolders"),
    "agent_folders": ("store.capture.agents", "agent_folders"),
    "describe_agent_folders": ("store.capture.agents", "describe_agent_folders"),
    "FileState": ("store.capture.files", "FileState"),
    "SessionSource": ("store.core.sessioninfo", "SessionSource"),
    "ServiceFile": ("store.capture.service", "ServiceFile"),
    "service_file": ("store.capture.service", "service_file"),
    "hook_transcript": ("store.capture.service", "hook_transcript"),
    "AGENT_TARGETS": ("store.replay.native", "AGENT_TARGETS"),
    "NativeSession": ("store.replay.native", "NativeSession"),
    "native_session": ("store.replay.native", "native_session"),
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
