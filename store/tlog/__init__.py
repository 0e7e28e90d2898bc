"""A transparency log over the archive (domain; stdlib, orjson and ``cryptography``).

merkle.py (RFC 9162 tree hashing, inclusion and consistency proofs), note.py (C2SP signed
notes, Ed25519 keys, checkpoints), bundle.py (salted leaves and their entries, tlog-proof
bundles, consistency texts), verifier.py (an independent offline verifier that imports nothing
from ``store``: it runs as a standalone file). The log itself is kept by
``store/db/proofs/tlog.py``;
docs/trust.md says what it proves.
"""
