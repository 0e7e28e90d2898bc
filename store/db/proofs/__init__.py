"""What proves the store: digest chains, erasure, holds and retention, the transparency log,
verify.

(persistence; one room of ``store/db``: docs/architecture.md)"""
