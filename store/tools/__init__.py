"""Tool names: the alias table, the cross-agent vocabulary and argument schemas."""
