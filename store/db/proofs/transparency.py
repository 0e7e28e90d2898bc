"""The transparency log as the store offers it (persistence; ``store/db/proofs/tlog.py`` keeps it).

:class:`LogMixin` brings the log up to date (off the append path), reads its head, signs
checkpoints with a key the caller holds (never stored in the database), and hands out
inclusion bundles and consistency proofs (``store/tlog``, docs/trust.md).
"""

from __future__ import annotations

from store.core.errors import DatabaseError, LogProofError, UsageError
from store.db.base import StoreBase, driver_reason
from store.db.proofs.tlog import TreeHead, catch_up, find_leaf, leaf_hashes, log_origin, tree_head
from store.tlog.bundle import LeafExtra, ProofBundle, format_consistency, format_proof
from store.tlog.merkle import consistency_proof, inclusion_proof, root_hash
from store.tlog.note import Checkpoint, Signer, Verifier, open_checkpoint, sign_note

__all__ = ["LogMixin"]


class LogMixin(StoreBase):
    """The store's transparency log (see the module docstring)."""

    def update_log(self) -> int:
        """Log every committed message not logged yet (a chunk of sessions per transaction);
        returns the leaves added. A read-only store adds none: its answers cover the log as
        it stands."""
        if self.read_only:
            return 0
        try:
            with self._engine.connect() as conn:
                return catch_up(self._retrying, conn)
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc

    def log_head(self) -> TreeHead:
        """The log's origin, size and root hash, after catching it up."""
        self.update_log()
        with self._read() as conn:
            return tree_head(conn)

    def log_checkpoint(self, signer: Signer) -> str:
        """The current checkpoint, signed by ``signer`` (c2sp.org/tlog-checkpoint)."""
        head = self.log_head()
        return sign_note(Checkpoint(head.origin, head.size, head.root).text(), signer)

    def log_prove(self, session_id: str, position: int | None, signer: Signer) -> str:
        """A c2sp.org/tlog-proof bundle of the leaf of ``session_id``'s message at
        ``position`` (without one: the latest leaf about the session, its last message or
        its tombstone), against the current signed checkpoint; the extra data holds the
        leaf hash and, unless erased, the salt and entry it was made from."""
        self.update_log()
        with self._read() as conn:
            leaf = find_leaf(conn, session_id, position)
            if leaf is None:
                where = f" position {position}" if position is not None else ""
                raise UsageError(f"the log holds no leaf for session {session_id!r}{where}")
            hashes = leaf_hashes(conn)
            origin = log_origin(conn)
        note = sign_note(Checkpoint(origin, len(hashes), root_hash(hashes)).text(), signer)
        extra = LeafExtra(leaf.leaf_hash, leaf.salt, leaf.entry)
        return format_proof(ProofBundle(leaf.index, tuple(inclusion_proof(hashes, leaf.index)),
                                        note, extra.encode()))

    def log_consistency(self, old_checkpoint: str, signer: Signer,
                        verifier: Verifier | None = None) -> str:
        """The current signed checkpoint and the RFC 9162 consistency proof from
        ``old_checkpoint`` (signed by ``verifier``, by default ``signer``'s key) to it."""
        old = open_checkpoint(old_checkpoint, verifier or signer.verifier)
        self.update_log()
        with self._read() as conn:
            hashes = leaf_hashes(conn)
            origin = log_origin(conn)
        if old.origin != origin:
            raise LogProofError(f"the checkpoint is of log {old.origin!r}, this store's is "
                                f"{origin!r}")
        if old.size > len(hashes):
            raise LogProofError(f"the checkpoint covers {old.size} leaves, the log has "
                                f"{len(hashes)}: it was rolled back")
        note = sign_note(Checkpoint(origin, len(hashes), root_hash(hashes)).text(), signer)
        return format_consistency(note, consistency_proof(hashes, old.size))
