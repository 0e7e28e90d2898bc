"""Small agent databases written as each agent writes them (our own fixtures, built in the
test from the schemas learnt from the agents' sources): Crush, OpenCode, Goose.

Each builder writes through a plain :mod:`sqlite3` connection in WAL mode (as the agents
do) and closes it, so that the database is complete in its main file, unless ``keep`` is
given, which keeps the writer open (the agent still running).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

SEPT = 1_757_000_000  # 2025-09-04, Unix seconds

CRUSH_SCHEMA = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
    updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT,
    todos TEXT);
CREATE TABLE files (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL);
CREATE TABLE messages (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
    parts TEXT NOT NULL DEFAULT '[]', model TEXT, created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT,
    is_summary_message INTEGER DEFAULT 0 NOT NULL);
"""


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def crush_part(kind: str, **data: Any) -> dict[str, Any]:
    return {"type": kind, "data": data}


def crush_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return crush_part("tool_call", id=call_id, name=name, input=json.dumps(arguments),
                      provider_executed=False, finished=True)


def crush_result(call_id: str, name: str, content: str, error: bool = False
                 ) -> dict[str, Any]:
    return crush_part("tool_result", tool_call_id=call_id, name=name, content=content,
                      data="", mime_type="", metadata="", is_error=error)


def crush_finish(reason: str, at: int) -> dict[str, Any]:
    return crush_part("finish", reason=reason, time=at)


