"""Per-command forms of the shell normalisation (domain; stdlib): path forms of arguments,
``cd``'s directory, what ``find -delete``/``-exec`` amounts to, ``xargs`` with its input
(:mod:`store.rules.evasion` documents what each sees through).
"""

from __future__ import annotations

import posixpath
import re
import shlex

__all__ = ["directory_after", "find_forms", "path_forms", "xargs_forms"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GLOB_OR_DOTS = re.compile(r"[.*?/\[\]]*[*?.][.*?/\[\]]*|[*?][^/]*|\.\./.*")


def directory_after(target: str, current: str | None) -> str | None:
    if target.startswith("/"):
        return _clean(target)
    if target == "~" or target.startswith("~/"):
        return target
    if current is not None and not target.startswith("-"):
        return _clean(posixpath.join(current, target))
    return None


def _clean(path: str) -> str:
    """An absolute path with ``//``, ``.`` and ``..`` resolved (``/..`` is ``/``)."""
    cleaned = posixpath.normpath("/" + path.lstrip("/")) if path.startswith("/") else (
        posixpath.normpath(path))
    return cleaned


def path_forms(argv: tuple[str, ...], text: str, directory: str | None) -> tuple[str, ...]:
    out = [argv[0]]
    for word in argv[1:]:
        new = word
        if word.startswith("/") and ("//" in word or "/." in word):
            new = _clean(word)
            if word.endswith("/") and new != "/":
                new += "/"
        elif word.startswith("~") and len(word) > 1 and word[1] not in "/+-":
            user, _, rest = word[1:].partition("/")
            if _NAME.fullmatch(user.replace("-", "_")):
                home = "/root" if user == "root" else f"/home/{user}"
                new = _clean(home + ("/" + rest if rest else ""))
        elif (directory is not None and not word.startswith("-")
              and _GLOB_OR_DOTS.fullmatch(word) and _unquoted(word, text)):
            joined = posixpath.join(directory, word)
            new = _clean(joined) if joined.startswith("/") else posixpath.normpath(joined)
        out.append(new)
    return tuple(out)


def _unquoted(word: str, text: str) -> bool:
    """Whether ``word`` stands unquoted in ``text`` (a glob the shell expands)."""
    return re.search(rf"(?:^|[\s;&|(]){re.escape(word)}(?:$|[\s;&|)])", text) is not None


_FIND_NAMES = frozenset({"-name", "-iname"})
_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def find_forms(argv: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The commands ``find`` runs or amounts to: ``-delete`` as ``rm -rf``, ``-exec``'s
    command with ``{}`` replaced (by the start path, or ``PATH/NAME`` with ``-name NAME``)."""
    i = 1
    while i < len(argv) and argv[i] in ("-H", "-L", "-P"):
        i += 1
    paths: list[str] = []
    while i < len(argv) and not argv[i].startswith(("-", "(", "!")):
        paths.append(argv[i])
        i += 1
    expression = argv[i:]
    name = None
    for j, word in enumerate(expression[:-1]):
        if word in _FIND_NAMES and name is None and expression[j + 1] not in ("*", "'*'"):
            name = expression[j + 1]
    targets = [(p.rstrip("/") or "/") if name is None else
               posixpath.join(p, name) for p in (paths or ["."])]
    forms: list[tuple[str, ...]] = []
    if "-delete" in expression:
        forms.extend(("rm", "-rf", t) for t in targets)
    j = 0
    while j < len(expression):
        if expression[j] in _FIND_ACTIONS:
            end = j + 1
            while end < len(expression) and expression[end] not in (";", "+", "\\;"):
                end += 1
            command = expression[j + 1:end]
            if command:
                for target in targets:
                    forms.append(tuple(w.replace("{}", target) for w in command))
            j = end
        j += 1
    return forms[:16]


def xargs_forms(argv: tuple[str, ...], inner: tuple[str, ...], text: str) -> list[tuple[str, ...]]:
    replace_with = None
    for i, word in enumerate(argv[:-1]):
        if word == "-I":
            replace_with = argv[i + 1]
        elif word.startswith("-I") and len(word) > 2:
            replace_with = word[2:]
        elif word == "-i":
            replace_with = "{}"
    if replace_with is not None:
        lines = [line for line in text.split("\n") if line.strip()][:16]
        return [tuple(w.replace(replace_with, line) for w in inner) for line in lines]
    items = text.split("\0") if "-0" in argv or "--null" in argv else shlex_words(text)
    return [inner + tuple(items[:64])] if items else []


def shlex_words(text: str) -> list[str]:
    """The words of ``text`` as xargs reads them (quotes honoured; blanks split)."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()

