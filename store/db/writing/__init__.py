"""The write path: appends (writer, flight, prior), the compiled hot statements, the SQLite
presence lock and checkpoints, where each source file's read stopped.

(persistence; one room of ``store/db``: docs/architecture.md)"""
