"""A malicious log server, in the spirit of the immudb proof-forgery advisory
(GHSA-672p-m5jq-mrh8: a verifier that accepted proofs the server shaped): every forged path,
wrong size, swapped leaf, extra or missing hash, checkpoint for a rewritten history and bad
signature is rejected, by the store's code and by the standalone verifier alike."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.core.errors import LogProofError
from store.tlog import verifier
from store.tlog.bundle import (
    LeafExtra,
    ProofBundle,
    entry_leaf,
    format_consistency,
    format_proof,
    message_entry,
    new_salt,
    parse_consistency,
    parse_proof,
)
from store.tlog.merkle import (
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    root_hash,
    verify_consistency,
    verify_inclusion,
)
from store.tlog.note import (
    Checkpoint,
    Signer,
    Verifier,
    add_signatures,
    open_checkpoint,
    open_note,
    sign_note,
)

SIGNER = Signer.generate("example.test/log")
KEY = str(SIGNER.verifier)
ORIGIN = "example.test/log/1"


def leaves_of(n: int) -> list[bytes]:
    return [leaf_hash(i.to_bytes(4, "big")) for i in range(n)]


def signed(leaves: list[bytes], size: int | None = None, signer: Signer = SIGNER) -> str:
    n = len(leaves) if size is None else size
    return sign_note(Checkpoint(ORIGIN, n, root_hash(leaves, n)).text(), signer)


def both_reject_inclusion(index, size, leaf, proof, root):
    with pytest.raises(LogProofError):
        verify_inclusion(index, size, leaf, proof, root)
    with pytest.raises(verifier.VerificationError):
        verifier.check_inclusion(index, size, leaf, proof, root)


def both_reject_consistency(old, new, old_root, new_root, proof):
    with pytest.raises(LogProofError):
        verify_consistency(old, new, old_root, new_root, proof)
    with pytest.raises(verifier.VerificationError):
        verifier.check_consistency(old, new, old_root, new_root, proof)


@given(st.integers(2, 120), st.data())
def test_forged_inclusion_proofs_are_rejected(n, data):
    leaves = leaves_of(n)
    index = data.draw(st.integers(0, n - 1))
    proof = inclusion_proof(leaves, index)
    root = root_hash(leaves)
    # a flipped bit anywhere in the path
    if proof:
        at = data.draw(st.integers(0, len(proof) - 1))
        forged = list(proof)
        forged[at] = bytes([forged[at][0] ^ 1]) + forged[at][1:]
        both_reject_inclusion(index, n, leaves[index], forged, root)
        # a missing hash, an extra hash
        both_reject_inclusion(index, n, leaves[index], proof[:-1], root)
    both_reject_inclusion(index, n, leaves[index], [*proof, root], root)
    # another leaf at this index (a swapped leaf), the leaf at another index
    other = data.draw(st.integers(0, n - 1).filter(lambda i: i != index))
    both_reject_inclusion(index, n, leaves[other], proof, root)
    both_reject_inclusion(other, n, leaves[index], proof, root)
    # a wrong tree size with the same path and root
    wrong = data.draw(st.integers(index + 1, 2 * n).filter(lambda s: s != n))
    try:
        verify_inclusion(index, wrong, leaves[index], proof, root)
    except LogProofError:
        pass
    else:  # sizes with the same path shape: the root must then differ
        assert root_hash(leaves_of(max(wrong, n)), wrong) != root or wrong == n
    # a leaf index past the tree, a root of another tree
    both_reject_inclusion(n, n, leaves[index], proof, root)
    both_reject_inclusion(index, n, leaves[index], proof, root_hash(leaves, n - 1))


def test_a_short_hash_is_rejected():
    leaves = leaves_of(5)
    proof = inclusion_proof(leaves, 2)
    both_reject_inclusion(2, 5, leaves[2], [proof[0][:31], *proof[1:]], root_hash(leaves))


@given(st.integers(3, 120), st.data())
def test_forged_consistency_proofs_are_rejected(n, data):
    leaves = leaves_of(n)
    old = data.draw(st.integers(1, n - 1))
    proof = consistency_proof(leaves, old)
    old_root, new_root = root_hash(leaves, old), root_hash(leaves)
    at = data.draw(st.integers(0, len(proof) - 1))
    forged = list(proof)
    forged[at] = bytes([forged[at][0] ^ 0x80]) + forged[at][1:]
    both_reject_consistency(old, n, old_root, new_root, forged)
    both_reject_consistency(old, n, old_root, new_root, proof[:-1])
    both_reject_consistency(old, n, old_root, new_root, [*proof, new_root])
    both_reject_consistency(old, n, old_root, new_root, [])
    both_reject_consistency(n, old, new_root, old_root, proof)  # sizes swapped
    both_reject_consistency(old, n, new_root, new_root, proof)  # wrong old root
    # a rewritten history: the server signs a tree whose first leaf changed
    rewritten = [leaf_hash(b"rewritten"), *leaves[1:]]
    both_reject_consistency(old, n, old_root, root_hash(rewritten),
                            consistency_proof(rewritten, old))
    # the same size with another root: a fork
    both_reject_consistency(n, n, new_root, root_hash(rewritten), [])


def test_signed_checkpoints():
    leaves = leaves_of(9)
    note = signed(leaves)
    cp = open_checkpoint(note, SIGNER.verifier, origin=ORIGIN)
    assert (cp.size, cp.root) == (9, root_hash(leaves))
    assert verifier.open_checkpoint(note, verifier.parse_key(KEY)) == (ORIGIN, 9, cp.root)
    assert Verifier.parse(KEY) == SIGNER.verifier
    assert Signer.parse(str(SIGNER)).verifier == SIGNER.verifier
    # a witness's cosignature is ignored by a verifier that does not know the witness
    cosigned = add_signatures(note, Signer.generate("witness.test"))
    assert open_checkpoint(cosigned, SIGNER.verifier).size == 9
    # the key id is SHA-256(name || 0x0A || 0x01 || key)[:4]
    name, hexid, _ = KEY.split("+", 2)
    import hashlib
    assert hexid == hashlib.sha256(name.encode() + b"\n\x01" + SIGNER.verifier.public
                                   ).digest()[:4].hex()


def test_bad_signatures_are_rejected():
    note = signed(leaves_of(4))
    text, _, sigline = note.rpartition("\n\u2014 ")
    name, encoded = sigline.strip().split(" ")
    raw = bytearray(base64.b64decode(encoded))
    raw[10] ^= 1
    broken = text + "\n\u2014 " + name + " " + base64.b64encode(bytes(raw)).decode() + "\n"
    key = verifier.parse_key(KEY)
    for bad in (broken,
                note.replace("\n4\n", "\n5\n"),  # the size edited after signing
                signed(leaves_of(4), signer=Signer.generate("example.test/log")),  # other key
                note.split("\n\n")[0] + "\n",  # no signature at all
                ):
        with pytest.raises(LogProofError):
            open_note(bad, SIGNER.verifier)
        with pytest.raises(verifier.VerificationError):
            verifier.open_checkpoint(bad, key)
    with pytest.raises(LogProofError, match="is of log"):
        open_checkpoint(note, SIGNER.verifier, origin="another.test/log")
    for bad_key in ("name+00000000+AQ==", "just-a-name", KEY.replace("+", "+0", 1)):
        with pytest.raises(LogProofError):
            Verifier.parse(bad_key)
        with pytest.raises(verifier.VerificationError):
            verifier.parse_key(bad_key)


def make_bundle(leaves, index, salt, entry, size=None):
    n = len(leaves) if size is None else size
    return format_proof(ProofBundle(index, tuple(inclusion_proof(leaves, index, n)),
                                    signed(leaves, n),
                                    LeafExtra(leaves[index], salt, entry).encode()))


def test_bundles_round_trip_and_forgeries_fail():
    salt, entry = new_salt(), message_entry("s1", 3, "ab" * 32)
    leaves = leaves_of(12)
    leaves[7] = entry_leaf(salt, entry)
    text = make_bundle(leaves, 7, salt, entry)
    parsed = parse_proof(text)
    assert parsed.index == 7 and LeafExtra.decode(parsed.extra).entry == entry
    done = verifier.verify_text(text, KEY)
    assert done.kind == "inclusion" and done.size == 12
    forgeries = [
        text.replace("index 7", "index 6"),  # wrong index
        make_bundle(leaves, 7, new_salt(), entry),  # another salt: not the leaf
        make_bundle(leaves, 7, salt, message_entry("s1", 4, "ab" * 32)),  # another entry
        "\n".join(line for i, line in enumerate(text.split("\n")) if i != 4),  # a hash gone
    ]
    # the leaf moved by a rewritten history: a valid bundle for the tree the server signed,
    # which the auditor's older checkpoint then refuses as a history that does not extend it
    swapped = list(leaves)
    swapped[7], swapped[8] = swapped[8], swapped[7]
    moved = make_bundle(swapped, 8, salt, entry)
    assert verifier.verify_text(moved, KEY).size == 12
    with pytest.raises(verifier.VerificationError, match="rewritten"):
        verifier.verify_text(format_consistency(signed(swapped), consistency_proof(swapped, 9)),
                             KEY, signed(leaves, 9))
    forgeries.append(text.replace(ORIGIN, "example.test/log/2"))  # signature broken
    for bad in forgeries:
        with pytest.raises(verifier.VerificationError):
            verifier.verify_text(bad, KEY)


def test_an_erased_leaf_still_proves_inclusion():
    leaves = leaves_of(6)
    text = format_proof(ProofBundle(2, tuple(inclusion_proof(leaves, 2)), signed(leaves),
                                    LeafExtra(leaves[2]).encode()))
    done = verifier.verify_text(text, KEY)
    assert any("erased" in fact for fact in done.facts)


def test_consistency_texts(tmp_path: Path):
    leaves = leaves_of(20)
    old = signed(leaves, 13)
    text = format_consistency(signed(leaves), consistency_proof(leaves, 13))
    assert parse_consistency(text).proof == tuple(consistency_proof(leaves, 13))
    assert verifier.verify_text(text, KEY, old).kind == "consistency"
    rewritten = [leaf_hash(b"x"), *leaves[1:]]
    forged = format_consistency(signed(rewritten), consistency_proof(rewritten, 13))
    with pytest.raises(verifier.VerificationError, match="rewritten"):
        verifier.verify_text(forged, KEY, old)
    # a checkpoint for a smaller tree than the auditor's
    with pytest.raises(verifier.VerificationError, match="smaller"):
        verifier.verify_text(signed(leaves, 10), KEY, old)
    # the standalone file, run as a program with only the public key
    (tmp_path / "old").write_text(old)
    (tmp_path / "new").write_text(text)
    (tmp_path / "forged").write_text(forged)
    script = Path(verifier.__file__)
    ok = subprocess.run([sys.executable, str(script), "--key", KEY, "--checkpoint",
                         str(tmp_path / "old"), str(tmp_path / "new")],
                        capture_output=True, text=True, cwd=tmp_path, env={"PATH": ""})
    assert ok.returncode == 0, ok.stderr
    assert "extends the old tree of 13" in ok.stdout
    bad = subprocess.run([sys.executable, str(script), "--key", KEY, "--checkpoint",
                          str(tmp_path / "old"), str(tmp_path / "forged")],
                         capture_output=True, text=True, cwd=tmp_path, env={"PATH": ""})
    assert bad.returncode == 1 and "FAILED" in bad.stderr
