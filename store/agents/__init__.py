"""The agents: one folder per agent (its definition and its reader), and the registry that
finds them (store/agents/registry.py; domain). Adding an agent is adding its folder."""
