"""Streaming assembly (domain): tool calls rebuilt from each provider family's streaming events."""
