"""Signed notes, Ed25519 keys and checkpoints (domain; stdlib + ``cryptography``).

* **Signed note** (https://c2sp.org/signed-note): a text ending in a newline, a blank line,
  then one or more signature lines ``— <key name> base64(key ID || signature)`` (em dash
  U+2014, space). The text is valid UTF-8 with no control character but the newline. An
  Ed25519 signature (signature type ``0x01``) is made over the text, final newline included;
  the key ID is ``SHA-256(key name || 0x0A || 0x01 || 32-byte public key)[:4]``.
* **Keys** in the strings of Go's ``golang.org/x/mod/sumdb/note``: the verifier key
  ``<name>+<key ID, 8 hex digits>+base64(0x01 || public key)``, the signer key
  ``PRIVATE+KEY+<name>+<key ID>+base64(0x01 || 32-byte seed)`` (what the key file holds).
* **Checkpoint** (https://c2sp.org/tlog-checkpoint): the note text ``<origin>\\n<tree
  size, decimal>\\n<base64 root hash>\\n`` followed by optional extension lines.

A verifier ignores signatures by keys it does not know (same name and ID is "known"), and
rejects the note when a known key's signature fails or none verifies.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from store.core.errors import LogProofError
from store.tlog.merkle import HASH_SIZE

__all__ = [
    "ALG_ED25519",
    "Checkpoint",
    "Signer",
    "Verifier",
    "add_signatures",
    "format_checkpoint",
    "key_id",
    "open_checkpoint",
    "open_note",
    "parse_checkpoint",
    "sign_note",
]

ALG_ED25519 = 0x01
_DASH = "\u2014 "
_NAME = re.compile(r"^[^\s+]+$")
_DECIMAL = re.compile(r"^(0|[1-9][0-9]{0,19})$")
#: A verifier accepts at most this many signature lines (the spec asks for at least 16).
MAX_SIGNATURES = 64


def key_id(name: str, public: bytes) -> bytes:
    """The 4-byte key ID of an Ed25519 key named ``name``."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([ALG_ED25519]) + public).digest()[:4]


def _b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise LogProofError(f"{what} is not standard base64") from None


def _check_name(name: str) -> str:
    if not name or not _NAME.match(name):
        raise LogProofError(f"{name!r} is not a key name (non-empty, no spaces, no '+')")
    return name


@dataclass(frozen=True, slots=True)
class Verifier:
    """An Ed25519 note verifier: a key name and its public key."""

    name: str
    public: bytes

    @property
    def key_id(self) -> bytes:
        return key_id(self.name, self.public)

    def __str__(self) -> str:
        encoded = base64.b64encode(bytes([ALG_ED25519]) + self.public).decode()
        return f"{self.name}+{self.key_id.hex()}+{encoded}"

    @classmethod
    def parse(cls, text: str) -> Verifier:
        """A verifier key string ``name+hexid+base64(0x01||key)``."""
        parts = text.strip().split("+", 2)  # base64 may hold '+', a name never does
        if len(parts) != 3:
            raise LogProofError("a verifier key is name+keyid+base64key")
        name, hexid, encoded = parts
        _check_name(name)
        raw = _b64(encoded, "the verifier key")
        if len(raw) != 33 or raw[0] != ALG_ED25519:
            raise LogProofError("the verifier key is not an Ed25519 key (type 0x01, 32 bytes)")
        made = cls(name, raw[1:])
        if hexid.lower() != made.key_id.hex():
            raise LogProofError("the verifier key's ID does not match its name and key")
        return made

    def verify(self, text: bytes, signature: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, text)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True, slots=True)
class Signer:
    """An Ed25519 note signer: a key name and its 32-byte private seed."""

    name: str
    seed: bytes

    @classmethod
    def generate(cls, name: str) -> Signer:
        key = Ed25519PrivateKey.generate()
        seed = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return cls(_check_name(name), seed)

    @property
    def verifier(self) -> Verifier:
        key = Ed25519PrivateKey.from_private_bytes(self.seed).public_key()
        return Verifier(self.name, key.public_bytes(Encoding.Raw, PublicFormat.Raw))

    def __str__(self) -> str:
        encoded = base64.b64encode(bytes([ALG_ED25519]) + self.seed).decode()
        return f"PRIVATE+KEY+{self.name}+{self.verifier.key_id.hex()}+{encoded}"

    def __repr__(self) -> str:  # never print the seed by accident
        return f"Signer({self.name!r})"

    @classmethod
    def parse(cls, text: str) -> Signer:
        """A signer key string ``PRIVATE+KEY+name+hexid+base64(0x01||seed)``."""
        parts = text.strip().split("+", 4)
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
            raise LogProofError("a signer key is PRIVATE+KEY+name+keyid+base64key")
        name, hexid, encoded = parts[2:]
        _check_name(name)
        raw = _b64(encoded, "the signer key")
        if len(raw) != 33 or raw[0] != ALG_ED25519:
            raise LogProofError("the signer key is not an Ed25519 key (type 0x01, 32 bytes)")
        made = cls(name, raw[1:])
        if hexid.lower() != made.verifier.key_id.hex():
            raise LogProofError("the signer key's ID does not match its name and key")
        return made

    def sign(self, text: bytes) -> bytes:
        return Ed25519PrivateKey.from_private_bytes(self.seed).sign(text)

    def sign_note(self, text: str) -> str:
        """``text`` (a checkpoint's note text) signed by this key."""
        return sign_note(text, self)

    def cosign(self, note: str) -> str:
        """The signed note ``note`` (anything after its last signature line, such as
        consistency hashes, dropped) with this key's signature added: a witness's plain
        Ed25519 note signature over the same text (not c2sp.org/tlog-cosignature's
        timestamped type 0x04)."""
        lines = note.split("\n")
        last = max((i for i, line in enumerate(lines) if line.startswith(_DASH)), default=-1)
        if last < 0:
            raise LogProofError("there is no signed note to cosign")
        return add_signatures("\n".join(lines[:last + 1]) + "\n", self)


