"""The schema and its machinery: tables, engine set-up, migrations glue (the only Alembic
importer), revisions without Alembic, Citus distribution, the vocabulary seeds.

(persistence; one room of ``store/db``: docs/architecture.md)"""
