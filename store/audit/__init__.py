"""Audits over every stored session (persistence).

Usage, call search, schema audit, exports and query plans.
"""
