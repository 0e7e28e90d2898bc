"""Shell normalisation: the commands a command line runs that its words do not show (domain;
bashlex, the `rules` extra). Documented in docs/rules.md ("What the normalisation sees").

:func:`unmasked` returns, for a command line, the **normalised simple commands** it also
runs, beyond :func:`store.rules.shell.simple_commands` of the line as written; every rule that
looks at process events (``Image``, ``CommandLine``...) sees them as events of their own, so
each rule matches the normalised forms in addition to the raw text. It sees through:

* **literal expansions**: ``$X``/``${X}`` of a variable assigned a literal earlier in the line
  (``X=/``, ``export``/``declare``/``local``/``readonly``, a ``for`` over one word),
  ``${X:-default}``, ``$IFS`` (a blank), ``$@``/``$*`` (nothing), and command substitutions
  (``$(...)``, backticks) of a literal producer (below): the line is rewritten and parsed
  again;
* **path forms** of an argument: ``//``, ``/./``, ``..`` (``/etc/..`` is ``/``), ``~root``
  (``/root``), ``~user`` (``/home/user``); an unquoted relative wildcard or dot form (``*``,
  ``.``, ``../*``) after ``cd DIR``/``pushd DIR`` is made absolute against ``DIR``;
* **scripts fed to a shell** (``sh``, ``bash``... without ``-c`` or a script file, or with
  ``<(...)`` as the script, ``source <(...)``) and **code fed to an interpreter**: standard
  input from a pipe, a here-string, a here-document or ``< <(...)`` whose text is known: the
  output of a **literal producer**: ``echo``, ``printf`` (``%s``/``%b`` and escapes),
  ``cat`` of a here-string or here-document, piped through ``base64 -d``, ``base32 -d``,
  ``xxd -r -p``, ``rev``;
* ``xargs CMD`` with known input: ``CMD`` with the input's words (``-I R``: in place of R);
* ``find PATH ... -delete`` (``rm -rf PATH``, or ``rm -rf PATH/NAME`` with ``-name NAME``) and
  ``find PATH ... -exec CMD {} ;`` (``CMD`` with ``{}`` replaced the same way);
* interpreters' one-liners (``python -c``, ``perl -e``, ``ruby -e``, ``node -e``):
  :mod:`store.rules.oneliners` (``shutil.rmtree('/')`` is ``rm -rf /``, ``system("...")``
  runs its script).

Multiplexers (``busybox``, ``toybox``) are wrappers in :mod:`store.rules.shell`. Each form is
normalised again (to :data:`_MAX_DEPTH` levels, at most :data:`_MAX_FORMS` forms, scripts of at
most 20,000 characters). :data:`TRIGGERS` are texts one of which a line holds whenever it has
a normalised form (the prefilter evaluates every call whose command holds one).
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from store.rules.commandforms import directory_after, find_forms, path_forms, xargs_forms
from store.rules.oneliners import code_forms, interpreter_code, language
from store.rules.producers import literal_output, literal_stdin, literal_words, produce
from store.rules.shell import SHELLS, SimpleCommand, simple_commands, wrapped_argv

__all__ = ["TRIGGERS", "may_unmask", "unmasked", "unmasked_scripts"]

#: Texts one of which is in every line :func:`unmasked` finds something in (the prefilter's
#: marks, asked of the database); :func:`may_unmask` is the finer test.
TRIGGERS = ("$", "`", "~", "//", "/.", "<<", "<(", "cd", "pushd", "find", "echo", "printf",
            "python", "pypy", "perl", "ruby", "node", "bun", "deno")
#: What a line with a normalised form holds (see :func:`may_unmask`): every pattern scans
#: from a literal and stops at a separator, so the test is linear in the line.
_TRIGGER = re.compile(
    r"(?<!:)//|/\.|<<|<\(|~[A-Za-z_]"                  # path forms, here-documents, <(...)
    r"|\$\{?IFS|\$[@*]|\$\{\w+:?[-=]"                  # $IFS, $@, ${X:-default}
    r"|(?:\$\(|`)\s*(?:echo|printf|cat|base64|base32|xxd|rev)\b"  # a producer substituted
    r"|\bfind\b[^|;&\n]*\s-(?:delete|exec|execdir|ok|okdir)\b"  # find -delete / -exec
    r"|(?:python|pypy|perl|ruby|node|bun|deno)[\w.]*\s[^|;&\n]*?-(?:-eval|-print|\w*[ceEp])\b"
    r"|\bdeno\s+eval\b")
_PRODUCER = re.compile(r"\b(?:echo|printf)\b")
_CONSUMER = re.compile(r"\|[^|\n]*(?:sh\b|xargs|python|pypy|perl|ruby|node|bun|deno)")
_ASSIGNS = re.compile(r"=|\bfor\s")
_CD = re.compile(r"\b(?:cd|pushd)\b")
_GLOBBY = re.compile(r"[*?]|(?<!\S)\.")
_MAX_DEPTH = 4
_QUOTED_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"])([A-Za-z_0-9]+)\2")
_MAX_FORMS = 256
_MAX_TEXT = 20_000
_PASSES = 4
_DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEFAULT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):?[-=](.*)", re.DOTALL)
_IFS = re.compile(r"IFS(?:%\??|:0:1|:0|#\??)?")
_SAFE = re.compile(r"[\w@%+=:,./~-]*")


def may_unmask(line: str) -> bool:
    """Whether ``line`` may have a normalised form (else :func:`unmasked` is empty): a path
    form, a here-document or ``<(...)``, ``$IFS``/``$@``/``${X:-...}``, a literal producer
    substituted, ``find -delete``/``-exec``, an interpreter with ``-c``/``-e``, an assignment
    or ``for`` before a ``$``, ``echo``/``printf`` before a pipe into a shell, an
    interpreter or ``xargs``, ``cd`` before a wildcard or dot form."""
    if _TRIGGER.search(line) is not None:
        return True
    if "$" in line:
        assign = _ASSIGNS.search(line)
        if assign is not None and "$" in line[assign.end():]:
            return True
    produced = _PRODUCER.search(line)
    if produced is not None and _CONSUMER.search(line, produced.end()) is not None:
        return True
    cd = _CD.search(line)
    return cd is not None and _GLOBBY.search(line, cd.end()) is not None


def unmasked(line: str) -> tuple[SimpleCommand, ...]:
    """The normalised simple commands of ``line`` (see the module), none of which is a
    simple command of the line as written; each names the command it came from as its
    parent. A cached, shared tuple."""
    if not may_unmask(line):
        return ()
    return _cached(line)[0]


def unmasked_scripts(line: str) -> tuple[str, ...]:
    """The normalised texts of ``line`` as whole scripts: the line with its expansions done,
    and every script, decoded input and normalised command it runs (for the rules that read
    a call's whole command line, ``ai_agent``/``tool_call``'s ``CommandLine``)."""
    if not may_unmask(line):
        return ()
    return _cached(line)[1]


@functools.lru_cache(maxsize=16_384)
def _cached(line: str) -> tuple[tuple[SimpleCommand, ...], tuple[str, ...]]:
    found = _Found(seen={c.argv for c in simple_commands(line)})
    _forms(line, None, 0, found)
    scripts = dict.fromkeys(s for s in found.scripts if s != line)
    return tuple(found.commands), tuple(scripts)


@dataclass(slots=True)
class _Found:
    seen: set[tuple[str, ...]]
    commands: list[SimpleCommand] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)

    def add(self, command: SimpleCommand) -> bool:
        if command.argv in self.seen or len(self.commands) >= _MAX_FORMS or not command.argv:
            return False
        self.seen.add(command.argv)
        self.commands.append(command)
        return True


def _forms(script: str, parent: SimpleCommand | None, depth: int, found: _Found) -> None:
    """Add the forms of ``script`` (at depth > 0 its simple commands too, under ``parent``)."""
    if depth > _MAX_DEPTH or len(script) > _MAX_TEXT or len(found.commands) >= _MAX_FORMS:
        return
    raw = _adopted(simple_commands(script), parent)
    if depth:
        found.scripts.append(script)
        for command in raw:
            found.add(command)
    if not may_unmask(script):
        return
    # bashlex cannot read a quoted here-document delimiter (<<'EOF'); unquoted, the body
    # reads the same but for expansions, which only add forms
    script = _QUOTED_HEREDOC.sub(r"<<\1\3", script)
    trees = _parse(script)
    expanded = _expand(script, trees) if trees is not None else None
    lists = [raw]
    if expanded is not None:
        found.scripts.append(expanded)
        more = _adopted(simple_commands(expanded), parent)
        for command in more:
            found.add(command)
        lists.append(more)
    for commands in lists:
        _command_forms(commands, depth, found)
    for tree_script, tree in ((script, trees), (expanded, None)):
        if tree_script is None:
            continue
        tree = tree if tree is not None else _parse(tree_script)
        for consumer, text in _fed(tree_script, tree or []):
            _feed(consumer, text, depth, found)


def _adopted(commands: list[SimpleCommand], parent: SimpleCommand | None
             ) -> list[SimpleCommand]:
    if parent is None:
        return list(commands)
    return [c if c.parent_argv else replace(c, parent_argv=parent.argv,
                                              parent_text=parent.text) for c in commands]


def _command_forms(commands: list[SimpleCommand], depth: int, found: _Found) -> None:
    """Per simple command: path forms (and ``cd``), ``find``, interpreter one-liners."""
    directories: dict[str, str | None] = {}  # per script (the parent's text): after cd
    for command in commands:
        argv = command.argv
        name = posixpath.basename(argv[0])
        if name in ("cd", "pushd"):
            target = next((w for w in argv[1:] if not w.startswith("-")), "~")
            directories[command.parent_text] = directory_after(
                target, directories.get(command.parent_text))
            continue
        rewritten = path_forms(argv, command.text, directories.get(command.parent_text))
        if rewritten != argv:
            form = SimpleCommand(rewritten, shlex.join(rewritten), argv, command.text)
            if found.add(form):  # its own forms (find, one-liners) from the rewritten words
                _forms(form.text, command, depth + 1, found)
            continue
        if name == "find":
            for form_argv in find_forms(argv):
                _argv_form(form_argv, command, depth, found)
        code = interpreter_code(argv)
        if code is not None:
            _code(code[0], code[1], command, depth, found)


def _argv_form(argv: tuple[str, ...], parent: SimpleCommand, depth: int,
               found: _Found) -> None:
    _forms(shlex.join(argv), parent, depth + 1, found)


def _code(lang: str, code: str, parent: SimpleCommand, depth: int, found: _Found) -> None:
    for form in code_forms(lang, code):
        if form.script is not None:
            _forms(form.script, parent, depth + 1, found)
        elif form.argv:
            _argv_form(form.argv, parent, depth, found)


def _feed(consumer: SimpleCommand, text: str, depth: int, found: _Found) -> None:
    """``text`` is ``consumer``'s standard input (or its script); a wrapper (``sudo bash``,
    ``busybox sh``) passes it on to the command it runs."""
    argv = consumer.argv
    while posixpath.basename(argv[0]) != "xargs":
        inner = wrapped_argv(argv)
        if not inner:
            break
        argv = inner
    consumer = replace(consumer, argv=argv)
    name = posixpath.basename(argv[0])
    reads_stdin = all(w.startswith("-") and (name not in SHELLS or "c" not in w[1:])
                      for w in argv[1:])  # no script file, no -c
    lang = language(argv[0])
    if name in SHELLS or name in ("source", "."):
        if reads_stdin or len(consumer.argv) == 1:
            _forms(text, consumer, depth + 1, found)
    elif lang is not None:
        if reads_stdin and interpreter_code(consumer.argv) is None:
            _code(lang, text, consumer, depth, found)
    elif name == "xargs":
        inner = wrapped_argv(consumer.argv)
        if inner is None:
            inner = ("echo",)
        for argv in xargs_forms(consumer.argv, inner, text):
            _argv_form(argv, consumer, depth, found)


# -- expansions ----------------------------------------------------------------------------------

def _parse(script: str) -> list[Any] | None:
    if len(script) > _MAX_TEXT:
        return None
    import bashlex  # type: ignore[import-untyped]  # the `rules` extra

    try:
        return list(bashlex.parse(script))
    except Exception:  # noqa: BLE001 - bashlex raises ParsingError, NotImplementedError...
        return None


def _nodes(node: Any) -> Iterator[Any]:
    """``node`` and every node under it, in source order (substitutions included)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children: list[Any] = []
        for attr in ("parts", "list"):
            value = getattr(current, attr, None)
            if isinstance(value, list):
                children.extend(value)
        for attr in ("command", "output"):
            value = getattr(current, attr, None)
            if value is not None and hasattr(value, "kind"):
                children.append(value)
        stack.extend(reversed(children))


