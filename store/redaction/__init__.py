"""Secrets: the detectors (one module per family) and the one-pass redactor."""
