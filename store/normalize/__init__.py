"""Normalizers (domain): tool calls, messages and tool definitions read into typed values."""