def _expand(script: str, trees: list[Any]) -> str | None:
    """``script`` with its literal expansions done (see the module), or None if it has none."""
    text = script
    for _ in range(_PASSES):
        edits = _edits(text, trees)
        if not edits:
            break
        for start, end, value in sorted(edits, reverse=True):
            text = text[:start] + value + text[end:]
        if len(text) > _MAX_TEXT:
            return None
        parsed = _parse(text)
        if parsed is None:
            break
        trees = parsed
    return text if text != script else None


def _edits(text: str, trees: list[Any]) -> list[tuple[int, int, str]]:
    assigned: list[tuple[int, str, str]] = []  # (position, name, value)
    for tree in trees:
        for node in _nodes(tree):
            kind = getattr(node, "kind", "")
            if kind == "assignment" and not getattr(node, "parts", None):
                name, _, value = node.word.partition("=")
                if _NAME.fullmatch(name.rstrip("+")):
                    assigned.append((node.pos[0], name.rstrip("+"), value))
            elif kind == "command":
                words = [p for p in node.parts if p.kind == "word"]
                if words and words[0].word in _DECLARE:
                    for word in words[1:]:
                        name, eq, value = word.word.partition("=")
                        if eq and _NAME.fullmatch(name) and not getattr(word, "parts", None):
                            assigned.append((word.pos[0], name, value))
            elif kind == "for":
                parts = node.parts
                words = [p for p in parts if p.kind == "word"]
                reserved = [p.word for p in parts if p.kind == "reservedword"]
                if len(words) == 2 and "in" in reserved and not getattr(words[1], "parts", None):
                    assigned.append((words[0].pos[0], words[0].word, words[1].word))
    edits: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    for tree in trees:
        for node in _nodes(tree):
            kind = getattr(node, "kind", "")
            if kind not in ("parameter", "commandsubstitution"):
                continue
            start, end = node.pos
            if any(a <= start and end <= b for a, b in taken):
                continue
            if kind == "parameter":
                value = _parameter(node.value, start, assigned)
            else:
                output = literal_output(node.command)
                value = output.rstrip("\n") if output is not None else None
            if value is None:
                continue
            taken.append((start, end))
            edits.append((start, end, value))
    inside = _double_quoted(text, sorted(start for start, _, _ in edits))
    return [(start, end, _quoted(value, start in inside)) for start, end, value in edits]


