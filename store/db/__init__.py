"""Persistence: the only layer that talks to the database.

Tables, search schema, engine, migrations glue, the store and verify.
"""