class CrushWriter:
    """Writes rows as Crush's message service does: a row created, then updated in place."""

    def __init__(self, path: Path) -> None:
        self.conn = connect(path)
        self.conn.executescript(CRUSH_SCHEMA)

    def session(self, sid: str, title: str, at: int, parent: str | None = None,
                prompt: int = 0, completion: int = 0, cost: float = 0.0) -> None:
        self.conn.execute(
            "INSERT INTO sessions (id, parent_session_id, title, prompt_tokens, "
            "completion_tokens, cost, updated_at, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (sid, parent, title, prompt, completion, cost, at, at))

    def message(self, mid: str, sid: str, role: str, parts: list[dict[str, Any]], at: int,
                model: str | None = None, provider: str | None = None) -> None:
        if role != "assistant":  # the service ends every other role's parts with a finish
            parts = [*parts, crush_finish("stop", 0)]
        finished = next((p["data"]["time"] for p in parts if p["type"] == "finish"), None)
        self.conn.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, "
            "updated_at, finished_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (mid, sid, role, json.dumps(parts), model, provider, at, at, finished))

    def update(self, mid: str, parts: list[dict[str, Any]], at: int) -> None:
        finished = next((p["data"]["time"] for p in parts if p["type"] == "finish"), None)
        self.conn.execute("UPDATE messages SET parts = ?, finished_at = ?, updated_at = ? "
                          "WHERE id = ?", (json.dumps(parts), finished, at, mid))

    def close(self) -> None:
        self.conn.close()


CRUSH_SESSION = "6b1f5c1e-0c1a-4c3e-9a55-c0ffee000001"
CRUSH_ASSISTANT = "a1000000-0000-4000-8000-000000000002"
CRUSH_SUBAGENT = f"{CRUSH_ASSISTANT}$$call-task"
MODEL = "claude-sonnet-4-5"


def write_crush(project: Path) -> Path:
    """A Crush project database: one session with calls (one failing, one without its
    result), a subagent session, and a title-generation session."""
    path = project / ".crush" / "crush.db"
    w = CrushWriter(path)
    sid, t = CRUSH_SESSION, SEPT
    w.session(sid, "Fix the build", t, prompt=15000, completion=900, cost=0.12)
    w.message("u1", sid, "user", [crush_part("text", text="please fix the build")], t)
    w.message(CRUSH_ASSISTANT, sid, "assistant", [
        crush_part("reasoning", thinking="Look first.", signature="sig"),
        crush_part("text", text="Cleaning up."),
        crush_call("call-rm", "bash", {"command": "rm -rf build"}),
        crush_call("call-view", "view", {"file_path": "src/app.py"}),
        crush_call("call-false", "bash", {"command": "false"}),
        crush_call("call-task", "agent", {"prompt": "find the tests"}),
        crush_call("call-grep", "grep", {"pattern": "TODO"}),
        crush_finish("tool_use", t + 5)], t + 1, MODEL, "anthropic")
    w.message("r1", sid, "tool", [crush_result("call-rm", "bash", "")], t + 6)
    w.message("r2", sid, "tool", [crush_result("call-view", "view", "print('hi')")], t + 7)
    w.message("r3", sid, "tool", [crush_result("call-false", "bash", "exit 1", True)], t + 8)
    w.message("r4", sid, "tool", [crush_result("call-task", "agent", "tests are in tests/")],
              t + 20)
    w.message("a2", sid, "assistant", [crush_part("text", text="Done."),
                                       crush_finish("end_turn", t + 30)], t + 29, MODEL,
              "anthropic")
    w.session(CRUSH_SUBAGENT, "find the tests", t + 9, parent=sid)
    w.message("su1", CRUSH_SUBAGENT, "user", [crush_part("text", text="find the tests")],
              t + 9)
    w.message("sa1", CRUSH_SUBAGENT, "assistant", [
        crush_call("call-glob", "glob", {"pattern": "tests/**"}),
        crush_finish("tool_use", t + 10)], t + 10, "claude-haiku-4-5", "anthropic")
    w.message("sr1", CRUSH_SUBAGENT, "tool",
              [crush_result("call-glob", "glob", "tests/test_app.py")], t + 11)
    w.session(f"title-{sid}", "Generate a title", t)
    w.message("tt1", f"title-{sid}", "user", [crush_part("text", text="title this")], t)
    w.close()
    return path


# -- OpenCode -----------------------------------------------------------------------------------

OPENCODE_SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE session (
    id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
    directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, share_url TEXT,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_compacting INTEGER,
    time_archived INTEGER);
CREATE TABLE message (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (
    id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""

OC_SESSION = "ses_0f1a2b3c4d5eFixTheBuild01"
OC_CHILD = "ses_0f1a2b3c4d5eFindTheTests1"
OC_DIR = "/work/oc-proj"
MS = SEPT * 1000


def oc_tool(call_id: str, tool: str, arguments: dict[str, Any], status: str,
            output: str | None = None, **more: Any) -> dict[str, Any]:
    state: dict[str, Any] = {"status": status, "input": arguments, "time": {"start": MS}}
    if status == "completed":
        state.update(output=output or "", title=tool, metadata=more.get("metadata", {}),
                     time={"start": MS, "end": MS + 1})
    if status == "error":
        state.update(error=output or "", time={"start": MS, "end": MS + 1})
    return {"type": "tool", "callID": call_id, "tool": tool, "state": state}


class OpenCodeWriter:
    """Writes rows as OpenCode's session service does: a message row upserted with its
    info, each part a row upserted as it streams."""

    def __init__(self, path: Path) -> None:
        self.conn = connect(path)
        self.conn.executescript(OPENCODE_SCHEMA)
        self.conn.execute("INSERT INTO project VALUES ('prj1', ?, 'git', NULL, ?, ?)",
                          (OC_DIR, MS, MS))

    def session(self, sid: str, title: str, at: int, parent: str | None = None) -> None:
        self.conn.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, "
            "time_created, time_updated) VALUES (?, 'prj1', ?, 'slug', ?, ?, '1.0.0', ?, ?)",
            (sid, parent, OC_DIR, title, at, at))

    def message(self, mid: str, sid: str, info: dict[str, Any], at: int) -> None:
        self.conn.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data, "
            "time_updated = excluded.time_updated", (mid, sid, at, at, json.dumps(info)))

    def part(self, pid: str, mid: str, sid: str, data: dict[str, Any], at: int) -> None:
        self.conn.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data",
            (pid, mid, sid, at, at, json.dumps(data)))

    def close(self) -> None:
        self.conn.close()


def oc_user(at: int) -> dict[str, Any]:
    return {"role": "user", "time": {"created": at}, "agent": "build",
            "model": {"providerID": "anthropic", "modelID": MODEL}}


def oc_assistant(at: int, completed: int | None, parent: str, model: str = MODEL,
                 tokens: dict[str, Any] | None = None) -> dict[str, Any]:
    time = {"created": at, **({"completed": completed} if completed else {})}
    return {"role": "assistant", "time": time, "parentID": parent, "modelID": model,
            "providerID": "anthropic", "mode": "build", "agent": "build",
            "path": {"cwd": OC_DIR, "root": OC_DIR}, "cost": 0.01,
            "tokens": tokens or {"input": 0, "output": 0, "reasoning": 0,
                                 "cache": {"read": 0, "write": 0}}}


