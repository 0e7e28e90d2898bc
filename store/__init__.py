"""transcript-store: keep LLM agent session transcripts, tool calls in canonical wire form.

The public API is exactly what ``__all__`` lists (a test keeps it sorted and complete).
"""

from __future__ import annotations

from store.arguments import (
    ARGUMENT_STATUSES,
    argument_status,
    dumps_arguments,
    loads_json,
    parse_arguments,
)
from store.calls import normalize_tool_call, parse_text_tool_calls
from store.errors import (
    AliasError,
    AmbiguousRecord,
    ArgumentValidationError,
    FrozenParametersError,
    ParametersError,
    RecordError,
    StoreError,
    StreamError,
    ToolArgumentsError,
    UnrecognizedRecord,
)
from store.keys import camelize_args
from store.messages import NotAMessage, normalize_message, normalize_payload
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
from store.schemas import (
    PARAMETER_TYPES,
    Parameter,
    Parameters,
    ParametersBuilder,
    ParameterType,
    validate_arguments,
)
from store.stream import PROVIDERS, StreamAssembler, assemble, detect_provider

__version__ = "0.1.0"

__all__ = [
    "ARGUMENT_STATUSES",
    "AliasError",
    "AliasTable",
    "AmbiguousRecord",
    "ArgumentValidationError",
    "DEFAULT_ALIASES",
    "FrozenParametersError",
    "InvalidToolCall",
    "Message",
    "NotAMessage",
    "OpaquePart",
    "PARAMETER_TYPES",
    "PROVIDERS",
    "Parameter",
    "ParameterType",
    "Parameters",
    "ParametersBuilder",
    "ParametersError",
    "Part",
    "RecordError",
    "ServerToolCall",
    "StoreError",
    "StreamAssembler",
    "StreamError",
    "TextPart",
    "ThinkingPart",
    "ToolArgumentsError",
    "ToolCall",
    "ToolResult",
    "UNKNOWN_TOOL",
    "UnrecognizedRecord",
    "__version__",
    "argument_status",
    "assemble",
    "camelize_args",
    "detect_provider",
    "display_name",
    "dumps_arguments",
    "loads_json",
    "normalize_message",
    "normalize_payload",
    "normalize_tool_call",
    "parse_arguments",
    "parse_text_tool_calls",
    "validate_arguments",
]
