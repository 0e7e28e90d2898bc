"""The `log` commands (issue 38) on both backends: the key outside the database (mode 0600),
checkpoints published, proofs verified offline with only the public key (no database), an
erasure between an auditor's checkpoint and now, `verify --checkpoint`, a witness's cosign,
and what each bad input gets."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from sqlalchemy import text

from store import TranscriptStore
from store.cli.main import cli
from store.tlog import verifier

TURN = [
    {"role": "user", "content": "go"},
    {"role": "assistant", "content": "done"},
]


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("TRANSCRIPT_STORE_LOG_KEY", raising=False)
    return tmp_path / "config"


def run(*args: str, code: int = 0):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def filled(url: str, *ids: str) -> None:
    with TranscriptStore.open(url) as opened:
        for sid in ids:
            opened.append(sid, TURN, agent="codex")


def test_the_key_is_made_once_outside_the_database(config_home: Path) -> None:
    first = run("log", "key")
    key_file = config_home / "transcript-store" / "log.key"
    assert "made a new log signing key" in first.stderr
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = first.stdout.strip()
    again = run("log", "key")
    assert again.stdout.strip() == key and "made" not in again.stderr
    assert verifier.parse_key(key).name.startswith("transcript-store.invalid/key/")
    os.chmod(key_file, 0o644)
    refused = run("log", "key", code=1)
    assert "can be read by others" in refused.output and "Traceback" not in refused.output


def test_an_auditor_checks_everything_offline(store_url: str, tmp_path: Path) -> None:
    filled(store_url, "a", "b")
    key = run("log", "key").stdout.strip()
    published = tmp_path / "published"
    published.mkdir()
    run("log", "checkpoint", "--db", store_url, "--out", str(published))
    old = published / "checkpoint"
    assert (published / "4.checkpoint").read_text() == old.read_text()
    proof = tmp_path / "a1.tlog-proof"
    run("log", "prove", "a:1", "--db", store_url, "--out", str(proof))
    ok = run("log", "verify", str(proof), "--key", key).stdout
    assert "leaf 1 is included in the tree of 4" in ok and '"message","a",1' in ok
    # an erasure in between: the old checkpoint still gets valid proofs
    erased = run("sessions", "erase", "a", "--reason", "request", "-y", "--db", store_url,
                 "--json").stdout
    receipt = orjson.loads(erased.splitlines()[0])
    assert receipt["log_leaf"] == 4
    assert verifier.verify_text(receipt["log_after"], key).size == 5  # signed
    consistency = tmp_path / "consistency"
    consistency.write_text(run("log", "consistency", str(old), "--db", store_url).stdout)
    assert "extends the old tree of 4" in run(
        "log", "verify", str(consistency), "--key", key, "--checkpoint", str(old)).stdout
    tomb = tmp_path / "tomb.tlog-proof"
    tomb.write_text(run("log", "prove", "a", "--db", store_url).stdout)
    assert '"tombstone","erase","a"' in run("log", "verify", str(tomb), "--key", key).stdout
    assert "extends the checkpoint of 4" in run(
        "verify", "--db", store_url, "--checkpoint", str(old)).stdout
    # the standalone file, alone, with only the public key
    alone = subprocess.run([sys.executable, str(Path(verifier.__file__)), "--key", key,
                            "--checkpoint", str(old), str(consistency)],
                           capture_output=True, text=True, cwd=tmp_path)
    assert alone.returncode == 0 and "extends the old tree of 4" in alone.stdout


def test_a_rewritten_history_fails_verify_and_the_proof(store_url: str,
                                                        tmp_path: Path) -> None:
    filled(store_url, "a")
    key = run("log", "key").stdout.strip()
    old = tmp_path / "old"
    old.write_text(run("log", "checkpoint", "--db", store_url).stdout)
    with TranscriptStore.open(store_url) as opened, opened.engine.begin() as conn:
        conn.execute(text("UPDATE log_leaves SET leaf_index = 9 WHERE leaf_index = 0"))
        conn.execute(text("UPDATE log_leaves SET leaf_index = 0 WHERE leaf_index = 1"))
        conn.execute(text("UPDATE log_leaves SET leaf_index = 1 WHERE leaf_index = 9"))
    out = run("verify", "--db", store_url, "--checkpoint", str(old), code=1).stdout
    assert "[log]" in out and "rewritten" in out
    filled(store_url, "b")
    forged = tmp_path / "forged"
    forged.write_text(run("log", "consistency", str(old), "--db", store_url).stdout)
    failed = run("log", "verify", str(forged), "--key", key, "--checkpoint", str(old), code=1)
    assert "FAILED" in failed.stderr and "rewritten" in failed.stderr


def test_a_witness_cosigns_only_what_extends_its_last_checkpoint(store_url: str,
                                                                 tmp_path: Path) -> None:
    filled(store_url, "a")
    key = run("log", "key").stdout.strip()
    witness_key = tmp_path / "witness.key"
    first = tmp_path / "first"
    first.write_text(run("log", "checkpoint", "--db", store_url).stdout)
    cosigned = tmp_path / "cosigned"
    cosigned.write_text(run("log", "cosign", str(first), "--log-key", key,
                            "--key-file", str(witness_key)).stdout)
    assert cosigned.read_text().count("\u2014 ") == 2
    filled(store_url, "b")
    proof = tmp_path / "proof"
    proof.write_text(run("log", "consistency", str(cosigned), "--db", store_url).stdout)
    second = run("log", "cosign", str(proof), "--log-key", key, "--key-file",
                 str(witness_key), "--checkpoint", str(cosigned)).stdout
    assert second.split("\n")[1] == "4" and second.count("\u2014 ") == 2
    refused = run("log", "cosign", str(first), "--log-key", key, "--key-file",
                  str(witness_key), "--checkpoint", str(tmp_path / "proof"), code=1)
    assert "FAILED" in refused.stderr


def test_bad_inputs_are_one_line_errors(store_url: str, tmp_path: Path) -> None:
    filled(store_url, "a")
    key = run("log", "key").stdout.strip()
    out = run("log", "prove", "nobody", "--db", store_url, code=1).output
    assert "no leaf for session 'nobody'" in out and "Traceback" not in out
    out = run("log", "prove", "a:7", "--db", store_url, code=1).output
    assert "position 7" in out
    junk = tmp_path / "junk"
    junk.write_text("not a checkpoint\n")
    out = run("log", "verify", str(junk), "--key", key, code=1).output
    assert "FAILED" in out
    out = run("log", "verify", str(junk), "--key", "nonsense", code=1).output
    assert "FAILED" in out and "key" in out
    out = run("log", "consistency", str(junk), "--db", store_url, code=1).output
    assert out.startswith("error:") and "Traceback" not in out
    out = run("verify", "--db", store_url, "--checkpoint", str(junk), code=1).output
    assert out.startswith("error:")
