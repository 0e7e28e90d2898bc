"""Conditions on a call's arguments and on its argument views, the same on both backends.

:class:`ArgumentCondition` names a place in the arguments by a **path**: object keys and array
indexes, written ``options.mode``, ``files[0]``, ``edits[1].old_string``, or with a key quoted
as a JSON string when it holds any other character (``"a.b"``, ``"C:\\\\dir"``,
``meta."x\\u0001y"``), or given as a tuple of keys (``str``) and indexes (``int``). A key step
matches only an object member, an index step only an array element (``files.0`` is the key
``"0"``, never the first element: write ``files[0]``).

Operators: ``eq`` (the JSON value there equals ``value``: numbers by exact value, so ``1 ==
1.0`` and integers of any size are exact; objects whatever their key order; strings exactly),
``contains`` (a string there contains ``value``), ``icontains`` (the same, ignoring case:
Unicode lower case on both backends), ``regex`` (a string there matches the regular
expression ``value``: keep to the syntax Python's ``re`` and PostgreSQL's ``~`` share).

SQL (``sql_condition``): PostgreSQL walks the path with ``jsonb_path_query_first`` in strict
mode (a key step on an array is no match, not lax unwrapping), and compares with jsonb
equality (numeric: exact); the GIN index pre-filters equality with ``@>``. SQLite walks it with
``->`` / ``json_extract`` on a JSON path whose labels are written as the stored text escapes
them (so keys with ``\\`` or control characters match); a key holding ``"`` (which SQLite's
paths cannot quote) and exact number and container comparison go through functions registered
on every connection (``json_at``, ``json_same`` of ``store.core.jsonexact``; Python's ``Decimal``
for numbers).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson

from store.core.arguments import dumps_json, loads_json
from store.core.errors import UsageError
from store.db.index.search_schema import like_pattern

if TYPE_CHECKING:  # (the conditions are built without SQLAlchemy: store.audit.lite_search)
    from sqlalchemy.sql.elements import TextClause

__all__ = [
    "ArgumentCondition",
    "ViewCondition",
    "format_path",
    "parse_path",
    "view_params",
    "view_sql",
]

Op = Literal["eq", "contains", "icontains", "regex"]
_OPS = ("eq", "contains", "icontains", "regex")
_TEXT_OPS = ("contains", "icontains", "regex")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_\-]+")
_SAFE_INT = 2**53


def parse_path(path: str) -> tuple[str | int, ...]:
    """``a.b[0]."c.d"`` -> ``("a", "b", 0, "c.d")``; ``UsageError`` naming the problem."""
    steps: list[str | int] = []
    i, n = 0, len(path)
    expect_key = True
    while i < n:
        ch = path[i]
        if ch == "[":
            end = path.find("]", i)
            number = path[i + 1:end] if end > 0 else ""
            if not number.isdigit():
                raise UsageError(f"bad array index in argument path {path!r} at {i}")
            steps.append(int(number))
            i = end + 1
            expect_key = False
            continue
        if ch == ".":
            if expect_key:
                raise UsageError(f"empty key in argument path {path!r} at {i}")
            i += 1
            expect_key = True
            if i >= n:
                raise UsageError(f"argument path {path!r} ends with '.'")
            continue
        if not expect_key:
            raise UsageError(f"expected '.' or '[' in argument path {path!r} at {i}")
        if ch == '"':
            try:
                key, end = json.JSONDecoder().raw_decode(path, i)
            except ValueError:
                raise UsageError(f"bad quoted key in argument path {path!r} at {i}") from None
            if not isinstance(key, str):  # pragma: no cover - raw_decode of '"' is a str
                raise UsageError(f"bad quoted key in argument path {path!r}")
            steps.append(key)
            i = end
        else:
            j = i
            while j < n and path[j] not in ".[":
                j += 1
            key = path[i:j]
            if '"' in key:
                raise UsageError(f"quote the key in argument path {path!r}: \"...\"")
            steps.append(key)
            i = j
        expect_key = False
    if not steps:
        raise UsageError("an argument path needs at least one key")
    return tuple(steps)


def format_path(steps: tuple[str | int, ...]) -> str:
    """The path syntax of ``steps`` (keys quoted when they need it)."""
    out = []
    for step in steps:
        if isinstance(step, int):
            out.append(f"[{step}]")
        else:
            key = step if _PLAIN_KEY.fullmatch(step) else orjson.dumps(step).decode()
            out.append(("." if out else "") + key)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class ArgumentCondition:
    """A condition on a call's arguments (valid calls only); see the module docstring.

    ``path``: a path string or a tuple of keys and indexes. ``op``: ``eq``, ``contains``,
    ``icontains`` or ``regex``; the text operators need a non-empty string ``value``.
    """

    path: str | tuple[str | int, ...]
    op: Op = "eq"
    value: Any = None

    def __post_init__(self) -> None:
        if isinstance(self.path, str):
            steps = parse_path(self.path)
        else:
            steps = tuple(self.path)
            if not steps or not all(
                (isinstance(s, str) and s) or (type(s) is int and s >= 0) for s in steps
            ):
                raise UsageError("an argument path needs non-empty keys and indexes >= 0, "
                                 f"got {self.path!r}")
        if any(isinstance(s, str) and not s for s in steps):
            raise UsageError(f"an argument path needs non-empty keys, got {self.path!r}")
        object.__setattr__(self, "path", steps)
        if self.op not in _OPS:
            raise UsageError(f"an argument condition is one of {', '.join(_OPS)}, "
                             f"got {self.op!r}")
        if self.op in _TEXT_OPS and (not isinstance(self.value, str) or not self.value):
            raise UsageError(f"{self.op!r} needs a non-empty string value")
        if self.op == "regex":
            _check_regex(self.value)
        try:
            dumps_json(self.value)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"an argument condition needs a JSON value: {exc}") from None

    @classmethod
    def parse(cls, spec: str, op: Op = "eq") -> ArgumentCondition:
        """A condition written ``PATH=VALUE`` (the CLI's ``--where`` / ``--contains`` and the
        viewer's form; a quoted key may hold ``=``: ``"a=b"=1``).

        With ``eq`` the value is read as JSON when it is JSON (``30``, ``true``, ``null``,
        ``"x"``, ``[...]``; integers exact) and as the text itself otherwise; the other
        operators take the text. Raises :class:`UsageError` naming what is wrong.
        """
        path, sep, raw = _split_spec(spec)
        if not sep:
            raise UsageError(f"expected PATH=VALUE, got {spec!r}")
        value: Any = raw
        if op == "eq":
            try:
                value = loads_json(raw)
            except ValueError:
                value = raw
        return cls(path.strip(), op, value)

    @property
    def keys(self) -> tuple[str | int, ...]:
        return self.path  # type: ignore[return-value]  # a tuple after __post_init__


def _split_spec(spec: str) -> tuple[str, str, str]:
    """PATH=VALUE at the first '=' outside a quoted key."""
    i, n = 0, len(spec)
    while i < n:
        if spec[i] == '"':
            try:
                _, i = json.JSONDecoder().raw_decode(spec, i)
            except ValueError:
                return spec.partition("=")
            continue
        if spec[i] == "=":
            return spec[:i], "=", spec[i + 1:]
        i += 1
    return spec, "", ""


@dataclass(frozen=True, slots=True)
class ViewCondition:
    """A condition on an argument view (``command``, ``path``, ``pattern``, ``url``): the
    view contains ``value`` (``contains``; ``icontains`` ignoring case) or matches the regular
    expression (``regex``)."""

    view: str
    value: str
    op: Literal["contains", "icontains", "regex"] = "contains"

    def __post_init__(self) -> None:
        from store.tools.vocabulary import VIEW_NAMES

        if self.view not in VIEW_NAMES:
            raise UsageError(f"an argument view is one of {', '.join(VIEW_NAMES)}, "
                             f"got {self.view!r}")
        if not isinstance(self.value, str) or not self.value:
            raise UsageError(f"a {self.view} condition needs a non-empty text")
        if self.op not in _TEXT_OPS:
            raise UsageError(f"a view condition is one of {', '.join(_TEXT_OPS)}, "
                             f"got {self.op!r}")
        if self.op == "regex":
            _check_regex(self.value)


def _check_regex(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"not a regular expression: {pattern!r} ({exc})") from None


# -- SQL --------------------------------------------------------------------------------------


def _sqlite_path(steps: tuple[str | int, ...]) -> str | None:
    """SQLite JSON path, labels as the stored text escapes them; ``None`` when a key holds
    ``"`` (SQLite cannot quote it)."""
    out = ["$"]
    for step in steps:
        if isinstance(step, int):
            out.append(f"[{step}]")
            continue
        label = orjson.dumps(step).decode()[1:-1]
        if '"' in label:
            return None
        out.append(f'."{label}"')
    return "".join(out)


def _pg_jsonpath(steps: tuple[str | int, ...]) -> str:
    parts = ["strict $"]
    for step in steps:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        else:
            parts.append("." + json.dumps(step, ensure_ascii=True))
    return "".join(parts)


def sql_condition(dialect: str, number: int, condition: ArgumentCondition,
                  column: str = "tool_calls.arguments") -> TextClause:
    """The SQL of an argument condition for ``dialect`` (bound parameters named by
    ``number``)."""
    from sqlalchemy import text

    steps, value, op = condition.keys, condition.value, condition.op
    p, v = f"arg_path_{number}", f"arg_value_{number}"
    if dialect == "postgresql":
        node = f"jsonb_path_query_first({column}, CAST(:{p} AS jsonpath), '{{}}', true)"
        params: dict[str, Any] = {p: _pg_jsonpath(steps)}
        if op == "eq":
            params[v] = dumps_json(value)
            sql = f"{node} = CAST(:{v} AS jsonb)"
            if value is None or isinstance(value, bool | str) or (
                    isinstance(value, int) and abs(value) < _SAFE_INT):
                # ix_tool_calls_arguments_gin pre-filters scalars (arrays: any element).
                contained: Any = value
                for step in reversed(steps):
                    contained = [contained] if isinstance(step, int) else {step: contained}
                params[f"{p}_c"] = dumps_json(contained)
                sql = f"{column} @> CAST(:{p}_c AS jsonb) AND " + sql
            return text(sql).bindparams(**params)
        string = f"jsonb_typeof({node}) = 'string'"
        value_text = f"({node} #>> '{{}}')"
        params[v] = value
        if op == "contains":
            return text(f"{string} AND strpos({value_text}, :{v}) > 0").bindparams(**params)
        if op == "icontains":
            return text(f"{string} AND strpos(lower({value_text}), lower(:{v})) > 0"
                        ).bindparams(**params)
        return text(f"{string} AND {value_text} ~ :{v}").bindparams(**params)
    path = _sqlite_path(steps)
    params = {}
    if path is None:  # a key holding '"': walk it in Python
        node = f"json_at({column}, :{p})"
        params[p] = orjson.dumps(list(steps)).decode()
        kind = f"json_type({node})"
        scalar = f"json_extract({node}, '$')"
    else:
        params[p] = path
        node = f"({column} -> :{p})"
        kind = f"json_type({column}, :{p})"
        scalar = f"json_extract({column}, :{p})"
    if op == "eq":
        if value is None:
            sql = f"{kind} = 'null'"
        elif isinstance(value, bool):
            sql = f"{kind} = '{'true' if value else 'false'}'"
        elif isinstance(value, str):
            sql = f"{kind} = 'text' AND {scalar} = :{v}"
            params[v] = value
        elif isinstance(value, int) and abs(value) < _SAFE_INT:
            sql = f"{kind} IN ('integer', 'real') AND {scalar} = :{v}"
            params[v] = value
        elif isinstance(value, int | float):
            sql = f"{kind} IN ('integer', 'real') AND json_same({node}, :{v})"
            params[v] = dumps_json(value)
        else:
            sql = f"{kind} IN ('array', 'object') AND json_same({node}, :{v})"
            params[v] = dumps_json(value)
        return text(sql).bindparams(**params)
    params[v] = value
    if op == "contains":
        return text(f"{kind} = 'text' AND instr({scalar}, :{v}) > 0").bindparams(**params)
    if op == "icontains":
        return text(f"{kind} = 'text' AND instr(unicode_lower({scalar}), unicode_lower(:{v})) "
                    "> 0").bindparams(**params)
    return text(f"{kind} = 'text' AND {scalar} REGEXP :{v}").bindparams(**params)


def view_sql(dialect: str, number: int, condition: ViewCondition, column: str) -> str:
    """The SQL predicate of a view condition on the view text in ``column`` (its bound
    parameters: :func:`view_params`)."""
    v = f"view_value_{number}"
    if dialect == "postgresql":
        # (LIKE, not strpos: the planner estimates a LIKE pattern's rows from its letters,
        # a strpos condition at a third of the table, and then hash-joined every call: at
        # 10^6 messages 166-184 ms -> 54-60 ms for `--command 'git push'`)
        if condition.op == "contains":
            return f"{column} LIKE :view_like_{number} ESCAPE '\\'"
        if condition.op == "icontains":
            return f"lower({column}) LIKE lower(:view_like_{number}) ESCAPE '\\'"
        return f"{column} ~ :{v}"
    if condition.op == "contains":
        return f"instr({column}, :{v}) > 0"
    if condition.op == "icontains":
        return f"instr(unicode_lower({column}), unicode_lower(:{v})) > 0"
    return f"{column} REGEXP :{v}"


def view_params(dialect: str, number: int, condition: ViewCondition) -> dict[str, Any]:
    """The bound parameters of :func:`view_sql` on ``dialect`` (PostgreSQL's substring
    conditions bind the value as a LIKE pattern, ``view_like_<number>``) and the view's
    name (``view_name_<number>``)."""
    if dialect == "postgresql" and condition.op != "regex":
        return {f"view_like_{number}": like_pattern(condition.value),
                f"view_name_{number}": condition.view}
    return {f"view_value_{number}": condition.value, f"view_name_{number}": condition.view}
