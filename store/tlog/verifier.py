"""An independent, offline verifier of transcript-store's transparency log.

This file imports nothing from ``store``: only the standard library and ``cryptography``.
Copy it alone to an auditor's machine and run it with the log's public key::

    python verifier.py --key KEY checkpoint.txt                  # a signed checkpoint
    python verifier.py --key KEY proof.tlog-proof                 # an inclusion bundle
    python verifier.py --key KEY consistency.txt --checkpoint OLD # history extends OLD

``KEY`` is the verifier key string ``transcript-store log key`` prints
(``name+keyid+base64(0x01||ed25519 public key)``, https://c2sp.org/signed-note). It checks:

* a checkpoint (https://c2sp.org/tlog-checkpoint) and its Ed25519 note signature;
* a ``c2sp.org/tlog-proof@v1`` bundle (https://c2sp.org/tlog-proof): its checkpoint's
  signature, the RFC 9162 §2.1.3.2 inclusion proof of the leaf hash, and, when the extra data
  carries them, that ``SHA-256(0x00 || salt || SHA-256(entry))`` is that leaf hash;
* a consistency proof (the new signed checkpoint, then base64 hashes): both signatures and
  the RFC 9162 §2.1.4.2 proof that the new tree extends the old one.

Exit status 0 and one line per fact checked when everything verifies; 1 and the reason
when anything does not. The store's own code (``store/tlog``) generates the proofs; this
module re-implements only the checks, so that an auditor need not trust that code either.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import hmac
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

__all__ = ["Checked", "VerificationError", "main", "verify_text"]

_DASH = "\u2014 "
_HEADER = "c2sp.org/tlog-proof@v1"


class VerificationError(ValueError):
    """Something did not verify; the message says what."""


def _b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise VerificationError(f"{what} is not base64") from None


def _h32(text: str) -> bytes:
    raw = _b64(text, "a hash")
    if len(raw) != 32:
        raise VerificationError("a hash is not 32 bytes")
    return raw


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


@dataclass(frozen=True)
class Key:
    name: str
    key_id: bytes
    public: bytes


def parse_key(text: str) -> Key:
    parts = text.strip().split("+", 2)
    if len(parts) != 3 or not parts[0] or any(c.isspace() for c in parts[0]):
        raise VerificationError("the key is not name+keyid+base64key")
    raw = _b64(parts[2], "the key")
    if len(raw) != 33 or raw[0] != 1:
        raise VerificationError("the key is not an Ed25519 note key")
    kid = hashlib.sha256(parts[0].encode() + b"\n" + raw).digest()[:4]
    if parts[1].lower() != kid.hex():
        raise VerificationError("the key's ID does not match its name and public key")
    return Key(parts[0], kid, raw[1:])


def open_checkpoint(note: str, key: Key) -> tuple[str, int, bytes]:
    """(origin, size, root) of a checkpoint whose signature by ``key`` verifies."""
    if not note.endswith("\n") or "\n\n" not in note:
        raise VerificationError("not a signed note (text, blank line, signatures)")
    cut = note.rfind("\n\n")
    text, sigs = note[:cut + 1], note[cut + 2:].split("\n")[:-1]
    if any(ord(c) < 0x20 and c != "\n" for c in text):
        raise VerificationError("the note holds control characters")
    good = False
    for line in sigs:
        if not line.startswith(_DASH):
            raise VerificationError("a signature line does not start with the em dash")
        name, _, encoded = line[2:].partition(" ")
        raw = _b64(encoded, "a signature")
        if name != key.name or raw[:4] != key.key_id:
            continue
        try:
            Ed25519PublicKey.from_public_bytes(key.public).verify(raw[4:], text.encode())
        except InvalidSignature:
            raise VerificationError(f"the signature by {name} does not verify") from None
        good = True
    if not good:
        raise VerificationError(f"no signature by {key.name} on this checkpoint")
    lines = text.split("\n")[:-1]
    if len(lines) < 3 or not lines[0]:
        raise VerificationError("a checkpoint has an origin, a size and a root hash")
    if not lines[1].isascii() or not lines[1].isdigit() or (
            lines[1] != "0" and lines[1][0] == "0"):
        raise VerificationError("the checkpoint's size is not a decimal")
    return lines[0], int(lines[1]), _h32(lines[2])


def check_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes],
                    root: bytes) -> None:
    """RFC 9162 §2.1.3.2."""
    if index >= size:
        raise VerificationError(f"leaf {index} is past the tree's {size} leaves")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise VerificationError("the inclusion proof is too long")
        if fn % 2 == 1 or fn == sn:
            r = _node(p, r)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = _node(r, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise VerificationError("the inclusion proof is too short")
    if not hmac.compare_digest(r, root):
        raise VerificationError("the inclusion proof does not reach the signed root")


def check_consistency(m: int, n: int, old: bytes, new: bytes, proof: Sequence[bytes]) -> None:
    """RFC 9162 §2.1.4.2 (from size 0, or between equal sizes, the proof is empty)."""
    if m > n:
        raise VerificationError(f"the new tree ({n}) is smaller than the old one ({m})")
    if m == n or m == 0:
        if proof:
            raise VerificationError("this consistency proof must be empty")
        if m == n and not hmac.compare_digest(old, new):
            raise VerificationError("two different roots for one size: the history forked")
        return
    path = ([old] if m & (m - 1) == 0 else []) + list(proof)
    if not proof:
        raise VerificationError("the consistency proof is empty")
    fn, sn = m - 1, n - 1
    while fn % 2 == 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise VerificationError("the consistency proof is too long")
        if fn % 2 == 1 or fn == sn:
            fr, sr = _node(c, fr), _node(c, sr)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = _node(sr, c)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise VerificationError("the consistency proof is too short")
    if not hmac.compare_digest(fr, old):
        raise VerificationError("the proof does not lead to the old root: history rewritten")
    if not hmac.compare_digest(sr, new):
        raise VerificationError("the proof does not lead to the new root: the history it "
                                "covered was rewritten, or the proof is forged")


@dataclass
class Checked:
    """What was verified, one sentence each."""

    kind: str
    origin: str = ""
    size: int = 0
    facts: list[str] = field(default_factory=list)


def _bundle(text: str, key: Key) -> Checked:
    head, sep, note = text.partition("\n\n")
    lines = head.split("\n")
    if not sep or lines[0] != _HEADER:
        raise VerificationError("not a c2sp.org/tlog-proof@v1 bundle")
    rest, extra = lines[1:], None
    if rest and rest[0].startswith("extra "):
        extra, rest = _b64(rest[0][6:], "the extra data"), rest[1:]
    if not rest or not rest[0].startswith("index ") or not rest[0][6:].isdigit():
        raise VerificationError("the bundle has no index line")
    index = int(rest[0][6:])
    proof = [_h32(line) for line in rest[1:]]
    origin, size, root = open_checkpoint(note, key)
    done = Checked("inclusion", origin, size, [f"checkpoint signed by {key.name}: "
                                               f"{origin}, {size} leaves"])
    if extra is None:
        raise VerificationError("the bundle carries no leaf hash in its extra data")
    try:
        data = json.loads(extra)
        leaf = _h32(data["leaf"])
    except (ValueError, KeyError, TypeError):
        raise VerificationError("the extra data is not {\"leaf\": ...} JSON") from None
    if "salt" in data and "entry" in data:
        salt, entry = _b64(data["salt"], "the salt"), str(data["entry"]).encode()
        made = hashlib.sha256(b"\x00" + salt + hashlib.sha256(entry).digest()).digest()
        if not hmac.compare_digest(made, leaf):
            raise VerificationError("the entry and salt do not make the leaf hash")
        done.facts.append(f"entry {entry.decode()} makes leaf {leaf.hex()}")
    else:
        done.facts.append(f"leaf {leaf.hex()} (its content erased: not provable)")
    check_inclusion(index, size, leaf, proof, root)
    done.facts.append(f"leaf {index} is included in the tree of {size}")
    return done


def verify_text(text: str, key_text: str, old_checkpoint: str | None = None) -> Checked:
    """Verify a checkpoint, a proof bundle or (with ``old_checkpoint``) a consistency
    proof; raise :class:`VerificationError` when anything fails."""
    key = parse_key(key_text)
    if text.startswith(_HEADER + "\n"):
        return _bundle(text, key)
    lines = text.split("\n")
    last = max((i for i, line in enumerate(lines) if line.startswith(_DASH)), default=-1)
    note = "\n".join(lines[:last + 1]) + "\n"
    hashes = [_h32(line.strip()) for line in lines[last + 1:] if line.strip()]
    origin, size, root = open_checkpoint(note, key)
    done = Checked("checkpoint", origin, size,
                   [f"checkpoint signed by {key.name}: {origin}, {size} leaves"])
    if old_checkpoint is None:
        if hashes:
            raise VerificationError("a consistency proof needs the old checkpoint")
        return done
    old_origin, old_size, old_root = open_checkpoint(old_checkpoint, key)
    if old_origin != origin:
        raise VerificationError(f"the old checkpoint is of log {old_origin!r}")
    check_consistency(old_size, size, old_root, root, hashes)
    done.kind = "consistency"
    done.facts.append(f"the tree of {size} extends the old tree of {old_size}")
    return done


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", help="a checkpoint, a tlog-proof bundle or a consistency "
                                     "proof ('-' for standard input)")
    parser.add_argument("--key", required=True, help="the log's verifier key string")
    parser.add_argument("--checkpoint", help="the older checkpoint a consistency proof "
                                             "starts from")
    args = parser.parse_args(argv)
    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as handle:
                text = handle.read()
        old = None
        if args.checkpoint:
            with open(args.checkpoint, encoding="utf-8") as handle:
                old = handle.read()
        done = verify_text(text, args.key, old)
    except (OSError, UnicodeDecodeError, VerificationError) as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    for fact in done.facts:
        print(f"ok: {fact}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