def _parameter(expression: str, at: int, assigned: list[tuple[int, str, str]]) -> str | None:
    if _IFS.fullmatch(expression):
        return " "
    if expression in ("@", "*"):
        return ""
    default = _DEFAULT.fullmatch(expression)
    name = default[1] if default else expression
    if not _NAME.fullmatch(name):
        return None
    values = [v for p, n, v in assigned if n == name and p < at]
    if values:
        return values[-1]
    if default and "$" not in default[2] and "`" not in default[2]:
        return default[2]
    return None


def _double_quoted(text: str, positions: list[int]) -> set[int]:
    """Which of ``positions`` (sorted) of ``text`` are inside double quotes (one scan)."""
    inside: set[int] = set()
    quote = ""
    i = 0
    for at in positions:
        while i < at:
            ch = text[i]
            if ch == "\\" and quote != "'":
                i += 2
                continue
            if quote:
                if ch == quote:
                    quote = ""
            elif ch in "'\"":
                quote = ch
            i += 1
        if quote == '"':
            inside.add(at)
    return inside


def _quoted(value: str, in_double: bool) -> str:
    """``value`` as text to put where an expansion stood: inside double quotes escaped; else
    split into words at blanks (as the shell does), each quoted when it must be."""
    if in_double:
        return re.sub(r'(["\\$`])', r"\\\1", value)
    return re.sub(r"\S+", lambda m: m[0] if _SAFE.fullmatch(m[0]) else shlex.quote(m[0]),
                  re.sub(r"\s+", " ", value))


