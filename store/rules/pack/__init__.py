"""The built-in Sigma rule pack for agents (YAML files shipped as package data)."""
