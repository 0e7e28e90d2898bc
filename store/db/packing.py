"""Packed message envelopes (persistence): a message's metadata and extras as zstd frames.

On SQLite, ``messages.metadata_json`` and ``messages.extras_json`` (the transcript's
envelope: ids, parents, times, working folder, versions; the provider's model, stop reason
and usage) were 46 % of the message rows at 10^5 messages and a tenth of the database
(issue 39). Since revision 0025 the writer stores each as a BLOB, one version byte then a
zstd frame, when that is shorter than the text; a value that would not shrink stays text,
and rows written before stay as they were. The column's affinity is TEXT: SQLite keeps a
BLOB as it is given.

The frame is compressed with a fixed raw-content dictionary: the keys and constant fragments
of the formats the importers write (the envelope keys of 21 agents' files, the providers'
usage keys), never a user's content, so that erasing a session leaves nothing of it in a
dictionary, and a frame needs nothing from the database to be read. A dictionary, once
shipped, never changes: a new one gets the next version byte, and the old ones stay to read
what they packed.

Every reader of these two columns goes through :func:`unpacked` (the load, the lite
readers, the chain and key-conflict digests, which are over the text, so a packed row
verifies as the same row in text). PostgreSQL stores text (its columns are TEXT; TOAST
compresses a large value itself).
"""

from __future__ import annotations

from typing import Any, overload

from store.core.errors import DatabaseError

__all__ = ["VERSION", "packed", "unpacked"]

#: The dictionary's version byte (the first byte of every packed value).
VERSION = 1

# Dictionary 1 (frozen). zstd matches against a raw-content dictionary as against text that
# came just before the value, so the most frequent fragments come last (the shortest offsets).
_KEYS_1 = (
    "is_compact_summary", "truncated", "numFiles", "filenames", "numLines", "file",
    "pi_kind", "encrypted_content", "role", "replacement_history", "text", "interrupted",
    "stderr", "stdout", "durationMs", "filePath", "activeForm", "toolName", "tool",
    "gptme_metadata", "compacted", "codex_type", "codebuff_error", "completion_time",
    "droid_compaction", "droid_reminder", "credits_consumed", "call_id", "hide", "pinned",
    "content", "source", "tokens", "agent", "lines", "uuids", "provider_message_id",
    "status", "gptme_role", "stopReason", "state", "cacheWrite", "cacheRead", "api",
    "provider", "session", "aider_cost", "round_id", "message", "git_branch",
    "continue_role", "type", "version", "cwd", "api_call_id", "total", "output", "input",
    "credits", "injected", "kward_type", "message_id", "completed", "user_type",
    "session_id", "is_sidechain", "uuid", "recorded_time", "origin", "cost", "request_id",
    "aider_output", "vibe_system_prompt", "parent_uuid", "junie_failure", "parent_id",
    "model", "timestamp",
    "error_message", "ephemeral_1h_input_tokens", "ephemeral_5m_input_tokens",
    "cache_creation", "totalTokens", "service_tier", "cache_read_input_tokens",
    "cache_creation_input_tokens", "stop_sequence", "output_tokens", "input_tokens",
    "stop_reason", "usage",
)
_FRAGMENTS_1 = (
    '"tool_use_result":{"stdout":"', '","stderr":"","interrupted":false,"isImage":false}',
    '{"type":"message","model":"gpt-', '{"type":"message","model":"gemini-',
    '"stop_reason":"end_turn","stop_sequence":null,',
    '"usage":{"input_tokens":', ',"cache_creation_input_tokens":',
    ',"cache_read_input_tokens":', ',"output_tokens":', ',"service_tier":"standard"}}',
    '{"type":"message","model":"claude-sonnet-4-', '","stop_reason":"tool_use",',
    '"stop_sequence":null,"usage":{"input_tokens":',
    '{"uuid":"', '","parent_uuid":"', '","is_sidechain":false,"session_id":"',
    '","timestamp":"202', 'Z","cwd":"/home/', '","version":"1.0.',
    '","git_branch":"main","user_type":"external"', ',"request_id":"req_',
    ',"provider_message_id":"msg_', '","uuids":["', '"],"lines":[',
)
_DICTIONARY_1 = ("".join(f'"{key}":' for key in _KEYS_1) + "".join(_FRAGMENTS_1)).encode()

_loaded: tuple[Any, Any] | None = None  # (compressor, decompressor)
_PREFIX = bytes((VERSION,))
#: Texts shorter than this stay text (a frame's header and the version byte cost ~10 bytes).
_SHORTEST = 24


def _codecs() -> tuple[Any, Any]:
    """The compressor and decompressor of dictionary 1 (``zstandard`` imported at first use:
    a command that reads no packed row never loads it)."""
    global _loaded
    if _loaded is None:
        import zstandard

        dictionary = zstandard.ZstdCompressionDict(
            _DICTIONARY_1, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        # (level 1: the ratio of level 3 on these values, 4.3 instead of 5.2 us a value)
        _loaded = (zstandard.ZstdCompressor(level=1, dict_data=dictionary,
                                            write_checksum=False, write_dict_id=False),
                   zstandard.ZstdDecompressor(dict_data=dictionary))
    return _loaded


def packed(text: str | None) -> str | bytes | None:
    """What the writer stores for ``text`` on SQLite: the version byte and a zstd frame
    when that is shorter than the text's UTF-8, else the text itself."""
    if text is None or len(text) < _SHORTEST:
        return text
    data = text.encode("utf-8", "surrogatepass")
    frame = _PREFIX + (_loaded or _codecs())[0].compress(data)
    return frame if len(frame) < len(data) else text


@overload
def unpacked(value: None) -> None: ...
@overload
def unpacked(value: str | bytes) -> str: ...
def unpacked(value: str | bytes | None) -> str | None:
    """The text a stored value holds: a text as it is, a packed value decompressed (the exact
    text the writer was given). A BLOB that is not a packed value (a database written by a
    newer release, or damaged) raises ``DatabaseError`` naming its first byte."""
    if value is None or isinstance(value, str):
        return value
    data = bytes(value)
    if not data or data[0] != VERSION:
        raise DatabaseError(f"a stored value is not a packed value (first byte "
                            f"{data[:1].hex() or 'none'}; this release reads version {VERSION})")
    decompressed: bytes = (_loaded or _codecs())[1].decompress(data[1:])
    return decompressed.decode("utf-8", "surrogatepass")
