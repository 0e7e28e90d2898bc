"""Literal producers: what a command writes when its words say it (domain; bashlex nodes).

:func:`literal_output` of a command or pipeline made of ``echo``, ``printf`` (``%s``/``%b``
and escapes), ``cat`` of a here-string or here-document, and the decoders ``base64 -d``,
``base32 -d``, ``xxd -r -p`` and ``rev`` over such input; :func:`literal_stdin`, a command's
standard input when a here-string, a here-document or ``< <(...)`` gives it. Used by the shell
normalisation (:mod:`store.rules.evasion`) for command substitutions and scripts fed to
shells, interpreters and ``xargs``. Anything else (a file, a variable left, a program run)
is unknown: None.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import posixpath
import re
from typing import Any

__all__ = ["literal_output", "literal_stdin", "literal_words", "produce"]


def literal_words(node: Any) -> tuple[str, ...] | None:
    """A command node's words when all are literal (no expansion left)."""
    words = [p for p in node.parts if p.kind == "word"]
    if not words or any(getattr(w, "parts", None) for w in words):
        return None
    return tuple(w.word for w in words)


def literal_stdin(node: Any) -> str | None:
    """A command's standard input when a redirection gives it literally."""
    for part in node.parts:
        if part.kind != "redirect":
            continue
        target = part.output
        if part.type == "<<<" and getattr(target, "kind", "") == "word" and not getattr(
                target, "parts", None):
            return str(target.word) + "\n"
        if part.type in ("<<", "<<-") and getattr(part, "heredoc", None) is not None:
            body = str(part.heredoc.value)
            return body.rsplit("\n", 1)[0] + "\n" if "\n" in body else ""
        if part.type == "<" and getattr(target, "kind", "") == "word":
            for sub in getattr(target, "parts", None) or ():
                if sub.kind == "processsubstitution":
                    return literal_output(sub.command)
    return None


def literal_output(node: Any) -> str | None:
    """What a command or pipeline of literal producers writes (see the module), else None."""
    kind = getattr(node, "kind", "")
    if kind == "command":
        argv = literal_words(node)
        return produce(argv, literal_stdin(node)) if argv else None
    if kind == "pipeline":
        out: str | None = None
        for i, part in enumerate(p for p in node.parts if p.kind == "command"):
            argv = literal_words(part)
            if argv is None:
                return None
            out = produce(argv, out if i else literal_stdin(part))
            if out is None:
                return None
        return out
    if kind == "list":
        commands = [p for p in node.parts if p.kind != "operator"]
        return literal_output(commands[0]) if len(commands) == 1 else None
    return None


def produce(argv: tuple[str, ...], stdin: str | None) -> str | None:
    name = posixpath.basename(argv[0])
    args = argv[1:]
    if name == "echo":
        escapes = False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            escapes = escapes or "e" in args[0]
            args = args[1:]
        text = " ".join(args)
        return (_escapes(text) if escapes else text) + "\n"
    if name == "printf" and args:
        return _printf(args[0], args[1:])
    if stdin is None:
        return None
    if name == "cat" and not args:
        return stdin
    if name in ("base64", "base32") and any(a in ("-d", "--decode", "-D") or (
            a.startswith("-") and not a.startswith("--") and "d" in a) for a in args):
        return _decode(name, stdin)
    if name == "xxd" and "-r" in args and ("-p" in args or "-ps" in args):
        try:
            return bytes.fromhex("".join(stdin.split())).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
    if name == "rev" and not args:
        return "".join(line[::-1] + "\n" for line in stdin.rstrip("\n").split("\n"))
    return None


def _decode(name: str, text: str) -> str | None:
    data = "".join(text.split())
    try:
        raw = (base64.b64decode(data + "=" * (-len(data) % 4)) if name == "base64"
               else base64.b32decode(data + "=" * (-len(data) % 8)))
        return raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def _escapes(text: str) -> str:
    try:
        return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text


def _printf(form: str, args: tuple[str, ...]) -> str | None:
    values = list(args)
    pieces = re.split(r"(%%|%[sbdq])", form)
    out: list[str] = []
    for piece in pieces:
        if piece == "%%":
            out.append("%")
        elif piece in ("%s", "%d", "%q"):
            out.append(values.pop(0) if values else "")
        elif piece == "%b":
            out.append(_escapes(values.pop(0)) if values else "")
        elif "%" in piece:
            return None
        else:
            out.append(_escapes(piece))
    return "".join(out)

