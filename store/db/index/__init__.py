"""The derived indexes, caught up off the write path: the call search index, the message index
and its search, secrets' digests, and their check against the transcript.

(persistence; one room of ``store/db``: docs/architecture.md)"""