def _fed(script: str, trees: list[Any]) -> Iterator[tuple[SimpleCommand, str]]:
    """``(consumer, text)``: commands whose standard input or script is known."""
    for tree in trees:
        for node in _nodes(tree):
            kind = getattr(node, "kind", "")
            if kind == "pipeline":
                out: str | None = None
                for i, part in enumerate(p for p in node.parts if p.kind == "command"):
                    argv = literal_words(part)
                    if argv is None:
                        out = None
                        continue
                    if i and out is not None:
                        yield _simple(part, argv, script), out
                    out = produce(argv, out if i else literal_stdin(part))
            elif kind == "command":
                argv = literal_words(node)
                if argv is None:
                    fed = _script_argument(node)
                    if fed is not None:
                        yield fed
                    continue
                given = literal_stdin(node)
                if given is not None:
                    yield _simple(node, argv, script), given


def _script_argument(node: Any) -> tuple[SimpleCommand, str] | None:
    """``bash <(echo ...)`` / ``source <(...)``: the process substitution is the script."""
    words = [p for p in node.parts if p.kind == "word"]
    if len(words) < 2 or getattr(words[0], "parts", None):
        return None
    name = posixpath.basename(words[0].word)
    if name not in SHELLS and name not in ("source", "."):
        return None
    for word in words[1:]:
        subs = [p for p in getattr(word, "parts", None) or () if p.kind == "processsubstitution"]
        if subs:
            text = literal_output(subs[0].command)
            if text is None:
                return None
            argv = (words[0].word,)
            return SimpleCommand(argv, words[0].word), text
        if not word.word.startswith("-"):
            return None
    return None


def _simple(node: Any, argv: tuple[str, ...], script: str) -> SimpleCommand:
    start, end = node.pos
    return SimpleCommand(argv, script[start:end])


