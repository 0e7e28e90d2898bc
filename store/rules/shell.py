"""A shell command line as the simple commands it runs (bashlex, the `rules` extra's parser).

:func:`simple_commands` parses a command line with bashlex and returns every simple command it
would run, in order: the members of lists (``;``, ``&&``, ``||``, newlines), pipelines,
subshells and groups, ``if``/``for``/``while`` bodies, command and process substitutions
(``$(...)``, ``<(...)``). Wrappers are unwrapped: a shell run with a script (``bash -lc "..."``,
``sh -c``, ``zsh -c``), ``eval`` of one word, and the commands that run another one (``sudo``,
``doas``, ``env``, ``nohup``, ``nice``, ``time``, ``timeout``, ``stdbuf``, ``xargs``,
``exec``, ``command``, the multiplexers ``busybox`` and ``toybox``, ``setsid``, ``chroot``)
give the wrapped command as a child whose parent is the wrapper. Output
and input redirections are kept (``> file`` is a write, ``< file`` a read).

A line bashlex cannot parse (``[[ ... ]]``, arithmetic, an unbalanced quote) falls back to
:mod:`shlex` with punctuation characters: tokens split at the control operators, so the
commands are still found, with their words as ``shlex`` reads them.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Any

__all__ = ["SHELLS", "Redirect", "SimpleCommand", "simple_commands", "wrapped_argv"]

#: The shells whose ``-c SCRIPT`` is parsed again (and whose standard input is a script).
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish", "ash", "mksh", "yash",
                    "busybox-sh"})
_SHELLS = SHELLS
# Wrappers that run the command after their options; the value: options taking an argument.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "time": frozenset({"-f", "-o"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "xargs": frozenset({"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"}),
    "exec": frozenset({"-a"}),
    "command": frozenset(),
    # multiplexers: the applet is the command (busybox rm -rf /)
    "busybox": frozenset(),
    "toybox": frozenset(),
    "setsid": frozenset(),
    "chroot": frozenset({"--userspec", "--groups"}),
}
_TAKES_POSITIONAL = {"timeout": 1, "chroot": 1}  # timeout DURATION COMMAND
_OUTPUT = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_INPUT = frozenset({"<"})
_CONTROL = frozenset({";", "&&", "||", "|", "|&", "&", "(", ")", "\n", ";;"})
_SYNTAX = re.compile(r"[<>()$`\n\\{}!#]|^\s*\[\[")
#: What shlex splits words at (a piece without quotes or backslashes splits the same).
_BLANKS = re.compile("[ \t\r\n]+")
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do",
                       "done", "case", "esac", "function", "select", "time", "coproc", "{",
                       "}", "!", "[["})
_MAX_DEPTH = 8
_MAX_SCRIPT = 20_000  # characters handed to bashlex (pure Python: longer lines fall back)


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection of a simple command: ``kind`` is ``"write"`` or ``"read"``."""

    kind: str
    target: str


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command: its ``argv`` (words as the shell reads them, assignments left out),
    ``text`` (as written), the wrapper that ran it (``parent_argv``/``parent_text``, empty at
    the top) and its redirections."""

    argv: tuple[str, ...]
    text: str
    parent_argv: tuple[str, ...] = ()
    parent_text: str = ""
    redirects: tuple[Redirect, ...] = ()


def simple_commands(line: str) -> list[SimpleCommand]:
    """Every simple command ``line`` runs, wrappers first, then what they wrap (a cached,
    shared list: do not change it)."""
    return _cached(line)


@functools.lru_cache(maxsize=16_384)
def _cached(line: str) -> list[SimpleCommand]:
    out: list[SimpleCommand] = []
    _parse(line, None, out, 0)
    return out


def _plain(script: str) -> list[tuple[tuple[str, ...], str]] | None:
    """The simple commands of a line whose only shell syntax is quoting and the list and pipe
    operators (``&&``, ``||``, ``;``, ``|``, ``&``): the common case, split here with a quote
    scanner and read by :mod:`shlex` (bashlex' parser costs milliseconds a line). ``None`` for
    anything else (redirections, substitutions, expansions, escapes, reserved words,
    assignments), which bashlex parses."""
    if _SYNTAX.search(script):
        return None
    pieces: list[str] = []
    start, quote, i, n = 0, "", 0, len(script)
    while i < n:
        ch = script[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "|&;":
            pieces.append(script[start:i])
            i += 2 if i + 1 < n and ch != ";" and script[i + 1] in "|&" else 1
            start = i
            continue
        i += 1
    if quote:
        return None
    pieces.append(script[start:])
    commands: list[tuple[tuple[str, ...], str]] = []
    for piece in pieces:
        try:
            words = (tuple(w for w in _BLANKS.split(piece) if w)  # shlex's answer, faster
                     if "'" not in piece and '"' not in piece else tuple(shlex.split(piece)))
        except ValueError:
            return None
        if not words:
            continue
        if words[0] in _RESERVED or "=" in words[0]:
            return None
        commands.append((words, piece.strip()))
    return commands


def _parse(script: str, parent: SimpleCommand | None, out: list[SimpleCommand],
           depth: int) -> None:
    if not script.strip():
        return
    plain = _plain(script)
    if plain is not None:
        for words, text in plain:
            _emit(words, text, (), parent, out, depth)
        return
    import bashlex  # type: ignore[import-untyped]  # the `rules` extra (no type hints)

    trees: list[Any] | None = None
    if len(script) <= _MAX_SCRIPT:
        try:
            trees = bashlex.parse(script)
        except Exception:  # bashlex raises ParsingError, NotImplementedError, others
            trees = None
    if trees is None:
        for argv, text in _fallback(script):
            _emit(argv, text, (), parent, out, depth)
        return
    for tree in trees:
        _walk(tree, script, parent, out, depth)


def _walk(node: Any, script: str, parent: SimpleCommand | None, out: list[SimpleCommand],
          depth: int) -> None:
    kind = getattr(node, "kind", "")
    if kind == "command":
        _command(node, script, parent, out, depth)
        return
    if kind in ("commandsubstitution", "processsubstitution"):
        _walk(node.command, script, parent, out, depth)
        return
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or ():
            _walk(child, script, parent, out, depth)
    body = getattr(node, "body", None)  # function definitions
    if body is not None:
        _walk(body, script, parent, out, depth)


def _command(node: Any, script: str, parent: SimpleCommand | None,
             out: list[SimpleCommand], depth: int) -> None:
    words: list[Any] = []
    redirects: list[Redirect] = []
    for part in node.parts:
        kind = part.kind
        if kind == "word":
            words.append(part)
        elif kind == "redirect":
            target = part.output
            if getattr(target, "kind", "") == "word":
                io = "write" if part.type in _OUTPUT else "read" if part.type in _INPUT else ""
                if io and target.word != "/dev/null":
                    redirects.append(Redirect(io, target.word))
        # substitutions inside words and redirect targets run too
        for sub in _substitutions(part):
            _walk(sub, script, parent, out, depth)
    if not words:
        return
    start, end = node.pos
    text = script[start:end]
    argv = tuple(w.word for w in words)
    offsets = tuple(w.pos[0] for w in words)
    _emit(argv, text, tuple(redirects), parent, out, depth,
          lambda i: script[offsets[i]:end])


def _substitutions(node: Any) -> list[Any]:
    found: list[Any] = []
    stack = [node]
    while stack:
        current = stack.pop()
        for attr in ("parts", "output"):
            value = getattr(current, attr, None)
            children = value if isinstance(value, list) else [value] if value is not None else []
            for child in children:
                kind = getattr(child, "kind", "")
                if kind in ("commandsubstitution", "processsubstitution"):
                    found.append(child.command)
                elif kind:
                    stack.append(child)
    return found


def _emit(argv: tuple[str, ...], text: str, redirects: tuple[Redirect, ...],
          parent: SimpleCommand | None, out: list[SimpleCommand], depth: int,
          tail: Any = None) -> None:
    command = SimpleCommand(argv, text, parent.argv if parent else (),
                            parent.text if parent else "", redirects)
    out.append(command)
    if depth >= _MAX_DEPTH:
        return
    name = posixpath.basename(argv[0])
    if name in _SHELLS:
        script = _shell_script(argv)
        if script is not None:
            _parse(script, command, out, depth + 1)
        return
    if name == "eval" and len(argv) == 2:
        _parse(argv[1], command, out, depth + 1)
        return
    if name in _WRAPPERS:
        index = _wrapped_index(name, argv)
        if index is not None:
            inner = argv[index:]
            inner_text = tail(index) if tail is not None else shlex.join(inner)
            _emit(inner, inner_text, (), command, out, depth + 1)


def _shell_script(argv: tuple[str, ...]) -> str | None:
    """The script of ``bash -c SCRIPT`` / ``bash -lc SCRIPT`` / ``sh -ec SCRIPT``."""
    for i, word in enumerate(argv[1:], start=1):
        if word == "--":
            return None
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return argv[i + 1] if i + 1 < len(argv) else None
        if not word.startswith(("-", "+")):
            return None
    return None


def wrapped_argv(argv: tuple[str, ...]) -> tuple[str, ...] | None:
    """The command a wrapper (``sudo``, ``xargs``, ``busybox``...) runs, or None."""
    name = posixpath.basename(argv[0]) if argv else ""
    if name not in _WRAPPERS:
        return None
    index = _wrapped_index(name, argv)
    return argv[index:] if index is not None else None


def _wrapped_index(name: str, argv: tuple[str, ...]) -> int | None:
    takes = _WRAPPERS[name]
    positional = _TAKES_POSITIONAL.get(name, 0)
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "--":
            i += 1
            break
        if name == "env" and "=" in word and not word.startswith("-"):
            i += 1
            continue
        if word.startswith("-") and len(word) > 1:
            i += 2 if word in takes else 1
            continue
        if positional:
            positional -= 1
            i += 1
            continue
        break
    return i if i < len(argv) else None


def _fallback(script: str) -> list[tuple[tuple[str, ...], str]]:
    """Simple commands by :mod:`shlex` tokens split at control operators."""
    lexer = shlex.shlex(script.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: words as whitespace splits them
        tokens = script.split()
    commands: list[tuple[tuple[str, ...], str]] = []
    current: list[str] = []
    test = False  # inside [[ ... ]]: a test, no command
    for token in [*tokens, ";"]:
        if token in ("[[", "]]"):
            test = token == "[["
        elif token in _CONTROL or set(token) <= set(";&|()\n"):
            if current:
                commands.append((tuple(current), shlex.join(current)))
            current = []
        elif not test:
            current.append(token)
    return commands
