"""RFC 6962 / RFC 9162 Merkle tree hashing and proofs (domain; stdlib only).

* **Hashes** (RFC 9162 §2.1.1): SHA-256; a leaf is ``SHA-256(0x00 || data)``, an inner node
  ``SHA-256(0x01 || left || right)``; the empty tree's hash is ``SHA-256("")``. A tree of
  ``n`` leaves splits at ``k``, the largest power of two smaller than ``n``.
* **Inclusion proofs** (``PATH(m, D[n])``, RFC 9162 §2.1.3.1) and their verification
  (§2.1.3.2), **consistency proofs** (``PROOF(m, D[n])``, §2.1.4.1) and their verification
  (§2.1.4.2), the algorithms exactly as the RFC gives them.

Everything here works on the *leaf hashes* (the store keeps them, ``store/db/proofs/tlog.py``): a
tree's head or a proof for any size up to the number of leaves given.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from store.core.errors import LogProofError

__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "root_hash",
    "verify_consistency",
    "verify_inclusion",
]

HASH_SIZE = 32
#: The hash of the empty tree (RFC 9162 §2.1.1: MTH({}) = SHA-256()).
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    """``MTH({d}) = SHA-256(0x00 || d)``."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """``SHA-256(0x01 || left || right)``."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (``n`` > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def _mth(leaves: Sequence[bytes], lo: int, hi: int) -> bytes:
    """MTH of the leaf hashes ``leaves[lo:hi]``, level by level: pairing neighbours and
    carrying an odd last node up unchanged builds the same left-balanced tree as the RFC's
    recursive split (a property test holds the two equal)."""
    if hi <= lo:
        return EMPTY_ROOT
    level = list(leaves[lo:hi])
    while len(level) > 1:
        paired = [hashlib.sha256(b"\x01" + level[i] + level[i + 1]).digest()
                  for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def _size(leaves: Sequence[bytes], size: int | None) -> int:
    n = len(leaves) if size is None else size
    if n < 0 or n > len(leaves):
        raise LogProofError(f"a tree of {n} leaves cannot be built from {len(leaves)}")
    return n


def root_hash(leaves: Sequence[bytes], size: int | None = None) -> bytes:
    """The tree head (MTH) of the first ``size`` leaf hashes (all by default)."""
    return _mth(leaves, 0, _size(leaves, size))


def inclusion_proof(leaves: Sequence[bytes], index: int, size: int | None = None
                    ) -> list[bytes]:
    """``PATH(index, D[0:size])`` (RFC 9162 §2.1.3.1): the sibling hashes from the leaf's up
    to the root's child."""
    n = _size(leaves, size)
    if not 0 <= index < n:
        raise LogProofError(f"leaf {index} is not in a tree of {n} leaves")
    path: list[bytes] = []
    lo, hi, m = 0, n, index
    while hi - lo > 1:
        k = _split(hi - lo)
        if m < k:
            path.append(_mth(leaves, lo + k, hi))
            hi = lo + k
        else:
            path.append(_mth(leaves, lo, lo + k))
            lo, m = lo + k, m - k
    path.reverse()
    return path


def consistency_proof(leaves: Sequence[bytes], old_size: int, size: int | None = None
                      ) -> list[bytes]:
    """``PROOF(old_size, D[0:size])`` (RFC 9162 §2.1.4.1); empty when ``old_size`` is 0 or
    the tree's size (nothing to prove)."""
    n = _size(leaves, size)
    if not 0 <= old_size <= n:
        raise LogProofError(f"no consistency proof from {old_size} leaves to {n}")
    if old_size in (0, n):
        return []
    proof: list[bytes] = []
    lo, hi, m, complete = 0, n, old_size, True
    while True:
        if m == hi - lo:
            if not complete:
                proof.append(_mth(leaves, lo, hi))
            break
        k = _split(hi - lo)
        if m <= k:
            proof.append(_mth(leaves, lo + k, hi))
            hi = lo + k
        else:
            proof.append(_mth(leaves, lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    proof.reverse()
    return proof


def _check_hashes(*hashes: bytes) -> None:
    for value in hashes:
        if not isinstance(value, bytes) or len(value) != HASH_SIZE:
            raise LogProofError("a proof hash is not 32 bytes")


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes],
                     root: bytes) -> None:
    """RFC 9162 §2.1.3.2: raise :class:`LogProofError` unless ``proof`` shows the leaf hash
    ``leaf`` at ``index`` in the tree of ``size`` leaves whose head is ``root``."""
    _check_hashes(leaf, root, *proof)
    if not 0 <= index < size:
        raise LogProofError(f"leaf {index} is not in a tree of {size} leaves")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise LogProofError("the inclusion proof has more hashes than the tree needs")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise LogProofError("the inclusion proof has fewer hashes than the tree needs")
    if not hmac.compare_digest(r, root):
        raise LogProofError("the inclusion proof does not lead to the tree head")


def verify_consistency(old_size: int, size: int, old_root: bytes, root: bytes,
                       proof: Sequence[bytes]) -> None:
    """RFC 9162 §2.1.4.2: raise :class:`LogProofError` unless ``proof`` shows the tree of
    ``old_size`` leaves (head ``old_root``) is a prefix of the tree of ``size`` (``root``).
    From size 0 (nothing to extend) the proof must be empty."""
    _check_hashes(old_root, root, *proof)
    if not 0 <= old_size <= size:
        raise LogProofError(f"a tree of {size} leaves cannot extend one of {old_size}")
    if old_size == size:
        if proof:
            raise LogProofError("a consistency proof between equal sizes must be empty")
        if not hmac.compare_digest(old_root, root):
            raise LogProofError("two tree heads of the same size differ (a forked history)")
        return
    if old_size == 0:
        if proof:
            raise LogProofError("a consistency proof from the empty tree must be empty")
        return
    if not proof:
        raise LogProofError("the consistency proof is empty")
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # an exact power of two: the old head is a node
        path.insert(0, old_root)
    fn, sn = old_size - 1, size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise LogProofError("the consistency proof has more hashes than the trees need")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise LogProofError("the consistency proof has fewer hashes than the trees need")
    if not hmac.compare_digest(fr, old_root):
        raise LogProofError("the consistency proof does not lead to the old tree head "
                            "(the history it covered was rewritten)")
    if not hmac.compare_digest(sr, root):
        raise LogProofError("the consistency proof does not lead to the new tree head: "
                            "the history was rewritten, or the proof is forged")
