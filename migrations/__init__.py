"""Alembic migration scripts of transcript-store (packaged as ``store._migrations``)."""
