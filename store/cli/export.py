"""CLI: ``export`` a session as provider-ready history, ``resume`` one repaired (edge layer;
public API only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import orjson

import store
from store.cli._common import (
    count,
    db_option,
    open_store,
    redaction_options,
    redactor_from,
    resolve_session,
    visible,
)
from store.core.depth import deep_dumps


@click.command("export")
@db_option
@click.argument("session_ids", nargs=-1)
@click.option("--to", "target", type=click.Choice([*store.TARGETS, "jsonl", "csv"]),
              required=True,
              help="A provider's request history (one session), canonical JSONL of sessions, "
                   "or CSV of their calls (default: every session).")
@redaction_options
@click.option("--keep-formulas", is_flag=True,
              help="csv: write cells starting with = + - @ tab or CR as they are (by default "
                   "they get a leading ' so that a spreadsheet does not run them).")
@click.option("--repair/--no-repair", "do_repair", default=False,
              help="Provider targets: repair first (dangling calls, orphan and duplicate "
                   "results, invalid arguments, ids the target refuses); the report goes to "
                   "stderr.")
@click.option("--drop-dangling", is_flag=True,
              help="With --repair: drop calls without a result instead of synthesizing one.")
@click.option("--last-turns", type=count(1),
              help="Provider targets: only the last N whole turns.")
@click.option("--tool", "tools", multiple=True,
              help="With --repair: a tool of the current tool set (repeatable): calls to "
                   "others are reported.")
@click.option("--keep-recorded-names", is_flag=True,
              help="Provider targets: call the tools by the names the agent recorded "
                   "(run_shell_command), not by their current names (bash: `aliases list`).")
@click.option("--include-tools", is_flag=True,
              help="Provider targets: add the tool definitions recorded with the session, "
                   "in the request's own field (tools; toolConfig for bedrock).")
def export_command(db_url: str | None, session_ids: tuple[str, ...], target: str,
                   redact: bool, patterns: tuple[str, ...], keep_formulas: bool,
                   do_repair: bool, drop_dangling: bool, last_turns: int | None,
                   tools: tuple[str, ...], keep_recorded_names: bool,
                   include_tools: bool) -> None:
    """Write sessions to stdout: one as a provider's request history (JSON), or canonical
    JSONL of messages (``--to jsonl``), or CSV of calls (``--to csv``). ``--redact`` applies
    to every target. An option that cannot apply to the target is refused."""
    redactor = redactor_from(redact, patterns)
    if keep_formulas and target != "csv":
        raise click.UsageError("--keep-formulas applies to --to csv only")
    if target in ("jsonl", "csv"):
        given = [name for name, value in (("--repair", do_repair),
                                          ("--drop-dangling", drop_dangling),
                                          ("--last-turns", last_turns), ("--tool", tools),
                                          ("--keep-recorded-names", keep_recorded_names),
                                          ("--include-tools", include_tools))
                 if value]
        if given:
            raise click.UsageError(f"{', '.join(given)} apply to provider targets, "
                                   f"not --to {target}")
        _export_records(db_url, session_ids, target, redactor, keep_formulas)
        return
    if (drop_dangling or tools) and not do_repair:
        raise click.UsageError("--drop-dangling and --tool apply with --repair only")
    if len(session_ids) != 1:
        raise click.UsageError(f"--to {target} exports exactly one session")
    write_history(db_url, session_ids[0], target, redactor, do_repair=do_repair,
                  drop_dangling=drop_dangling, last_turns=last_turns, tools=tools,
                  recorded=keep_recorded_names, include_tools=include_tools)


@click.command("resume")
@db_option
@click.argument("session_id")
@click.option("--to", "target", type=click.Choice([*store.TARGETS, *store.AGENT_TARGETS]),
              required=True,
              help="The provider whose request history to write, or the agent whose own "
                   "session file to write (claude-code, codex).")
@redaction_options
@click.option("--no-repair", "no_repair", is_flag=True,
              help="Write the history as stored; refuse (exit 1) when the provider would "
                   "refuse it.")
@click.option("--drop-dangling", is_flag=True,
              help="Drop calls without a result instead of synthesizing one.")
@click.option("--last-turns", type=count(1), help="Only the last N whole turns.")
@click.option("--tool", "tools", multiple=True,
              help="A tool the resuming agent has (repeatable): calls to others are reported.")
@click.option("--current-names", is_flag=True,
              help="Call the tools by their current names in the store's vocabulary (bash: "
                   "`aliases list`), not by the names the agent recorded.")
@click.option("--include-tools", is_flag=True,
              help="Add the tool definitions recorded with the session, in the request's own "
                   "field (tools; toolConfig for bedrock).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Agent targets: write the session file into this folder (it must exist) "
                   "instead of the agent's own folder.")
@click.option("--id", "new_id", metavar="UUID",
              help="Agent targets: the written session's id (default: a new random UUID).")
def resume_command(db_url: str | None, session_id: str, target: str, redact: bool,
                   patterns: tuple[str, ...], no_repair: bool, drop_dangling: bool,
                   last_turns: int | None, tools: tuple[str, ...], current_names: bool,
                   include_tools: bool, out: Path | None, new_id: str | None) -> None:
    """Write a stored session as the request history to resume it with a provider (stdout),
    or as an agent's own session file to continue it in that agent.

    \b
    Repaired by default so the provider accepts it (dangling calls get a result, orphan and
    duplicate results go, invalid arguments and ids the target refuses are fixed); every
    change is reported on stderr and the stored rows never change. The tools keep the names
    the agent recorded (--current-names: the store's vocabulary). Example:
      transcript-store resume 3f2a --to anthropic > history.json

    \b
    --to claude-code / codex writes the session as that agent's own session file under a new
    id (its folder: $CLAUDE_CONFIG_DIR or ~/.claude/projects/<project>/, $CODEX_HOME or
    ~/.codex/sessions/YYYY/MM/DD/; or --out DIR), never over an existing file, the tools in
    the agent's own names and argument shapes; prints the file and the agent's resume
    command, and on stderr what came over exactly, was translated, dropped or repaired:
      transcript-store resume 3f2a --to codex
    """
    if no_repair and (drop_dangling or tools):
        raise click.UsageError("--drop-dangling and --tool apply to the repair: not with "
                               "--no-repair")
    if target in store.AGENT_TARGETS:
        given = [name for name, value in (("--no-repair", no_repair),
                                          ("--current-names", current_names),
                                          ("--include-tools", include_tools)) if value]
        if given:
            raise click.UsageError(f"{', '.join(given)} apply to provider targets, not "
                                   f"--to {target} (an agent's file is always repaired, its "
                                   "tools in the agent's own names)")
        from store.cli.native import write_native

        write_native(db_url, session_id, target, redactor_from(redact, patterns),
                     drop_dangling=drop_dangling, last_turns=last_turns, tools=tools,
                     out=out, new_id=new_id)
        return
    if out is not None or new_id is not None:
        raise click.UsageError(f"--out and --id apply to agent targets "
                               f"({', '.join(store.AGENT_TARGETS)}), not --to {target}")
    write_history(db_url, session_id, target, redactor_from(redact, patterns),
                  do_repair=not no_repair, drop_dangling=drop_dangling,
                  last_turns=last_turns, tools=tools, recorded=not current_names,
                  include_tools=include_tools)


def write_history(db_url: str | None, session_id: str, target: str,
                  redactor: store.Redactor | None, *, do_repair: bool, drop_dangling: bool,
                  last_turns: int | None, tools: tuple[str, ...], recorded: bool,
                  include_tools: bool) -> None:
    """One session as ``target``'s request history on stdout (``export --to PROVIDER`` and
    ``resume``): redacted first, repaired (the report on stderr) or refused when the target
    would refuse it, the tools by their recorded or current names."""
    with open_store(db_url, read_only=True) as opened:
        session_id = resolve_session(opened, session_id)
        transcript = opened.load(session_id, last_turns=last_turns)
        aliases = opened.aliases()
        definitions = opened.tool_definitions(session_id) if include_tools else []
    redactions = 0
    if redactor is not None:  # before repair, so that its report holds no secret either
        transcript, redactions = store.redact_transcript(transcript, redactor)
    if do_repair:
        repaired = store.repair(transcript, target,  # type: ignore[arg-type]
                                dangling="drop" if drop_dangling else "synthesize",
                                tools=tools or None, aliases=aliases)
        for change in repaired.changes:
            where = f"message {change.position}" if change.position is not None else "-"
            click.echo(visible(f"repair: {change.kind} ({where}): {change.detail}"), err=True)
        messages = list(repaired.messages)
    else:
        refused = [change for change in store.repair(
            transcript, target, tools=tools or None,  # type: ignore[arg-type]
            aliases=aliases).changes if change.kind in _REFUSED]
        if refused:  # the target would refuse the body: say why, write nothing
            for change in refused:
                where = f"message {change.position}" if change.position is not None else "-"
                click.echo(visible(f"problem: {change.kind} ({where}): {change.detail}"),
                           err=True)
            raise click.ClickException(
                f"{len(refused)} problem(s) that {target} would refuse; `resume` repairs them, "
                "or export with --repair (the report goes to stderr)")
        messages = [stored.message for stored in transcript]
    if recorded:
        messages = store.recorded_names(messages)
    payload = store.render(messages, target)  # type: ignore[arg-type]
    if definitions:
        agent = transcript.session.agent
        payload[store.TOOLS_FIELD[target]] = store.render_tools(  # type: ignore[index]
            definitions, target,  # type: ignore[arg-type]
            None if recorded else (lambda raw: aliases.display_name(raw, agent)))
    try:
        text = orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # integers beyond 64 bits, deep nesting: the stdlib writes them exactly
        try:
            text = json.dumps(payload, indent=2, ensure_ascii=False)
        except RecursionError:  # nested over the limit, stored before the depth rule
            text = deep_dumps(payload)
    sys.stdout.write(text + "\n")
    if redactor is not None:
        click.echo(f"{redactions} secrets redacted", err=True)


#: Repair findings that mean the target refuses the history as stored (not cosmetic renames).
_REFUSED = frozenset({"synthesized_result", "dropped_dangling_call", "dropped_orphan_result",
                      "dropped_duplicate_result", "moved_result", "relinked_result",
                      "substituted_arguments", "unknown_tool", "remapped_id"})


def _export_records(db_url: str | None, session_ids: tuple[str, ...], target: str,
                    redactor: store.Redactor | None, keep_formulas: bool) -> None:
    with open_store(db_url, read_only=True) as opened:
        session_ids = tuple(resolve_session(opened, sid) for sid in session_ids)
        if target == "jsonl":
            stats = store.export_jsonl(opened, session_ids or None, sys.stdout,
                                       redactor=redactor)
            click.echo(f"{stats.records} messages of {stats.sessions} sessions, "
                       f"{stats.redactions} secrets redacted", err=True)
            return
        total = 0
        redacted = 0
        for sid in session_ids or (None,):
            stats = store.export_calls_csv(opened, store.CallQuery(session_id=sid), sys.stdout,
                                           redactor=redactor, formulas=keep_formulas)
            total += stats.records
            redacted += stats.redactions
        click.echo(f"{total} calls, {redacted} secrets redacted", err=True)

#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [export_command, resume_command]
