"""Issue 13, findings 5 and 6, on both backends: stored text printed to a terminal has its
control characters made visible (tables and plain output; ``--json`` keeps exact values), and
CSV cells a spreadsheet would run as formulas get a leading ``'`` unless ``--keep-formulas``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import store
from store.cli._common import visible
from store.cli.main import cli

ESC = "\x1b"
CLEAR = f"{ESC}[2J"
OSC52 = f"{ESC}]52;c;ZWNobyBwd25lZA==\x07"  # writes the clipboard
TITLE = f"{ESC}]0;owned{ESC}\\title"
SID = f"evil{CLEAR}"


@pytest.fixture
def hostile(store: store.TranscriptStore, store_url: str) -> str:
    store.append(SID, [
        {"role": "user", "content": f"hi {CLEAR}there\u202eevil"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call{ESC}[31m1", "type": "function", "function": {
                "name": f"bash{OSC52}", "arguments": json.dumps({"cmd": f"ls {CLEAR}"})}}]},
        {"role": "tool", "tool_call_id": f"call{ESC}[31m1",
         "content": f"result{OSC52}\r\x9b31mfake prompt $ "},
    ], title=TITLE, provider=f"p{ESC}[5m", model="m")
    return store_url


def run(*args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.output, result.stderr)
    return result.stdout, result.stderr


def assert_inert(text: str) -> None:
    """Nothing a terminal would act on: no C0 control but newline (and tab), no C1, no bidi
    override; the escapes shown instead."""
    bad = [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f
           or c in "\u202e\u202d\u2066\u2067\u2068\u2069"]
    assert bad == [], sorted(set(bad))
    assert "\\x1b" in text


class TestVisible:
    @pytest.mark.parametrize(("raw", "shown"), [
        (CLEAR, "\\x1b[2J"), ("a\rb", "a\\x0db"), ("\x9b1m", "\\x9b1m"), ("\x7f", "\\x7f"),
        ("a\u202eb", "a\\u202eb"), ("line\nnext\ttab", "line\nnext\ttab"), ("plain", "plain"),
        ("\x00", "\\x00"),
    ])
    def test_control_characters_become_visible(self, raw, shown):
        assert visible(raw) == shown


class TestTerminalOutput:
    @pytest.mark.parametrize("args", [
        ["sessions", "list"], ["sessions", "show", SID], ["calls", "search"],
        ["calls", "show", f"{SID}:1.0"], ["tools", "usage"],
    ])
    def test_every_command_shows_control_characters_as_escapes(self, hostile, args):
        out, err = run(*args, "--db", hostile)

        assert_inert(out + err)

    def test_the_repair_report_on_stderr_is_inert(self, hostile):
        out, err = run("export", SID, "--to", "anthropic", "--repair", "--db", hostile)

        assert "repair:" in err
        assert_inert(err)
        json.loads(out)  # JSON output escapes control characters itself

    def test_import_reports_show_file_names_inert(self, hostile, tmp_path):
        bad = tmp_path / f"bad{CLEAR}name.jsonl"
        bad.write_text("{not json\n", encoding="utf-8")

        out, err = run("import", str(bad), "--settle", "0", "-q", "--db", hostile, code=1)

        assert "problem:" in err or "failed:" in err
        assert_inert(out + err)

    def test_an_error_message_is_inert(self, hostile):
        _, err = run("sessions", "show", f"nope{CLEAR}", "--db", hostile, code=1)

        assert err.startswith("error:") and ESC not in err

    @pytest.mark.parametrize("args", [
        ["sessions", "list", "--json"], ["sessions", "show", SID, "--json"],
        ["calls", "search", "--json"], ["calls", "show", f"{SID}:1.0", "--json"],
    ])
    def test_json_output_keeps_the_exact_values(self, hostile, args):
        out, _ = run(*args, "--db", hostile)

        values = list(strings([json.loads(line) for line in out.splitlines()]))
        assert any(ESC in value for value in values)  # decoded exactly, escapes and all
        assert ESC not in out  # ... while the bytes on the terminal are JSON escapes


def strings(value: object):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


class TestCsvFormulas:
    FORMULAS = ["=HYPERLINK(\"https://evil.example\",\"x\")", "+1+cmd|' /C calc'!A0",
                "-2+3", "@SUM(1+1)", "\tTAB", "\rCR"]

    @pytest.fixture
    def formulas(self, store: store.TranscriptStore, store_url: str) -> str:
        calls = [{"id": f"c{i}", "type": "function",
                  "function": {"name": "bash", "arguments": json.dumps({"v": f})}}
                 for i, f in enumerate(self.FORMULAS)]
        results = [{"role": "tool", "tool_call_id": f"c{i}", "content": f}
                   for i, f in enumerate(self.FORMULAS)]
        store.append("=cmd", [{"role": "assistant", "content": None, "tool_calls": calls},
                              *results])
        return store_url

    @staticmethod
    def cells(text: str) -> list[list[str]]:
        return list(csv.reader(io.StringIO(text)))[1:]

    def test_cells_that_start_a_formula_get_a_quote_by_default(self, formulas):
        out, _ = run("export", "--to", "csv", "--db", formulas)

        rows = self.cells(out)
        assert [row[11] for row in rows] == ["'" + f for f in self.FORMULAS]
        assert {row[0] for row in rows} == {"'=cmd"}
        dangerous = [cell for row in rows for cell in row
                     if cell[:1] in ("=", "+", "-", "@", "\t", "\r")]
        assert dangerous == []

    def test_keep_formulas_writes_the_exact_text(self, formulas):
        out, _ = run("export", "--to", "csv", "--keep-formulas", "--db", formulas)

        rows = self.cells(out)
        assert [row[11] for row in rows] == self.FORMULAS
        assert rows[0][0] == "=cmd"

    def test_calls_search_csv_file_is_neutralised_and_owner_only(self, formulas, tmp_path):
        path = tmp_path / "calls.csv"
        run("calls", "search", "--csv", str(path), "--db", formulas)

        with path.open(encoding="utf-8", newline="") as handle:
            rows = self.cells(handle.read())
        assert [row[11] for row in rows] == ["'" + f for f in self.FORMULAS]
        assert Path(path).stat().st_mode & 0o777 == 0o600

    def test_the_library_function_takes_the_same_switch(self, formulas):
        with store.TranscriptStore.open(formulas) as opened:
            safe, exact = io.StringIO(), io.StringIO()
            store.export_calls_csv(opened, None, safe)
            store.export_calls_csv(opened, None, exact, formulas=True)

        assert self.cells(safe.getvalue())[0][11] == "'" + self.FORMULAS[0]
        assert self.cells(exact.getvalue())[0][11] == self.FORMULAS[0]