def _check_text(text: str) -> None:
    if not text.endswith("\n"):
        raise LogProofError("a note's text must end with a newline")
    if any(ord(c) < 0x20 and c != "\n" for c in text):
        raise LogProofError("a note must not contain control characters but newlines")


def sign_note(text: str, *signers: Signer) -> str:
    """The signed note of ``text`` (ending in a newline) with one line per signer."""
    _check_text(text)
    body = text.encode()
    lines = [f"{_DASH}{s.name} "
             f"{base64.b64encode(s.verifier.key_id + s.sign(body)).decode()}\n"
             for s in signers]
    return text + "\n" + "".join(lines)


def add_signatures(note: str, *signers: Signer) -> str:
    """``note`` with one more signature line per signer (a cosignature)."""
    text, _ = _split_note(note)
    return note + "".join(sign_note(text, s).split("\n\n")[-1] for s in signers)


def _split_note(note: str) -> tuple[str, list[tuple[str, bytes]]]:
    """(text, [(key name, base64-decoded signature)]) of a note, nothing checked yet."""
    if not note.endswith("\n"):
        raise LogProofError("a signed note ends with a newline")
    cut = note.rfind("\n\n")
    if cut < 0:
        raise LogProofError("a signed note has no blank line before its signatures")
    text, block = note[:cut + 1], note[cut + 2:]
    _check_text(text)
    signatures = []
    for line in block.split("\n")[:-1]:
        if not line.startswith(_DASH):
            raise LogProofError(f"{line[:40]!r} is not a signature line")
        name, _, encoded = line[len(_DASH):].partition(" ")
        _check_name(name)
        raw = _b64(encoded, "a signature")
        if len(raw) < 5:
            raise LogProofError("a signature is shorter than its key ID")
        signatures.append((name, raw))
    if not signatures:
        raise LogProofError("a signed note has no signature")
    if len(signatures) > MAX_SIGNATURES:
        raise LogProofError(f"a signed note has more than {MAX_SIGNATURES} signatures")
    return text, signatures


def open_note(note: str, verifier: Verifier) -> str:
    """The text of ``note`` once the signature of ``verifier`` verifies on it; raise
    :class:`LogProofError` when it has none or a signature by that key fails."""
    text, signatures = _split_note(note)
    body = text.encode()
    found = False
    for name, raw in signatures:
        if name != verifier.name or raw[:4] != verifier.key_id:
            continue  # an unknown key (a witness, another log): ignored
        if not verifier.verify(body, raw[4:]):
            raise LogProofError(f"the signature by {name} does not verify")
        found = True
    if not found:
        raise LogProofError(f"the note carries no signature by {verifier.name} "
                            f"({verifier.key_id.hex()})")
    return text


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A tree head as a checkpoint says it: the log's origin, size and root hash."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        return format_checkpoint(self)


def format_checkpoint(cp: Checkpoint) -> str:
    """The checkpoint's note text (origin, size, base64 root, extension lines)."""
    if not cp.origin or "\n" in cp.origin:
        raise LogProofError("a checkpoint's origin is one non-empty line")
    lines = [cp.origin, str(cp.size), base64.b64encode(cp.root).decode(), *cp.extensions]
    return "\n".join(lines) + "\n"


def parse_checkpoint(text: str) -> Checkpoint:
    """A checkpoint's note text back into its parts (the signature checked before)."""
    lines = text.split("\n")
    if len(lines) < 4 or lines[-1] != "":
        raise LogProofError("a checkpoint has an origin, a size and a root hash line")
    origin, size, root, *extensions = lines[:-1]
    if not origin:
        raise LogProofError("the checkpoint's origin line is empty")
    if not _DECIMAL.match(size) or int(size) >= 1 << 64:
        raise LogProofError(f"the checkpoint's size {size!r} is not a decimal")
    raw = _b64(root, "the checkpoint's root hash")
    if len(raw) != HASH_SIZE:
        raise LogProofError("the checkpoint's root hash is not 32 bytes")
    if any(not e for e in extensions):
        raise LogProofError("a checkpoint's extension lines are not empty")
    return Checkpoint(origin, int(size), raw, tuple(extensions))


def open_checkpoint(note: str, verifier: Verifier, *, origin: str | None = None
                    ) -> Checkpoint:
    """A signed checkpoint, its signature by ``verifier`` checked (and its origin, when
    given)."""
    cp = parse_checkpoint(open_note(note, verifier))
    if origin is not None and cp.origin != origin:
        raise LogProofError(f"the checkpoint is of log {cp.origin!r}, not {origin!r}")
    return cp
