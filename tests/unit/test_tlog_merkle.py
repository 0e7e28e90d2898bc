"""RFC 9162 tree math, held by properties: any two sizes, any leaf; both implementations (the
store's ``store/tlog/merkle.py`` and the standalone ``verifier.py``) accept every honest proof
and agree with the RFC's recursive definition; RFC 6962 test vectors pin the hashes."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.core.errors import LogProofError
from store.tlog import verifier
from store.tlog.merkle import (
    EMPTY_ROOT,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root_hash,
    verify_consistency,
    verify_inclusion,
)


def reference_mth(leaves: list[bytes]) -> bytes:
    """RFC 9162 §2.1.1, literally (recursive split at the largest power of two < n)."""
    n = len(leaves)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return leaves[0]
    k = 1
    while k * 2 < n:
        k *= 2
    return node_hash(reference_mth(leaves[:k]), reference_mth(leaves[k:]))


def leaves_of(n: int) -> list[bytes]:
    return [leaf_hash(i.to_bytes(4, "big")) for i in range(n)]


# RFC 6962's reference test data (certificate-transparency-go merkle tests): the roots of the
# first 1..8 leaves of these inputs.
RFC_INPUTS = [b"", b"\x00", b"\x10", b"\x20\x21", b"\x30\x31", b"\x40\x41\x42\x43",
              b"\x50\x51\x52\x53\x54\x55\x56\x57",
              b"\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f"]
RFC_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def test_rfc6962_vectors():
    leaves = [leaf_hash(d) for d in RFC_INPUTS]
    assert EMPTY_ROOT.hex() == ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852"
                                "b855")
    for n, expected in enumerate(RFC_ROOTS, start=1):
        assert root_hash(leaves, n).hex() == expected


sizes = st.integers(min_value=1, max_value=300)


@given(sizes, st.data())
def test_inclusion_any_leaf(n, data):
    leaves = leaves_of(n)
    assert root_hash(leaves) == reference_mth(leaves)
    index = data.draw(st.integers(0, n - 1))
    size = data.draw(st.integers(index + 1, n))
    proof = inclusion_proof(leaves, index, size)
    root = reference_mth(leaves[:size])
    verify_inclusion(index, size, leaves[index], proof, root)
    verifier.check_inclusion(index, size, leaves[index], proof, root)


@given(sizes, st.data())
def test_consistency_any_two_sizes(n, data):
    leaves = leaves_of(n)
    old = data.draw(st.integers(0, n))
    new = data.draw(st.integers(old, n))
    proof = consistency_proof(leaves, old, new)
    old_root, new_root = reference_mth(leaves[:old]), reference_mth(leaves[:new])
    verify_consistency(old, new, old_root, new_root, proof)
    verifier.check_consistency(old, new, old_root, new_root, proof)


@given(st.integers(2, 200), st.data())
def test_a_changed_leaf_breaks_consistency_with_every_later_tree(n, data):
    leaves = leaves_of(n)
    old = data.draw(st.integers(1, n - 1))
    changed = data.draw(st.integers(0, old - 1))
    rewritten = list(leaves)
    rewritten[changed] = leaf_hash(b"rewritten")
    old_root = root_hash(leaves, old)
    proof = consistency_proof(rewritten, old, n)
    with pytest.raises(LogProofError):
        verify_consistency(old, n, old_root, root_hash(rewritten), proof)
    with pytest.raises(verifier.VerificationError):
        verifier.check_consistency(old, n, old_root, root_hash(rewritten), proof)


def test_bad_arguments_are_typed_errors():
    leaves = leaves_of(4)
    with pytest.raises(LogProofError, match="not in a tree"):
        inclusion_proof(leaves, 4)
    with pytest.raises(LogProofError, match="cannot be built"):
        root_hash(leaves, 5)
    with pytest.raises(LogProofError, match="no consistency proof"):
        consistency_proof(leaves, 5)
