"""Resume (domain): repair a stored history and render it for a provider."""
