#!/usr/bin/env python3
"""Write docs/cli.md, the command-line reference, from the commands themselves.

Run `.venv/bin/python scripts/cli_reference.py` after changing a command, an option or a help
text; `tests/cli/test_cli_reference.py` fails while docs/cli.md differs from what this writes.
Each command's section is its own `--help`, at a fixed width, so the page reads like the
terminal and never disagrees with it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "docs" / "cli.md"
WIDTH = 100

HEAD = """# Command-line reference

Generated from the commands by `scripts/cli_reference.py` (a test fails when this page is
stale). The names, options and time forms every command shares are in
[vocabulary.md](vocabulary.md); the `--json` shapes in [json/](json/).

"""


def _sections(command: click.Command, path: list[str],
              parent: click.Context | None) -> list[tuple[list[str], str]]:
    ctx = command.make_context(path[-1], [], parent=parent, resilient_parsing=True,
                               terminal_width=WIDTH, max_content_width=WIDTH)
    found = [(path, command.get_help(ctx))]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found += _sections(sub, [*path, name], ctx)
    return found


def render() -> str:
    """The whole page."""
    from store.cli.main import cli

    sections = _sections(cli, ["transcript-store"], None)
    index = "".join(f"- [`{' '.join(p)}`](#{'-'.join(p)})\n" for p, _ in sections[1:])
    body = "".join(f'\n<a id="{"-".join(p)}"></a>\n\n## `{" ".join(p)}`\n\n```text\n'
                   f"{text.rstrip()}\n```\n" for p, text in sections)
    return HEAD + index + body


def main() -> int:
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
