"""Sigma detections over tool calls: calls mapped to Sigma log-source events, rules loaded and
evaluated, and the built-in pack."""
