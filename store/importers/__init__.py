"""Importers: one reader per agent file format (domain), and the walk that feeds a store."""

#: The formats ``store.importers.formats.read_sessions`` reads (here, so that the command line's
#: options need none of the readers).
FORMATS: tuple[str, ...] = (
    "openai-chat", "openai-responses", "anthropic", "claude-code", "codex", "gemini-cli", "kward",
    "cline", "roo-code", "openhands", "transcript-store", "qwen-code", "kimi-cli",
    "copilot-cli", "crush", "opencode", "goose",
)
