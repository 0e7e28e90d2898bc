"""The floor of the read commands (``bench/scale.py``; SQLite): the same question asked by
a user's own script, a fresh Python process with the stdlib ``sqlite3`` module and plain SQL
of its own on the store's file (opened read-only), its rows written to stdout as tab-separated
text. Its time is the interpreter's start-up, the query and the output, the least any command
line can cost for that answer: what the issue compares with ("24 ms: a process running the
same FTS5 query").

Where the store keeps a summary or an index for the question, the plain SQL does not use it
(it reads the rows a user's script would read: a whole year's usage rows for ``usage
daily``); where the question is a full-text one, it asks the store's own FTS5 tables, which
are the floor of any full-text answer (``bm25`` over every match of a common word). Reads
with no row here have no plain counterpart worth the name (a tree of sessions, the aliases).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: The floor process: each statement's rows written out.
_PROGRAM = """
import sqlite3, sys, json
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
write = sys.stdout.write
for sql, params in json.loads(sys.argv[2]):
    for row in db.execute(sql, params):
        write("\\t".join(map(str, row)) + "\\n")
"""

_USAGE_SUMS = ("sum(u.input_tokens), sum(u.output_tokens), sum(u.cache_creation_tokens), "
               "sum(u.cache_read_tokens), count(*)")
_RANKED = ("SELECT rowid, bm25(message_fts, 1.0, 0.0) AS score, snippet(message_fts, 0, '[', "
           "']', '…', 24) FROM message_fts WHERE message_fts MATCH ? ORDER BY score LIMIT 20")


def floor_statements(rare: str, command: str, common: str, sid: str
                     ) -> dict[str, list[tuple[str, list[Any]]]]:
    """The plain statements per read label of ``scale_home.read_commands`` (``rare``: the rare
    phrase, ``command``: the command text, ``common``: the common word, ``sid``: a session)."""
    phrase = '"' + rare.replace('"', '""') + '"'
    # (the trigram index answers LIKE: a call's text or its result's)
    hits = "SELECT rowid FROM search_fts WHERE body LIKE ?"
    calls_text = [
        (f"SELECT count(*) FROM ({hits})", [f"%{rare}%"]),
        ("SELECT c.session_id, c.position, c.call_index, c.raw_name, c.wire_json, "
         "r.content_json FROM tool_calls AS c LEFT JOIN tool_results AS r ON r.session_id = "
         "c.session_id AND r.call_position = c.position AND r.call_index = c.call_index "
         f"WHERE c.search_id IN ({hits}) OR r.search_id IN ({hits}) LIMIT 50",
         [f"%{rare}%", f"%{rare}%"])]
    every_command = [
        ("SELECT c.session_id, c.position, c.call_index, c.raw_name, c.wire_json, "
         "r.content_json, r.is_error FROM call_views AS v JOIN tool_calls AS c ON "
         "c.session_id = v.session_id AND c.position = v.position AND c.call_index = "
         "v.call_index LEFT JOIN tool_results AS r ON r.session_id = c.session_id AND "
         "r.call_position = c.position AND r.call_index = c.call_index "
         "WHERE v.view = 'command' AND v.text LIKE ?", [f"%{command}%"])]
    tools = [("SELECT raw_name, count(*), count(DISTINCT session_id) FROM tool_calls "
              "GROUP BY raw_name ORDER BY 2 DESC", [])]
    by_day = [(f"SELECT substr(m.created_at, 1, 10) AS day, u.model, {_USAGE_SUMS} "
               "FROM message_usage AS u JOIN messages AS m ON m.session_id = u.session_id "
               "AND m.position = u.position GROUP BY day, u.model ORDER BY day", [])]
    word = f'body : ("{common}")'
    return {
        "calls search --text": calls_text,
        "calls search --command (all hits)": every_command,
        "calls search --command (all hits, table)": every_command,
        "tools usage": tools,
        "sessions list": [
            ("SELECT count(*) FROM sessions", []),
            ("SELECT session_id, last_activity_at, title, agent, model, next_position, cwd "
             "FROM sessions ORDER BY last_activity_at DESC LIMIT 50", [])],
        "sessions show ID": [
            ("SELECT position, role, created_at, text, parts_json FROM messages "
             "WHERE session_id = ? ORDER BY position", [sid]),
            ("SELECT position, result_index, content_json FROM tool_results "
             "WHERE session_id = ?", [sid])],
        "usage daily": by_day,
        "usage session": [(f"SELECT u.session_id, u.model, {_USAGE_SUMS} FROM message_usage "
                           "AS u GROUP BY u.session_id, u.model", [])],
        "search (a rare phrase)": [(_RANKED, [f"body : ({phrase})"])],
        "search (a common word, best 20)": [(_RANKED, [word])],
        "search (a common word, tool parts)": [(_RANKED, [f'{word} AND role : "tool"'])],
    }


def floor_ms(db_file: Path, statements: list[tuple[str, list[Any]]], repeat: int
             ) -> dict[str, float]:
    """The median wall time of the floor process over ``repeat`` runs, and its output's
    lines."""
    runs = []
    lines = 0
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _PROGRAM, str(db_file),
                               json.dumps(statements)], capture_output=True, check=True)
        runs.append(time.perf_counter() - started)
        lines = done.stdout.count(b"\n")
    return {"median_ms": statistics.median(runs) * 1000, "out_lines": lines}
