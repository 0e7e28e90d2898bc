"""Repair a transcript for replay ("resume"): pure, deterministic, idempotent (domain).

:func:`repair` takes a loaded :class:`~store.core.transcript.Transcript` (results are paired with
calls through its stored ``links``) or a plain sequence of :class:`~store.core.model.Message`
(paired by the one rule of :mod:`store.core.pairing`, as storage pairs them: by id, an id that names
no call making an orphan; id-less results by position within the same turn) and returns a
:class:`Repaired` history in which:

* every tool call has exactly one result, placed right after the message holding the call, in
  call order, carrying ``call_id`` equal to the call's id;
* a call without a result gets a synthesized error result (or, with ``dangling="drop"``, is
  removed, and so is an assistant message that this leaves empty);
* a result without a call is dropped, and duplicate results of one call collapse to the first;
* a call with invalid arguments becomes a :class:`~store.core.model.ToolCall` whose input is
  ``{"_invalid_arguments": <raw text>, "_error": <error kind>}``;
* with ``target`` given, ids the target refuses (missing, empty, repeated in the transcript,
  or in a format it rejects) are remapped deterministically (see :func:`id_problem` and
  :func:`remapped_id`).

Nothing is mutated and no stored row changes: the result is new values. Every change is a
:class:`RepairChange` whose ``kind`` is one of :data:`CHANGE_KINDS`:

``synthesized_result``        a call had no result: an error result was made up for it
``dropped_dangling_call``     a call had no result and ``dangling="drop"`` removed it
``dropped_orphan_result``     a result matched no call: removed
``dropped_duplicate_result``  a second (third ...) result of one call: removed
``moved_result``              a result was not right after its call's message in call order
``relinked_result``           a result carried no id (it was paired by position within its
                              turn): it now carries the call's id
``substituted_arguments``     invalid arguments were replaced (raw text and substitute named)
``renamed_tool``              ``aliases`` renamed a call (its recorded name stays in raw_name)
``unknown_tool``              a call names a tool not in ``tools``: advisory, with the alias
                              that would fix it when there is one (messages are not changed)
``remapped_id``               the target would refuse the call's id: a new one was derived

Repairing twice equals repairing once: the second pass returns equal messages and no change
(``unknown_tool`` is advisory and is reported on every pass while the tool stays unknown).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, get_args

from store.core.arguments import dumps_json
from store.core.errors import ToolArgumentsError, UsageError
from store.core.model import InvalidToolCall, Message, Part, Role, ToolCall, ToolResult
from store.core.pairing import pair_messages
from store.core.transcript import Transcript
from store.replay.targets import TARGETS, Target, id_problem, remapped_id
from store.tools.names import DEFAULT_ALIASES, AliasTable

__all__ = [
    "CHANGE_KINDS",
    "INTERRUPTED_TEXT",
    "ChangeKind",
    "RepairChange",
    "Repaired",
    "repair",
]

ChangeKind = Literal[
    "synthesized_result",
    "dropped_dangling_call",
    "dropped_orphan_result",
    "dropped_duplicate_result",
    "moved_result",
    "relinked_result",
    "substituted_arguments",
    "renamed_tool",
    "unknown_tool",
    "remapped_id",
]
CHANGE_KINDS: tuple[ChangeKind, ...] = get_args(ChangeKind)

#: The content of a synthesized result.
INTERRUPTED_TEXT = "Error: this tool call was interrupted and has no result."

_DEFAULT_TABLE = AliasTable(DEFAULT_ALIASES)

AnyCall = ToolCall | InvalidToolCall
Ref = tuple[int, int]  # (message index in the input, index among its calls / results)


@dataclass(frozen=True, slots=True)
class RepairChange:
    """One change made (or, for ``unknown_tool``, one problem found) by :func:`repair`.

    ``position`` is the input position the change is about (the stored position for a
    ``Transcript``, the index for a sequence); ``call_id`` the call's id in the input (for an
    orphan result, the id it names); ``alias`` the ``(raw name, current name)`` alias that
    would fix an ``unknown_tool``, when there is one.
    """

    kind: ChangeKind
    position: int | None
    call_id: str | None
    detail: str
    alias: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Repaired:
    """A repaired history: its messages, the changes, and where each message came from.

    ``source_positions[i]`` is the input position of the message ``messages[i]`` was cut from
    (``None`` for a message holding only a synthesized result).
    """

    messages: tuple[Message, ...]
    changes: tuple[RepairChange, ...]
    source_positions: tuple[int | None, ...]

    @property
    def changed(self) -> bool:
        """Whether repair changed anything (advisory ``unknown_tool`` findings aside)."""
        return any(change.kind != "unknown_tool" for change in self.changes)

    def of_kind(self, kind: ChangeKind) -> tuple[RepairChange, ...]:
        """The changes of one kind, in order."""
        return tuple(change for change in self.changes if change.kind == kind)


def repair(
    transcript: Transcript | Sequence[Message],
    target: Target | None = None,
    *,
    dangling: Literal["synthesize", "drop"] = "synthesize",
    tools: Iterable[str] | None = None,
    aliases: AliasTable | None = None,
) -> Repaired:
    """A history every provider accepts, with a report of each change (see the module doc).

    ``target`` enables id remapping for that provider; ``dangling`` says what to do with a call
    that has no result; ``tools`` (current names) enables ``unknown_tool`` findings;
    ``aliases`` renames calls (``renamed_tool``) and is used to resolve names against ``tools``.
    """
    if target is not None and target not in TARGETS:
        raise UsageError(f"unknown repair target {target!r}; expected one of {TARGETS}")
    if dangling not in ("synthesize", "drop"):
        raise UsageError(f"dangling must be 'synthesize' or 'drop', got {dangling!r}")
    return _Repair(transcript, target, dangling, tools, aliases).run()


def _label(call: AnyCall, position: int, index: int) -> str:
    return f"call {call.id!r} ({call.name}) at position {position}, call {index}"


class _Repair:
    """One run of :func:`repair` over an indexed copy of the input."""

    def __init__(
        self,
        transcript: Transcript | Sequence[Message],
        target: Target | None,
        dangling: str,
        tools: Iterable[str] | None,
        aliases: AliasTable | None,
    ) -> None:
        if isinstance(transcript, Transcript):
            entries = [(s.position, s.message) for s in transcript.messages]
        else:
            entries = list(enumerate(transcript))
        self.positions = [pos for pos, _ in entries]
        self.messages = [message for _, message in entries]
        self.calls = [m.tool_calls for m in self.messages]
        self.results = [m.tool_results for m in self.messages]
        self.target = target
        self.drop = dangling == "drop"
        self.tools = None if tools is None else frozenset(tools)
        self.aliases = aliases
        self._changes: list[tuple[int, int, RepairChange]] = []  # (message index, seq, change)
        self._at = 0  # the message index changes are being reported for
        if isinstance(transcript, Transcript):
            self.links = self._stored_links(transcript)
        else:
            self.links = pair_messages(self.messages)
        # The first result of each call, in input order; later ones are duplicates.
        self.primary: dict[Ref, Ref] = {}
        for i, results in enumerate(self.results):
            for j in range(len(results)):
                call_ref = self.links.get((i, j))
                if call_ref is not None:
                    self.primary.setdefault(call_ref, (i, j))
        self.kept_results = set(self.primary.values())

    # -- pairing ----------------------------------------------------------------------------

    def _stored_links(self, transcript: Transcript) -> dict[Ref, Ref]:
        index_of = {pos: i for i, pos in enumerate(self.positions)}
        links: dict[Ref, Ref] = {}
        for (rpos, j), (cpos, k) in transcript.links.items():
            ri, ci = index_of.get(rpos), index_of.get(cpos)
            if ri is None or ci is None or j >= len(self.results[ri]) or k >= len(self.calls[ci]):
                continue
            links[(ri, j)] = (ci, k)
        return links

    # -- the run ----------------------------------------------------------------------------

    def run(self) -> Repaired:
        final = self._final_calls()
        out: list[Message] = []
        sources: list[int | None] = []
        id_given: set[int] = set()
        leftover = [self._has_leftover(i) for i in range(len(self.messages))]
        for i, message in enumerate(self.messages):
            self._at = i
            self._report_dropped_results(i)
            parts: list[Part] = []
            k = 0
            for part in message.parts:
                if type(part) is ToolResult:
                    continue
                if type(part) is ToolCall or type(part) is InvalidToolCall:
                    call = final.get((i, k))
                    k += 1
                    if call is not None:
                        parts.append(call)
                    continue
                parts.append(part)
            if parts or not message.parts:
                out.append(Message(message.role, tuple(parts), message.source,
                                   message.message_id, message.extras, message.metadata))
                sources.append(self.positions[i])
            kept = [(k, call) for k, call in enumerate(self.calls[i]) if (i, k) in final]
            if kept:
                self._emit_results(i, kept, final, out, sources, id_given, leftover)
        # The report reads in message order: each message's call changes, then its results.
        changes = tuple(change for _, _, change in sorted(self._changes, key=lambda c: c[:2]))
        return Repaired(tuple(out), changes, tuple(sources))

    def _has_leftover(self, i: int) -> bool:
        """Whether message ``i`` keeps parts of its own once its results are moved out."""
        message = self.messages[i]
        if not message.parts:
            return True
        return any(type(p) is not ToolResult for p in message.parts)

    def _note(self, kind: ChangeKind, position: int | None, call_id: str | None, detail: str,
              alias: tuple[str, str] | None = None) -> None:
        self._changes.append((self._at, len(self._changes),
                              RepairChange(kind, position, call_id, detail, alias)))

    def _report_dropped_results(self, i: int) -> None:
        pos = self.positions[i]
        for j, result in enumerate(self.results[i]):
            if (i, j) in self.kept_results:
                continue
            call_ref = self.links.get((i, j))
            if call_ref is None:
                self._note("dropped_orphan_result", pos, result.call_id,
                           f"result {j} at position {pos} names call {result.call_id!r}"
                           f"{' (' + result.name + ')' if result.name else ''}, which matches "
                           "no call: dropped")
            else:
                ci, k = call_ref
                first = self.primary[call_ref]
                self._note("dropped_duplicate_result", pos, self.calls[ci][k].id,
                           f"result {j} at position {pos} repeats the result of "
                           f"{_label(self.calls[ci][k], self.positions[ci], k)} (kept: result "
                           f"{first[1]} at position {self.positions[first[0]]}): dropped")

    def _final_calls(self) -> dict[Ref, AnyCall]:
        """Each kept call as it is replayed: substituted, renamed, with a usable id."""
        final: dict[Ref, AnyCall] = {}
        originals = {c.id for calls in self.calls for c in calls if c.id}
        taken: set[str] = set()
        for i, calls in enumerate(self.calls):
            pos = self.positions[i]
            self._at = i
            for k, call in enumerate(calls):
                label = _label(call, pos, k)
                if (i, k) not in self.primary and self.drop:
                    self._note("dropped_dangling_call", pos, call.id,
                               f"{label} has no result: dropped (dangling='drop')")
                    continue
                new = self._substitute(call, pos, label)
                new = self._rename(new, pos, label)
                new = self._fix_id(new, pos, k, label, originals, taken)
                final[(i, k)] = new
        return final

    def _substitute(self, call: AnyCall, pos: int, label: str) -> ToolCall:
        if type(call) is ToolCall:
            return call
        assert isinstance(call, InvalidToolCall)
        raw = call.arguments_text
        substitute = {"_invalid_arguments": raw, "_error": call.error_kind}
        try:
            text = dumps_json(substitute)
        except ToolArgumentsError:  # lone surrogates from undecodable bytes: escape them
            raw = raw.encode("utf-8", "backslashreplace").decode("utf-8")
            substitute = {"_invalid_arguments": raw, "_error": call.error_kind}
            text = dumps_json(substitute)
        self._note("substituted_arguments", pos, call.id,
                   f"{label}: arguments are not valid ({call.error_kind}: {call.error_message})"
                   f"; raw text {call.arguments_text!r} replaced by {text}")
        return ToolCall(call.id, call.name, substitute, call.raw_name, text, call.extras,
                        call.source)

    def _rename(self, call: ToolCall, pos: int, label: str) -> ToolCall:
        if self.aliases is not None:
            renamed = self.aliases.apply(call)
            if renamed.name != call.name:
                self._note("renamed_tool", pos, call.id,
                           f"{label}: renamed {call.name!r} -> {renamed.name!r} by alias "
                           f"{call.recorded_name!r} -> {renamed.name!r}")
                call = renamed
        if self.tools is not None and call.name not in self.tools:
            alias = self._suggest(call)
            fix = (f"alias {alias[0]!r} -> {alias[1]!r} would fix it" if alias
                   else "no alias would fix it")
            self._note("unknown_tool", pos, call.id,
                       f"{label}: tool {call.name!r} is not among the offered tools; {fix}",
                       alias)
        return call

    def _suggest(self, call: ToolCall) -> tuple[str, str] | None:
        assert self.tools is not None
        raw = call.recorded_name
        for table in (self.aliases, _DEFAULT_TABLE):
            if table is not None:
                for name in (raw, call.name):
                    current = table.get(name)
                    if current is not None and current in self.tools:
                        return (raw, current)
        lowered = {t.lower(): t for t in sorted(self.tools)}
        if call.name.lower() in lowered:
            return (raw, lowered[call.name.lower()])
        close = difflib.get_close_matches(call.name, sorted(self.tools), n=1, cutoff=0.6)
        return (raw, close[0]) if close else None

    def _fix_id(self, call: ToolCall, pos: int, k: int, label: str, originals: set[str],
                taken: set[str]) -> ToolCall:
        target = self.target
        if target is None:
            return call
        reason = id_problem(call.id, target)
        if reason is None and call.id and call.id in taken:
            reason = "the id is used by an earlier call in this transcript"
        if reason is None:
            if call.id:
                taken.add(call.id)
            return call
        attempt = 0
        new_id = remapped_id(target, pos, k, call.id)
        while new_id in taken or new_id in originals:
            attempt += 1
            new_id = remapped_id(target, pos, k, call.id, attempt)
        taken.add(new_id)
        self._note("remapped_id", pos, call.id,
                   f"{label}: {target} refuses the id ({reason}); replayed as {new_id!r}, and "
                   "its result follows")
        return replace(call, id=new_id)

    def _emit_results(self, i: int, kept: list[tuple[int, AnyCall]],
                      final: Mapping[Ref, AnyCall], out: list[Message],
                      sources: list[int | None], id_given: set[int],
                      leftover: list[bool]) -> None:
        """The results of message ``i``'s calls, in call order, right after it."""
        pos = self.positions[i]
        in_place = self._in_place(i, kept)
        items: list[tuple[int | None, int, ToolResult]] = []
        for k, original in kept:
            call = final[(i, k)]
            label = _label(original, pos, k)
            ref = self.primary.get((i, k))
            if ref is None:
                synth = ToolResult(call.id, INTERRUPTED_TEXT, True, call.recorded_name,
                                   {"synthesized": True}, "repair")
                items.append((None, 0, synth))
                self._note("synthesized_result", pos, original.id,
                           f"{label} has no result: synthesized an error result saying it was "
                           "interrupted")
                continue
            ri, j = ref
            result = self.results[ri][j]
            rpos = self.positions[ri]
            if ref not in in_place:
                self._note("moved_result", rpos, original.id,
                           f"result {j} at position {rpos} of {label} moved to right after its "
                           "call's message, in call order")
            if result.call_id != call.id:
                if result.call_id != original.id:
                    self._note("relinked_result", rpos, original.id,
                               f"result {j} at position {rpos} of {label} named call "
                               f"{result.call_id!r}; it now names {call.id!r}")
                result = replace(result, call_id=call.id)
            items.append((ri, j, result))
        group: list[ToolResult] = []
        container: int | None = None
        last_j = -1
        for ri_opt, j, result in items:
            if group and ri_opt is not None and ri_opt == container and j > last_j:
                group.append(result)
                last_j = j
                continue
            if group:
                self._flush(container, group, out, sources, id_given, leftover)
            group, container, last_j = [result], ri_opt, j
        if group:
            self._flush(container, group, out, sources, id_given, leftover)

    def _flush(self, container: int | None, group: list[ToolResult], out: list[Message],
               sources: list[int | None], id_given: set[int], leftover: list[bool]) -> None:
        if container is None:
            out.append(Message("tool", tuple(group), "repair"))
            sources.append(None)
            return
        origin = self.messages[container]
        role: Role = origin.role if origin.role in ("user", "tool") else "tool"
        message_id = None
        if not leftover[container] and container not in id_given:
            id_given.add(container)
            message_id = origin.message_id
        out.append(Message(role, tuple(group), origin.source, message_id, origin.extras,
                           origin.metadata))
        sources.append(self.positions[container])

    def _in_place(self, i: int, kept: list[tuple[int, AnyCall]]) -> set[Ref]:
        """The results of message ``i``'s calls already right after it, in call order (parts
        that repair drops do not count as being in between)."""
        expected = [self.primary[(i, k)] for k, _ in kept if (i, k) in self.primary]
        found: set[Ref] = set()
        e = 0
        for i2 in range(i + 1, len(self.messages)):
            j = 0
            for part in self.messages[i2].parts:
                if e == len(expected):
                    return found
                if type(part) is not ToolResult:
                    return found
                ref = (i2, j)
                j += 1
                if ref not in self.kept_results:
                    continue
                if ref != expected[e]:
                    return found
                found.add(ref)
                e += 1
            if e == len(expected):
                break
        return found