def write_opencode(data_home: Path) -> Path:
    """An OpenCode database: a session with calls (one failing, one still running: no
    result), token counts, and a subagent session spawned by its ``task`` call."""
    path = data_home / "opencode" / "opencode.db"
    w = OpenCodeWriter(path)
    sid, t = OC_SESSION, MS
    w.session(sid, "Fix the build", t)
    w.message("msg_01", sid, oc_user(t), t)
    w.part("prt_01", "msg_01", sid, {"type": "text", "text": "please fix the build"}, t)
    tokens = {"input": 120, "output": 40, "reasoning": 8, "cache": {"read": 9000, "write": 700}}
    w.message("msg_02", sid, oc_assistant(t + 1000, t + 9000, "msg_01", tokens=tokens),
              t + 1000)
    for n, part in enumerate([
            {"type": "step-start"},
            {"type": "reasoning", "text": "Look first.", "time": {"start": t}},
            {"type": "text", "text": "Cleaning up."},
            oc_tool("call-rm", "bash", {"command": "rm -rf build"}, "completed", ""),
            oc_tool("call-read", "read", {"filePath": "src/app.py"}, "completed",
                    "print('hi')"),
            oc_tool("call-false", "bash", {"command": "false"}, "error", "exit 1"),
            oc_tool("call-task", "task", {"prompt": "find the tests"}, "completed",
                    "tests are in tests/", metadata={"sessionId": OC_CHILD}),
            oc_tool("call-grep", "grep", {"pattern": "TODO"}, "running"),
            {"type": "step-finish", "reason": "tool-calls", "cost": 0.01, "tokens": tokens}]):
        w.part(f"prt_02_{n:02d}", "msg_02", sid, part, t + 1000 + n)
    w.message("msg_03", sid, oc_assistant(t + 20000, t + 21000, "msg_01"), t + 20000)
    w.part("prt_03", "msg_03", sid, {"type": "text", "text": "Done."}, t + 20000)
    w.session(OC_CHILD, "find the tests (@general subagent)", t + 2000, parent=sid)
    w.message("msg_c1", OC_CHILD, oc_user(t + 2000), t + 2000)
    w.part("prt_c1", "msg_c1", OC_CHILD, {"type": "text", "text": "find the tests"}, t + 2000)
    w.message("msg_c2", OC_CHILD, oc_assistant(t + 3000, t + 4000, "msg_c1",
                                               model="claude-haiku-4-5"), t + 3000)
    w.part("prt_c2", "msg_c2", OC_CHILD,
           oc_tool("call-glob", "glob", {"pattern": "tests/**"}, "completed",
                   "tests/test_app.py"), t + 3000)
    w.close()
    return path


# -- Goose --------------------------------------------------------------------------------------

GOOSE_SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY,
    applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user',
    working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, extension_data TEXT DEFAULT '{}',
    total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER,
    accumulated_output_tokens INTEGER, schedule_id TEXT, recipe_json TEXT,
    user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
INSERT INTO schema_version (version) VALUES (6);
"""

GOOSE_SESSION = "20250904_1"
GOOSE_DIR = "/work/goose-proj"


def goose_text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def goose_request(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "toolRequest", "id": call_id,
            "toolCall": {"status": "success", "value": {"name": name, "arguments": arguments}}}


def goose_response(call_id: str, text: str, error: bool = False) -> dict[str, Any]:
    return {"type": "toolResponse", "id": call_id, "toolResult": {
        "status": "success", "value": {"content": [{"type": "text", "text": text}],
                                       "isError": error}}}


class GooseWriter:
    """Writes rows as Goose's session storage does: ``add_message`` appends a row, and
    ``replace_conversation`` deletes a session's rows and inserts them again."""

    def __init__(self, path: Path) -> None:
        self.conn = connect(path)
        self.conn.executescript(GOOSE_SCHEMA)

    def session(self, sid: str, name: str, kind: str = "user", model: str = MODEL) -> None:
        self.conn.execute(
            "INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at,"
            " accumulated_input_tokens, accumulated_output_tokens, accumulated_total_tokens,"
            " provider_name, model_config_json) VALUES (?, ?, ?, ?, '2025-09-04 10:00:00',"
            " '2025-09-04 10:05:00', 12000, 800, 12800, 'anthropic', ?)",
            (sid, name, kind, GOOSE_DIR, json.dumps({"model_name": model})))

    def message(self, sid: str, role: str, content: list[dict[str, Any]], at: int) -> None:
        self.conn.execute(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp, "
            "metadata_json) VALUES (?, ?, ?, ?, ?)",
            (sid, role, json.dumps(content), at,
             json.dumps({"userVisible": True, "agentVisible": True})))

    def replace(self, sid: str) -> None:
        rows = self.conn.execute("SELECT role, content_json, created_timestamp FROM messages "
                                 "WHERE session_id = ? ORDER BY id", (sid,)).fetchall()
        self.conn.execute("BEGIN")
        self.conn.execute("DELETE FROM messages WHERE session_id = ?", (sid,))
        for role, content, at in rows:
            self.conn.execute("INSERT INTO messages (session_id, role, content_json, "
                              "created_timestamp) VALUES (?, ?, ?, ?)", (sid, role, content, at))
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()


