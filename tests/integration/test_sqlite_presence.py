"""SQLite stores keep working when something in their process reads the database file's bytes
(issue 37, break 4). The sequence the attack ran: erase, a check that the bytes are gone (a
plain read of the file, in the process that runs the stores), hold, ``transcript-store prune``
in another process, then an erase while another store and another process append to the
session. The read dropped every POSIX lock SQLite held for the process; the CLI, closing,
deleted the WAL and the shared-memory file under the running stores, and every later call on
them failed with ``disk I/O error``. The store's presence lock (``store/db/writing/presence.py``)
is not dropped by such a read."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from store import TranscriptStore
from store.db.writing.presence import Presence

pytestmark = [
    pytest.mark.sqlite,
    pytest.mark.skipif(not hasattr(fcntl, "F_OFD_SETLK"),
                       reason="open file description locks are Linux's"),
]

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-live-erase-me-0123456789abcdef"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def _side_files(path: Path) -> list[int | None]:
    """The inodes of the -wal and -shm files (None: missing)."""
    out: list[int | None] = []
    for suffix in ("-wal", "-shm"):
        try:
            out.append(os.stat(f"{path}{suffix}").st_ino)
        except FileNotFoundError:
            out.append(None)
    return out


def _msg(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


_APPENDER = """
import sys
from store import TranscriptStore
with TranscriptStore.open(sys.argv[1]) as db:
    for i in range(int(sys.argv[3])):
        db.append(sys.argv[2], [{"role": "user", "content": f"from a process {i}"}])
"""

_COUNT = """
import sys
from store import TranscriptStore
with TranscriptStore.open(sys.argv[1], read_only=True) as db:
    print(db.get_session(sys.argv[2]).message_count)
"""


def test_stores_survive_a_byte_check_and_a_prune_in_another_process(tmp_path):
    path = tmp_path / "store.sqlite"
    url = f"sqlite:///{path}"
    with TranscriptStore.open(url) as a, TranscriptStore.open(url) as b:
        for n in range(4):
            a.append(f"s{n}", [_msg(f"hello {n}"), _msg(SECRET if n == 0 else "plain")])
        a.erase(["s0"], reason="subject request")
        assert SECRET.encode() not in path.read_bytes()  # the byte check: open, read, close
        a.hold("s1", "legal")
        before = _side_files(path)
        assert None not in before
        cutoff = (datetime.now(UTC) + timedelta(days=1)).isoformat()
        pruned = _run("-m", "store", "prune", "--db", str(path), "--before", cutoff, "--yes")
        assert pruned.returncode == 0, pruned.stderr

        # An erase while another store of this process and another process append to it.
        b.append("race", [_msg("race 0")])
        errors: list[BaseException] = []

        def append() -> None:
            for i in range(20):
                try:
                    b.append("race", [_msg(f"race {i + 1}")])
                except BaseException as exc:  # noqa: BLE001 - reported below
                    errors.append(exc)

        thread = threading.Thread(target=append)
        other = subprocess.Popen([sys.executable, "-c", _APPENDER, url, "race", "20"],
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})
        thread.start()
        a.erase(["race"], reason="during appends")
        thread.join()
        assert other.wait(timeout=300) == 0
        assert errors == []

        # Every later call on the running stores, and a new store in this process, works.
        a.append("after", [_msg("a")])
        b.append("after", [_msg("b")])
        with TranscriptStore.open(url) as c:
            c.append("after", [_msg("c")])
            assert [m.message.parts[0].text for m in c.load("after").messages] == [  # type: ignore[union-attr]
                "a", "b", "c"]
        assert len(a.list_sessions()) == len(b.list_sessions())
        assert a.verify().ok
        assert _side_files(path) == before  # the WAL and its index stayed under the stores
        # What the stores wrote is in the file other processes read (not in unlinked files).
        counted = _run("-c", _COUNT, url, "after")
        assert counted.returncode == 0, counted.stderr
        assert counted.stdout.strip() == "3"


def test_the_presence_lock_keeps_another_process_from_deleting_the_wal(tmp_path):
    path = tmp_path / "store.sqlite"
    url = f"sqlite:///{path}"
    closer = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
              "c.execute('SELECT count(*) FROM sessions').fetchall(); c.close()")
    with TranscriptStore.open(url) as db:
        db.append("s", [_msg("one")])
        path.read_bytes()  # drops the process's POSIX locks on the file
        assert _run("-c", closer, str(path)).returncode == 0
        assert None not in _side_files(path)
        db.append("s", [_msg("two")])
        assert db.load("s").session.message_count == 2
    # Closed: the presence is let go, and the last process tidies the WAL away as SQLite does.
    assert _run("-c", closer, str(path)).returncode == 0
    assert _side_files(path) == [None, None]


def test_stores_of_one_process_share_one_presence_until_the_last_closes(tmp_path):
    path = tmp_path / "store.sqlite"
    url = f"sqlite:///{path}"
    first = TranscriptStore.open(url)
    second = TranscriptStore.open(url)
    try:
        first.append("s", [_msg("one")])
        first.close()
        path.read_bytes()
        closer = "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('SELECT 1').close()"
        assert _run("-c", closer, str(path)).returncode == 0
        assert None not in _side_files(path)  # the second store still holds it
        second.append("s", [_msg("two")])
        assert second.load("s").session.message_count == 2
    finally:
        second.close()
    assert not Presence(tmp_path / "missing.sqlite").held
