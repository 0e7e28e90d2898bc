"""What an interpreter's one-liner does to files and processes, as shell forms (domain; stdlib).

``python -c``, ``perl -e``, ``ruby -e``, ``node -e`` (and the same code fed on standard input)
can delete a tree or run a shell command without any shell word saying so.
:func:`interpreter_code` finds the code of such a command line; :func:`code_forms` reads it
and returns what it does as :class:`Form` s: a shell **script** it runs (``os.system``,
``subprocess.run(..., shell=True)``, ``system``, backticks, ``qx``, ``%x``, ``execSync``), or
an **argv** for what it does itself (``shutil.rmtree(P)`` -> ``rm -rf P``, ``os.remove(P)`` ->
``rm P``, ``FileUtils.rm_rf``, ``File::Path::rmtree``, ``fs.rmSync(P, {recursive})``,
``subprocess.run([...])``, ``spawnSync('rm', [...])``). Only literal arguments are read: a
string, a name assigned a string in the same code, ``Path('/')``, ``expanduser('~')``,
``b64decode('...')`` (Python, whose code is parsed by :mod:`ast`; the others by linear regular
expressions over string literals). What is computed at run time is not seen.
"""

from __future__ import annotations

import ast
import base64
import binascii
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Form", "code_forms", "interpreter_code", "language"]

_MAX_CODE = 20_000


@dataclass(frozen=True, slots=True)
class Form:
    """A script the code runs through a shell (``script``) or a command it amounts to
    (``argv``): exactly one is set."""

    script: str | None = None
    argv: tuple[str, ...] | None = None


def language(program: str) -> str | None:
    """``python``, ``perl``, ``ruby`` or ``node`` for an interpreter's program name."""
    name = posixpath.basename(program).lower()
    if re.fullmatch(r"python[0-9.]*|pypy[0-9.]*", name):
        return "python"
    if re.fullmatch(r"perl[0-9.]*", name):
        return "perl"
    if re.fullmatch(r"ruby[0-9.]*|jruby", name):
        return "ruby"
    if name in ("node", "nodejs", "bun", "deno"):
        return "node"
    return None


def interpreter_code(argv: tuple[str, ...]) -> tuple[str, str] | None:
    """``(language, code)`` of ``python -c CODE``, ``perl -e CODE``, ``ruby -e CODE``, ``node
    -e CODE`` (flags joined as ``-Bc``/``-le`` too); None for anything else."""
    lang = language(argv[0]) if argv else None
    if lang is None:
        return None
    flag = {"python": "c", "perl": "eE", "ruby": "e", "node": "ep"}[lang]
    i = 1
    while i < len(argv):
        word = argv[i]
        if word in ("--eval", "--print") and lang == "node":
            return (lang, argv[i + 1]) if i + 1 < len(argv) else None
        if word.startswith("-") and not word.startswith("--") and len(word) > 1:
            if word[-1] in flag:
                return (lang, argv[i + 1]) if i + 1 < len(argv) else None
            if lang == "deno" and word == "eval":
                return (lang, argv[i + 1]) if i + 1 < len(argv) else None
            i += 1
            continue
        if word == "eval" and posixpath.basename(argv[0]) == "deno":
            return (lang, argv[i + 1]) if i + 1 < len(argv) else None
        return None
    return None


def code_forms(lang: str, code: str, depth: int = 0) -> list[Form]:
    """What ``code`` (of ``lang``) runs or deletes, as forms (see the module)."""
    if len(code) > _MAX_CODE or depth > 3:
        return []
    if lang == "python":
        found = _python(code, depth)
        if found is not None:
            return found
    return list(_scan(code))


# -- Python: the syntax tree ---------------------------------------------------------------------

_TREE = {"rmtree"}
_FILE = {"remove", "unlink"}
_DIR = {"rmdir", "removedirs"}
_SHELL = {"system", "popen", "getoutput", "getstatusoutput"}
_SUBPROCESS = {"run", "call", "check_call", "check_output", "Popen"}
_PATHS = {"Path", "PurePath", "PosixPath", "expanduser", "abspath", "realpath", "normpath"}


def _python(code: str, depth: int) -> list[Form] | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: dict[str, str] = {}
    forms: list[Form] = []
    try:
        nodes = list(ast.walk(tree))
    except RecursionError:
        return None
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            value = _py_text(node.value, names)
            if value is not None:
                names[node.targets[0].id] = value
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else (
            func.id if isinstance(func, ast.Name) else "")
        first = _py_text(node.args[0], names) if node.args else None
        receiver = _py_path(func.value, names) if isinstance(func, ast.Attribute) else None
        if name in _TREE and first is not None:
            forms.append(Form(argv=("rm", "-rf", first)))
        elif name in _FILE | _DIR and receiver is not None:  # Path('/x').unlink()
            forms.append(Form(argv=("rm", "-rf", receiver) if name in _DIR else ("rm", receiver)))
        elif name in _FILE and first is not None:
            forms.append(Form(argv=("rm", first)))
        elif name in _DIR and first is not None:
            forms.append(Form(argv=("rmdir", first)))
        elif name in _SHELL and first is not None:
            forms.append(Form(script=first))
        elif name in _SUBPROCESS | {"execvp", "execv", "spawnvp"} and node.args:
            words = _py_words(node.args[-1] if name.startswith(("exec", "spawn")) else
                              node.args[0], names)
            if words:
                forms.append(Form(argv=words))
            elif first is not None:
                forms.append(Form(script=first))
        elif name in ("exec", "eval") and first is not None:
            forms.extend(code_forms("python", first, depth + 1))
    return forms


