"""``sessions show`` on the stdlib driver (issue 39, ``store/db/reading/lite_show.py``) reads
exactly what ``TranscriptStore.load`` / ``session_sources`` / ``session_ancestors`` /
``session_tree`` read on a read-only store, for every stored session, and the command prints
the same lines either way; off its happy path the store answers and words the errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import store
from store.cli import sessions as sessions_cli
from store.cli.main import cli
from store.db.reading.lite_show import open_show


def test_every_session_reads_as_the_store_reads_it(lite_url: str) -> None:
    lite = open_show(lite_url)
    assert lite is not None
    with lite, store.TranscriptStore.open(lite_url, read_only=True) as db:
        ids = [info.session_id for info in db.list_sessions(limit=None)]
        assert len(ids) > 20
        for sid in ids:
            loaded = db.load(sid)
            found = lite.load(sid)
            assert found == loaded, sid
            assert [m.message for m in found] == [m.message for m in loaded], sid
            assert found.session == loaded.session, sid
            assert lite.sources(sid) == db.session_sources(sid), sid
            assert lite.ancestors(sid) == db.session_ancestors(sid), sid
            assert lite.tree(sid) == db.session_tree(sid), sid
            for turns in (1, 2, 3, 7):
                assert lite.load(sid, last_turns=turns) == db.load(sid, last_turns=turns), (
                    sid, turns)
        with pytest.raises(store.SessionNotFound):
            lite.load("no-such-session")


def test_a_family_reads_alike(store_url: str) -> None:
    """Parents, subagents and a loop of links: the same ancestors and tree."""
    url = store_url
    with store.TranscriptStore.open(url) as db:
        db.append("root", [{"role": "user", "content": "go"}])
        for child, parent in (("a", "root"), ("b", "root"), ("a1", "a"), ("x", "y"),
                              ("y", "x")):
            db.append(child, [{"role": "user", "content": child}],
                      parent=store.SessionLink(parent, "subagent"))
        lite = open_show(url)
        assert lite is not None
        with lite:
            for sid in ("root", "a", "b", "a1", "x", "y"):
                assert lite.ancestors(sid) == db.session_ancestors(sid), sid
                assert lite.tree(sid) == db.session_tree(sid), sid
            for turns in (1, 2, 3, 7):
                assert lite.load(sid, last_turns=turns) == db.load(sid, last_turns=turns), (
                    sid, turns)


@pytest.mark.parametrize("argv", [["oh-1"], ["goose"], ["oh-1", "--json"],
                                  ["oh-1", "--redact"], ["oh-1", "--last-turns", "1"]])
def test_the_command_prints_what_the_store_path_prints(lite_url: str, argv: list[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    run = ["sessions", "show", *argv, "--db", lite_url]
    taken = sessions_cli._lite_show(lite_url, argv[0],
                                    int(argv[-1]) if "--last-turns" in argv else None)
    assert taken is not None  # (the stdlib reader answered, it did not decline)
    lite = CliRunner().invoke(cli, run)
    monkeypatch.setattr(sessions_cli, "_lite_show", lambda *_: None)
    stored = CliRunner().invoke(cli, run)
    assert lite.exit_code == stored.exit_code == 0, (lite.output, stored.output)
    assert lite.output == stored.output and lite.output.strip()


def test_an_erased_session_is_explained_by_the_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'gone.sqlite'}"
    with store.TranscriptStore.open(url) as db:
        db.append("gone", [{"role": "user", "content": "x"}])
        db.erase(["gone"], reason="asked")
    done = CliRunner().invoke(cli, ["sessions", "show", "gone", "--db", url])
    assert done.exit_code == 1 and "erase" in done.output.lower()


def test_a_window_moves_back_to_the_call_a_result_answers(store_url: str) -> None:
    """The last turn starts after a call whose result comes inside it: the window starts at
    that call (no result without its call), as the store's windowed load does."""
    url = store_url
    call = {"role": "assistant", "content": None, "tool_calls": [{
        "id": "c1", "type": "function", "function": {"name": "Bash", "arguments": "{}"}}]}
    with store.TranscriptStore.open(url) as db:
        db.append("w", [{"role": "user", "content": "first"}, call,
                        {"role": "user", "content": "second turn"},
                        {"role": "tool", "tool_call_id": "c1", "content": "late"},
                        {"role": "assistant", "content": "done"}])
        lite = open_show(url)
        assert lite is not None
        with lite:
            for turns in (1, 2, 3):
                found = lite.load("w", last_turns=turns)
                assert found == db.load("w", last_turns=turns), turns
            assert [m.position for m in lite.load("w", last_turns=1)] == [1, 2, 3, 4]
            with pytest.raises(store.UsageError):
                lite.load("w", last_turns=0)


@pytest.mark.parametrize("colour", [False, True])
def test_the_transcript_prints_as_richs_print_does(lite_db: Path, colour: bool) -> None:
    """``sessions show`` prints its markup with ``print_markup`` (no wrapping pass): the
    same characters as ``Console.print(text, highlight=False, soft_wrap=True)`` for every
    stored session, with colour and without, and for markup-like text, control
    characters, emoji codes and wide characters."""
    import io

    from rich.console import Console

    from store.cli._common import print_markup, safe_markup

    def printed(text: str, ours: bool) -> str:
        # (emoji=False, as the command line's console: an emoji code is printed as written)
        out = Console(file=io.StringIO(), width=80, force_terminal=colour,
                      color_system="truecolor" if colour else None, soft_wrap=False,
                      emoji=False)
        if ours:
            print_markup(out, text)
        else:
            out.print(text, highlight=False, soft_wrap=True)
        return out.file.getvalue()  # type: ignore[attr-defined]

    with store.TranscriptStore.open(str(lite_db), read_only=True) as db:
        texts = []
        for info in db.list_sessions(limit=None):
            transcript = db.load(info.session_id)
            results = {(c.position, c.index): c.result for c in transcript.calls()}
            lines = []
            for stored in transcript:
                lines.append(f"\n[bold green]#{stored.position} {stored.message.role}"
                             "[/bold green]")
                lines += sessions_cli._part_lines(stored.message, results, stored.position)
            texts.append("\n".join(lines))
    texts += [safe_markup("[bold]not markup[/bold] \x1b[31m red \x07 :smile: 漢字 é\ttab"),
              "[dim]a[/dim]\n\n[yellow]b[/yellow] " + "x" * 300, ""]
    for text in texts:
        assert printed(text, True) == printed(text, False)
