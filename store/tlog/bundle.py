"""The log's leaves and the texts it hands out (domain; stdlib + orjson).

**A leaf** commits to one *entry* through a random per-entry salt:

    entry digest = SHA-256(entry)
    leaf hash    = SHA-256(0x00 || salt (32 bytes) || entry digest)   (RFC 9162 MTH({d}))

An entry is the canonical JSON array of what happened, in the log's append order:

* ``["message", session, position, chained digest]``: a stored message; the chained digest
  is the one :func:`store.trust.chain.message_digest` computes over the message's canonical
  content (and the chain before it), so the leaf commits to that content;
* ``["tombstone", kind, session, at, first position, count, digest]``: an erase, delete,
  prune or truncate (``at`` in :func:`~store.trust.chain.canonical_time` microseconds);
* ``["hold", session, at, reason, actor]`` and ``["release", session, at]``.

Erasing a message deletes its entry and its salt and keeps the leaf hash: every proof still
verifies, and nobody (the operator included) can confirm a guessed content against the leaf.

**A proof bundle** (https://c2sp.org/tlog-proof)::

    c2sp.org/tlog-proof@v1
    extra <base64 of the canonical JSON {"entry": ..., "leaf": ..., "salt": ...}>
    index <leaf index>
    <inclusion proof hashes, base64, one a line, the leaf's sibling first>
    <empty line>
    <the signed checkpoint, verbatim>

The extra data is not authenticated (the spec says so): a verifier recomputes the leaf hash
from the salt and the entry and proves *that* hash's inclusion. An erased leaf's bundle holds
only ``{"leaf": ...}``.

**A consistency proof** as ``transcript-store log consistency`` prints it: the current signed
checkpoint, then the RFC 9162 consistency proof from the auditor's older checkpoint, one
base64 hash a line (lines that do not start with the signature dash).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from store.core.errors import LogProofError
from store.tlog.merkle import HASH_SIZE, leaf_hash

__all__ = [
    "PROOF_HEADER",
    "SALT_SIZE",
    "ConsistencyText",
    "LeafExtra",
    "ProofBundle",
    "entry_leaf",
    "format_consistency",
    "format_proof",
    "hold_entry",
    "message_entry",
    "new_salt",
    "parse_consistency",
    "parse_proof",
    "release_entry",
    "tombstone_entry",
]

PROOF_HEADER = "c2sp.org/tlog-proof@v1"
SALT_SIZE = 32
_DASH = "\u2014 "


def new_salt() -> bytes:
    return secrets.token_bytes(SALT_SIZE)


def _canonical(items: list[Any]) -> bytes:
    return orjson.dumps(items)


def message_entry(session_id: str, position: int, digest: str) -> bytes:
    return _canonical(["message", session_id, position, digest])


def tombstone_entry(kind: str, session_id: str, at: int, start: int, count: int,
                    digest: str | None) -> bytes:
    return _canonical(["tombstone", kind, session_id, at, start, count, digest])


def hold_entry(session_id: str, at: int, reason: str, actor: str | None) -> bytes:
    return _canonical(["hold", session_id, at, reason, actor])


def release_entry(session_id: str, at: int) -> bytes:
    return _canonical(["release", session_id, at])


def entry_leaf(salt: bytes, entry: bytes) -> bytes:
    """The leaf hash of ``entry`` under ``salt``."""
    if len(salt) != SALT_SIZE:
        raise LogProofError(f"a leaf's salt is {SALT_SIZE} bytes")
    return leaf_hash(salt + hashlib.sha256(entry).digest())


def _b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise LogProofError(f"{what} is not standard base64") from None


def _hash_line(text: str) -> bytes:
    raw = _b64(text, "a proof hash line")
    if len(raw) != HASH_SIZE:
        raise LogProofError("a proof hash is not 32 bytes")
    return raw


@dataclass(frozen=True, slots=True)
class LeafExtra:
    """What a bundle's extra data says of its leaf: the leaf hash, and (unless erased) the
    salt and entry it was made from."""

    leaf: bytes
    salt: bytes | None = None
    entry: bytes | None = None

    def encode(self) -> bytes:
        out: dict[str, str] = {"leaf": base64.b64encode(self.leaf).decode()}
        if self.salt is not None and self.entry is not None:
            out["entry"] = self.entry.decode()
            out["salt"] = base64.b64encode(self.salt).decode()
        return orjson.dumps(out, option=orjson.OPT_SORT_KEYS)

    @classmethod
    def decode(cls, raw: bytes) -> LeafExtra:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise LogProofError("the bundle's extra data is not JSON") from None
        if not isinstance(data, dict) or not isinstance(data.get("leaf"), str):
            raise LogProofError("the bundle's extra data names no leaf hash")
        leaf = _hash_line(data["leaf"])
        salt, entry = data.get("salt"), data.get("entry")
        if salt is None and entry is None:
            return cls(leaf)
        if not isinstance(salt, str) or not isinstance(entry, str):
            raise LogProofError("the bundle's extra data has a salt without an entry")
        return cls(leaf, _b64(salt, "the bundle's salt"), entry.encode())

    def check(self) -> None:
        """Raise unless the salt and entry (when given) make the leaf hash."""
        if self.salt is not None and self.entry is not None \
                and entry_leaf(self.salt, self.entry) != self.leaf:
            raise LogProofError("the bundle's entry and salt do not make its leaf hash")


@dataclass(frozen=True, slots=True)
class ProofBundle:
    index: int
    proof: tuple[bytes, ...]
    checkpoint: str
    extra: bytes | None = None


def format_proof(bundle: ProofBundle) -> str:
    lines = [PROOF_HEADER]
    if bundle.extra is not None:
        lines.append("extra " + base64.b64encode(bundle.extra).decode())
    lines.append(f"index {bundle.index}")
    lines += [base64.b64encode(h).decode() for h in bundle.proof]
    return "\n".join(lines) + "\n\n" + bundle.checkpoint


def parse_proof(text: str) -> ProofBundle:
    """A ``c2sp.org/tlog-proof@v1`` bundle's parts (nothing verified yet)."""
    head, sep, checkpoint = text.partition("\n\n")
    if not sep:
        raise LogProofError("a proof bundle has an empty line before its checkpoint")
    lines = head.split("\n")
    if lines[0] != PROOF_HEADER:
        raise LogProofError(f"a proof bundle starts with {PROOF_HEADER!r}")
    rest = lines[1:]
    extra = None
    if rest and rest[0].startswith("extra "):
        extra = _b64(rest[0][6:], "the bundle's extra data")
        rest = rest[1:]
    if not rest or not rest[0].startswith("index "):
        raise LogProofError("a proof bundle names its leaf's index")
    number = rest[0][6:]
    if not number.isascii() or not number.isdigit() or (number != "0" and number[0] == "0"):
        raise LogProofError(f"the bundle's index {number!r} is not a decimal")
    return ProofBundle(int(number), tuple(_hash_line(h) for h in rest[1:]), checkpoint, extra)


@dataclass(frozen=True, slots=True)
class ConsistencyText:
    checkpoint: str
    proof: tuple[bytes, ...]


def format_consistency(checkpoint: str, proof: Sequence[bytes]) -> str:
    return checkpoint + "".join(base64.b64encode(h).decode() + "\n" for h in proof)


def parse_consistency(text: str) -> ConsistencyText:
    """The signed checkpoint and the proof hashes after its last signature line."""
    lines = text.split("\n")
    last = max((i for i, line in enumerate(lines) if line.startswith(_DASH)), default=-1)
    if last < 0:
        raise LogProofError("a consistency proof starts with a signed checkpoint")
    note = "\n".join(lines[:last + 1]) + "\n"
    hashes = [line for line in lines[last + 1:] if line.strip()]
    return ConsistencyText(note, tuple(_hash_line(h.strip()) for h in hashes))
