"""Reads beside the store's own: the stdlib session listing, lineage, usage rows, saved
findings.

(persistence; one room of ``store/db``: docs/architecture.md)"""