def _py_text(node: ast.AST, names: dict[str, str]) -> str | None:
    """A literal string (also bytes), a name assigned one, a path or b64decode of one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        value = node.value
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant)
                                                for v in node.values):
        return "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _py_text(node.left, names), _py_text(node.right, names)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else (
            func.id if isinstance(func, ast.Name) else "")
        inner = _py_text(node.args[0], names)
        if inner is None:
            inner = _py_text(func.value, names) if isinstance(func, ast.Attribute) else None
            return inner if name == "decode" else None
        if name in _PATHS:
            return inner
        if name in ("b64decode", "decodebytes", "standard_b64decode"):
            return _b64(inner)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
            node.func.attr == "decode"):
        return _py_text(node.func.value, names)
    return None


def _py_path(node: ast.AST, names: dict[str, str]) -> str | None:
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else (
            func.id if isinstance(func, ast.Name) else "")
        if name in _PATHS:
            return _py_text(node.args[0], names)
    return None


def _py_words(node: ast.AST, names: dict[str, str]) -> tuple[str, ...] | None:
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        words = [_py_text(e, names) for e in node.elts]
        if all(w is not None for w in words):
            return tuple(w for w in words if w is not None)
    return None


def _b64(text: str) -> str | None:
    try:
        return base64.b64decode("".join(text.split()), validate=False).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


# -- Perl, Ruby, JavaScript (and Python that does not parse): string literals ----------------

_LIT = r"""(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")"""
_ARG = rf"""(?:{_LIT}|([$@]?[A-Za-z_]\w*))"""
# Every pattern below starts at a keyword or a word's start and has no two quantifiers that
# can trade the same characters ([\s(]* rather than \s*\(?\s*): linear scans.
#: ``name = 'literal'`` (``$name``, ``my $name``, ``const name``).
_ASSIGN = re.compile(rf"""(?<![\w$])([$]?[A-Za-z_]\w*)[ \t]*=[ \t]*{_LIT}""")
_RUN = re.compile(rf"""\b(?:system|exec|execSync|spawnSync|popen|shell_exec|passthru|
    qx|IO\.popen|Open3\.capture[23e]?)\b[\s(]*{_ARG}""", re.VERBOSE)
_RUN_LIST = re.compile(rf"""\b(?:system|exec|spawn|spawnSync|execFile|execFileSync)\b[\s(]*
    {_LIT}[\s,\[]+(?P<rest>(?:{_LIT}[\s,]*)+)""", re.VERBOSE)
_TREE_CALL = re.compile(rf"""\b(?:rmtree|remove_tree|rm_rf|rm_r|remove_dir|remove_entry|
    remove_entry_secure|rmSync|rmdirSync|rimraf|rimrafSync)\b[\s(]*{_ARG}""", re.VERBOSE)
_FILE_CALL = re.compile(rf"""\b(?:unlink|unlinkSync|rm_f|File\.delete|remove|
    removeSync)\b[\s(]*{_ARG}""", re.VERBOSE)
_ONE_LIT = re.compile(_LIT)
#: Backticks (Perl, Ruby), ``qx{}``, ``%x()``.
_QUOTED_RUN = re.compile(r"`([^`]*)`|\bqx\s?([{(\[/])|%x([{(\[])")
_CLOSE = {"{": "}", "(": ")", "[": "]", "/": "/"}


def _scan(code: str) -> Iterator[Form]:
    names: dict[str, str] = {}
    for found in _ASSIGN.finditer(code):
        names[found[1].lstrip("$")] = _unescape(found[2] if found[2] is not None else found[3])
    for found in _RUN_LIST.finditer(code):
        words = [_unescape(m[1] if m[1] is not None else m[2])
                 for m in _ONE_LIT.finditer(found["rest"] or "")]
        head = _unescape(found[1] if found[1] is not None else found[2])
        yield Form(argv=(head, *words))
    for found in _RUN.finditer(code):
        value = _arg(found, names)
        if value is not None:
            yield Form(script=value)
    for found in _TREE_CALL.finditer(code):
        value = _arg(found, names)
        if value is not None:
            yield Form(argv=("rm", "-rf", value))
    for found in _FILE_CALL.finditer(code):
        value = _arg(found, names)
        if value is not None:
            yield Form(argv=("rm", value))
    for found in _QUOTED_RUN.finditer(code):
        if found[1] is not None:
            yield Form(script=found[1])
            continue
        opener = found[2] or found[3]
        start = found.end()
        end = code.find(_CLOSE[opener], start)
        if end > start:
            yield Form(script=code[start:end])


def _arg(found: re.Match[str], names: dict[str, str]) -> str | None:
    groups = found.groups()
    single, double, name = groups[-3], groups[-2], groups[-1]
    if single is not None:
        return _unescape(single)
    if double is not None:
        return _unescape(double)
    return names.get(name.lstrip("$@")) if name else None


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    escapes = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m[1], m[1]), text)