def write_goose(data_home: Path) -> Path:
    """A Goose database: a session with calls (one failing, one without its response) and
    a sub-agent session."""
    path = data_home / "goose" / "sessions" / "sessions.db"
    w = GooseWriter(path)
    sid, t = GOOSE_SESSION, SEPT
    w.session(sid, "Fix the build")
    w.message(sid, "user", [goose_text("please fix the build")], t)
    w.message(sid, "assistant", [
        {"type": "thinking", "thinking": "Look first.", "signature": "sig"},
        goose_text("Cleaning up."),
        goose_request("call-rm", "developer__shell", {"command": "rm -rf build"}),
        goose_request("call-view", "developer__text_editor",
                      {"command": "view", "path": "src/app.py"}),
        goose_request("call-false", "developer__shell", {"command": "false"}),
        goose_request("call-grep", "developer__shell", {"command": "rg TODO"})], t + 1)
    w.message(sid, "user", [goose_response("call-rm", ""),
                            goose_response("call-view", "print('hi')"),
                            goose_response("call-false", "exit 1", error=True)], t + 5)
    w.message(sid, "assistant", [goose_text("Done.")], t + 30)
    w.session("20250904_2", "", kind="sub_agent", model="claude-haiku-4-5")
    w.message("20250904_2", "user", [goose_text("find the tests")], t + 10)
    w.close()
    return path


def write_opencode_storage(data_home: Path, database: Path) -> Path:
    """The same sessions as ``database`` in the JSON storage of OpenCode versions before the
    database: ``storage/{session/<project>,message/<session>,part/<message>}/<id>.json``."""
    storage = data_home / "opencode" / "storage"
    conn = sqlite3.connect(f"{database.resolve().as_uri()}?immutable=1", uri=True)
    try:
        for sid, project, parent, directory, title, version, created, updated in conn.execute(
                "SELECT id, project_id, parent_id, directory, title, version, time_created, "
                "time_updated FROM session"):
            info = {"id": sid, "projectID": project, "directory": directory, "title": title,
                    "version": version, "time": {"created": created, "updated": updated},
                    **({"parentID": parent} if parent else {})}
            write_json(storage / "session" / project / f"{sid}.json", info)
        for mid, sid, data in conn.execute("SELECT id, session_id, data FROM message"):
            write_json(storage / "message" / sid / f"{mid}.json",
                       {"id": mid, "sessionID": sid, **json.loads(data)})
        for pid, mid, sid, data in conn.execute(
                "SELECT id, message_id, session_id, data FROM part"):
            write_json(storage / "part" / mid / f"{pid}.json",
                       {"id": pid, "messageID": mid, "sessionID": sid, **json.loads(data)})
    finally:
        conn.close()
    return storage


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


#: The exactness cases (tests/agent_files/<agent>/): a case whose files are databases builds
#: them with its own ``build.py`` (``build(home) -> [files written]``), so that no binary
#: file is kept in git.
AGENT_FILES = Path(__file__).resolve().parent / "agent_files"


def build_home(case: str, home: Path) -> list[Path]:
    """Lay the files a case's ``build.py`` builds in ``home`` (nothing when it has none);
    the files written."""
    import importlib.util

    script = AGENT_FILES / case / "build.py"
    if not script.is_file():
        return []
    spec = importlib.util.spec_from_file_location(f"agent_files_{case.replace('-', '_')}",
                                                  script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written: list[Path] = module.build(home)
    return written
