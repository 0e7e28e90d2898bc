"""Trust for auditors: the canonical content of a message, its chained digest, the head over
all sessions, and the rules of retention (domain layer: stdlib + orjson only).

* :mod:`store.trust.chain`: what a message's digest covers, how it chains to the previous
  message of its session, and the head (the format ``transcript-store db head`` prints);
* :mod:`store.trust.retention`: durations (``90d``), retention policies and the receipt of an
  erasure.

The persistence side (the writer computing digests inside the append transaction, ``verify``
recomputing them, erasure, holds, prune) lives in ``store/db/proofs/trust.py`` and
``store/db/proofs/chains.py``.
"""
