"""``watch`` and the per-file read state on both backends (issue 25): import and watch share
where each file was read up to, a partial line waits, files rewritten in place, shrunk or
replaced are reconciled without duplicates or losses, deleted sources are marked gone while
their sessions stay, the Claude Code hook, a line reported once, and SIGKILL mid-pass."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from store import TranscriptStore, import_paths
from store.cli.main import cli
from store.viewer import make_server

REPO = Path(__file__).resolve().parents[2]


def url_of(store: TranscriptStore) -> str:
    return store.engine.url.render_as_string(hide_password=False)


def run(*args: str, code: int = 0, stdin: str | None = None) -> str:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    assert result.exit_code == code, (result.output, result.exception)
    return result.output


def cc(sid: str, uuid: str, text: str) -> str:
    return json.dumps({"type": "user", "sessionId": sid, "uuid": uuid, "parentUuid": None,
                       "cwd": "/w", "message": {"role": "user", "content": text}}) + "\n"


def keys(store: TranscriptStore, sid: str) -> list[str | None]:
    return [m.key for m in store.load(sid)]


def test_import_and_watch_share_where_each_file_was_read(store: TranscriptStore,
                                                         tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    path = folder / "a.jsonl"
    path.write_text(cc("s-a", "u1", "one") + cc("s-a", "u2", "two"), encoding="utf-8")
    first = import_paths(store, [folder], settle=0)
    assert first.messages_added == 2
    out = run("watch", "--once", "--db", url_of(store), str(folder))
    assert "stored 1" not in out and "1 passes, 0 messages stored" in out  # nothing re-read
    with path.open("a", encoding="utf-8") as handle:
        handle.write(cc("s-a", "u3", "three"))
    out = run("watch", "--once", "--db", url_of(store), str(folder))
    assert "stored 1 messages (1 sessions, 1 files)" in out
    again = import_paths(store, [folder], settle=0)
    assert (again.messages_added, again.files, again.unchanged) == (0, 0, 1)
    assert keys(store, "s-a") == ["u1", "u2", "u3"]
    (source,) = store.session_sources("s-a")
    assert source.path == str(path.resolve()) and source.gone_at is None


def test_a_partial_last_line_waits_for_the_next_pass(store: TranscriptStore,
                                                     tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    second = cc("s-p", "u2", "two")
    path.write_text(cc("s-p", "u1", "one") + second[:25], encoding="utf-8")
    url = url_of(store)
    out = run("watch", "--once", "--db", url, str(tmp_path))
    assert "0 problems" in out and keys(store, "s-p") == ["u1"]
    with path.open("a", encoding="utf-8") as handle:
        handle.write(second[25:])
    run("watch", "--once", "--db", url, str(tmp_path))
    assert keys(store, "s-p") == ["u1", "u2"]


def gemini(messages: list[tuple[str, str, str]]) -> str:
    return json.dumps({"sessionId": "gem-w", "projectHash": "h", "messages": [
        {"id": i, "type": kind, "content": text} for i, kind, text in messages]})


def test_a_chat_rewritten_in_place_every_turn(store: TranscriptStore, tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    path = chats / "session-1.json"
    turns = [("g1", "user", "hi"), ("g2", "gemini", "hello"), ("g3", "user", "more")]
    path.write_text(gemini(turns), encoding="utf-8")
    import_paths(store, [chats], settle=0)
    assert keys(store, "gem-w") == ["g1", "g2", "g3"]
    with path.open("r+", encoding="utf-8") as handle:  # the CLI rewrites the whole file
        handle.write(gemini([*turns, ("g4", "gemini", "sure")]))
    summary = import_paths(store, [chats], settle=0)
    assert summary.messages_added == 1 and summary.diverged == []
    path.write_text(gemini(turns[:1]), encoding="utf-8")  # rewound: what was stored stays
    summary = import_paths(store, [chats], settle=0)
    assert summary.messages_added == 0 and summary.problems == []
    assert keys(store, "gem-w") == ["g1", "g2", "g3", "g4"]


def test_a_shrunk_or_replaced_file_loses_nothing_and_stores_nothing_twice(
        store: TranscriptStore, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(cc("s-r", f"u{i}", str(i)) for i in range(4)), encoding="utf-8")
    import_paths(store, [path], settle=0)
    path.write_text(cc("s-r", "u0", "0"), encoding="utf-8")  # truncated to its first line
    shrunk = import_paths(store, [path], settle=0)
    assert (shrunk.messages_added, shrunk.messages_already_stored) == (0, 1)
    new = tmp_path / "r.new"
    new.write_text("".join(cc("s-r", f"u{i}", str(i)) for i in range(6)), encoding="utf-8")
    os.replace(new, path)  # replaced (a new inode): read whole, only the new ones stored
    replaced = import_paths(store, [path], settle=0)
    assert (replaced.messages_added, replaced.messages_already_stored) == (2, 4)
    assert keys(store, "s-r") == [f"u{i}" for i in range(6)]


def test_a_deleted_source_is_marked_gone_and_its_session_stays(store: TranscriptStore,
                                                              tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    path = folder / "d.jsonl"
    path.write_text(cc("s-d", "u1", "kept"), encoding="utf-8")
    url = url_of(store)
    run("watch", "--once", "--db", url, str(folder))
    path.unlink()
    out = run("watch", "--once", "--db", url, str(folder))
    assert "1 source files gone (their sessions stay)" in out
    (source,) = store.session_sources("s-d")
    assert source.gone_at is not None
    assert keys(store, "s-d") == ["u1"]
    shown = run("sessions", "show", "s-d", "--db", url)
    assert "source gone since" in shown and "kept here" in shown
    assert "1 source files gone" not in run("watch", "--once", "--db", url, str(folder))
    # the viewer's session page says so too
    with TranscriptStore.open(url, read_only=True) as opened:
        server = make_server(opened, "127.0.0.1", 0)
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            parts = urlsplit(server.url)
            conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port,
                                              timeout=60)
            conn.request("GET", f"/session/{quote('s-d', safe='')}")
            page = conn.getresponse().read().decode()
            conn.close()
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)
    assert "source gone since" in page
    # back again: present
    path.write_text(cc("s-d", "u1", "kept"), encoding="utf-8")
    run("watch", "--once", "--db", url, str(folder))
    assert store.session_sources("s-d")[0].gone_at is None


def test_a_deleted_session_is_stored_again_by_the_next_import(store: TranscriptStore,
                                                              tmp_path: Path) -> None:
    path = tmp_path / "again.jsonl"
    path.write_text(cc("s-g", "u1", "one") + cc("s-g", "u2", "two"), encoding="utf-8")
    import_paths(store, [path], settle=0)
    store.delete_session("s-g")
    assert store.source_states() == {}  # its file's read state went with it
    again = import_paths(store, [path], settle=0)
    assert again.messages_added == 2 and keys(store, "s-g") == ["u1", "u2"]


def test_the_claude_code_hook_captures_the_session(store: TranscriptStore,
                                                   tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(cc("s-h", "u1", "hi") + cc("s-h", "u2", "there"), encoding="utf-8")
    hook = json.dumps({"session_id": "s-h", "transcript_path": str(path),
                       "hook_event_name": "SessionEnd", "reason": "exit"})
    url = url_of(store)
    out = run("capture", "--hook", "claude-code", "--db", url, stdin=hook)
    assert "captured 2 new messages" in out and keys(store, "s-h") == ["u1", "u2"]
    out = run("capture", "--hook", "claude-code", "--db", url, stdin=hook)
    assert "captured 0 new messages" in out
    out = run("capture", "--hook", "claude-code", "--db", url, stdin="{}", code=1)
    assert "transcript_path" in out


def test_a_truncated_line_is_reported_once_then_remembered(store: TranscriptStore,
                                                           tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(cc("s-t", "u1", "one") + '{"type": "user", "sessionId": "s-t", "uu\n'
                    + cc("s-t", "u3", "three"), encoding="utf-8")
    url = url_of(store)
    out = run("import", "--db", url, "--quiet", str(path), code=1)
    assert "old.jsonl:2: not JSON" in out
    out = run("import", "--db", url, "--quiet", str(path))  # unchanged: not reported again
    assert "not JSON" not in out
    with path.open("a", encoding="utf-8") as handle:
        handle.write(cc("s-t", "u4", "four"))
    out = run("import", "--db", url, "--quiet", str(path))  # grown: read past it
    assert "not JSON" not in out and keys(store, "s-t") == ["u1", "u3", "u4"]


def test_watch_install_writes_the_user_service(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    if sys.platform == "darwin":  # pragma: no cover - the suite runs on Linux
        return
    out = run("watch", "--install", "--db", "archive.sqlite", str(tmp_path))
    unit = tmp_path / "config" / "systemd" / "user" / "transcript-store-watch.service"
    assert f"wrote systemd user unit: {unit}" in out
    assert "systemctl --user enable --now transcript-store-watch.service" in out
    assert "systemctl --user stop" in out and "systemctl --user disable --now" in out
    text = unit.read_text(encoding="utf-8")
    assert f"ExecStart={sys.executable} -m store watch --quiet --db " in text
    assert str((Path.cwd() / "archive.sqlite").resolve()) in text


def test_watch_prints_a_line_per_pass_and_a_status_when_stopped(store: TranscriptStore,
                                                                tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    (folder / "a.jsonl").write_text(cc("s-i", "u1", "one"), encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, "-m", "store", "watch", "--settle", "0", "--db", url_of(store),
         str(folder)], env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        first = child.stdout.readline()  # the first pass stored the file
        assert "stored 1 messages (1 sessions, 1 files)" in first
        with (folder / "a.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(cc("s-i", "u2", "two"))
        second = child.stdout.readline()  # the next pass: only the new line
        assert "stored 1 messages" in second
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
    assert child.returncode == 0
    assert "2 messages stored" in err and keys(store, "s-i") == ["u1", "u2"]


# -- SIGKILL -------------------------------------------------------------------------------------

FILES, LINES = 30, 150


def _fill(folder: Path, start: int, count: int) -> None:
    for f in range(FILES):
        with (folder / f"f{f:02d}.jsonl").open("a", encoding="utf-8") as handle:
            handle.write("".join(cc(f"k-{f}", f"u{i}", f"message {i} of file {f}")
                                 for i in range(start, start + count)))


def _stored(store: TranscriptStore) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(text("SELECT count(*) FROM messages")).scalar_one())


def _watch_and_kill(url: str, folder: Path, store: TranscriptStore, above: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-m", "store", "watch", "--quiet", "--poll", "--idle", "1",
         "--settle", "0", "--db", url, str(folder)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while _stored(store) <= above and time.monotonic() < deadline:
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            time.sleep(0.02)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        if child.stderr:
            child.stderr.close()


def test_sigkill_mid_pass_then_restart_loses_nothing_and_stores_nothing_twice(
        store: TranscriptStore, tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    url = url_of(store)
    _fill(folder, 0, LINES)
    _watch_and_kill(url, folder, store, 0)  # killed as soon as the first rows are stored
    first = _stored(store)
    assert 0 < first < FILES * LINES  # the kill landed mid-pass
    _fill(folder, LINES, LINES)  # the files grow while no watcher runs
    _watch_and_kill(url, folder, store, first)  # and again, part-way into the catch-up
    run("watch", "--once", "--settle", "0", "--db", url, str(folder))
    for f in range(FILES):
        assert keys(store, f"k-{f}") == [f"u{i}" for i in range(2 * LINES)], f
    assert _stored(store) == FILES * 2 * LINES


def test_reading_a_file_does_not_wake_watch_writing_one_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass opens every file it looks at: those opens and unwritten closes must not even
    reach the observer (at 44k files they cost its thread 2.5 CPU s a pass); a write and a
    new file wake a pass."""
    import time

    pytest.importorskip("watchdog")
    from watchdog.events import FileSystemEvent, FileSystemEventHandler

    from store.cli.watch import _Waiter

    seen: list[str] = []
    real = FileSystemEventHandler.dispatch

    def dispatch(self: FileSystemEventHandler, event: FileSystemEvent) -> None:
        seen.append(event.event_type)
        real(self, event)

    monkeypatch.setattr(FileSystemEventHandler, "dispatch", dispatch)
    folder = tmp_path / "projects"
    (folder / "sub").mkdir(parents=True)
    target = folder / "sub" / "a.jsonl"
    target.write_text("{}\n", encoding="utf-8")
    waiter = _Waiter(60.0, poll=False)
    try:
        waiter.follow([folder])
        time.sleep(0.3)
        waiter._changed.clear()
        for _ in range(20):
            target.read_bytes()
        assert not waiter._changed.wait(1.0)  # (reads alone: no pass)
        assert not {"opened", "closed_no_write"} & set(seen), seen
        with target.open("a", encoding="utf-8") as handle:
            handle.write("{}\n")
        assert waiter._changed.wait(5.0)
        assert _soon(lambda: {"modified", "closed"} <= set(seen)), seen
        # (every event of the write in, before the next wake is looked for: a late one
        # would wake it in the new file's stead)
        waiter._changed.clear()
        seen.clear()
        (folder / "sub" / "new.jsonl").write_text("{}\n", encoding="utf-8")
        assert waiter._changed.wait(5.0)
        assert _soon(lambda: "created" in seen), seen
    finally:
        waiter.stop()


def _soon(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    """Whether ``condition`` holds within ``seconds`` (the observer's thread dispatches its
    events one after the other: the first wakes the waiter, the others follow)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True

