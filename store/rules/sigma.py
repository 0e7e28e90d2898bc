"""Sigma rules: parsed by pySigma, compiled to Python predicates over :class:`Event` fields.

pySigma (the `rules` extra) reads the YAML, applies the value modifiers (``contains``,
``startswith``, ``endswith``, ``all``, ``re`` with its ``i``/``m``/``s`` flags, ``cased``,
``exists``, ``windash``, ``base64``/``base64offset``, ``cidr``, ``lt``/``gt``...) and parses
the condition (``and``, ``or``, ``not``, parentheses, ``1 of``/``all of`` with wildcards or
``them``) into a tree of ``field = value`` tests. :func:`compile_rule` turns that tree into
one closure: strings compare ignoring case (Unicode lower case) unless ``cased``; wildcards
``*``/``?`` become a regular expression only where a plain ``==``, ``in``, ``startswith`` or
``endswith`` cannot say it; a value list is OR (``|all``: AND); a keyword (a value without a
field) matches any field. Field references and correlation rules are refused with a
:class:`~store.core.errors.RuleError` naming the rule.

Every regular expression a rule gives (``re``, and the wildcards that need one) runs on RE2
(``google-re2``, the `rules` extra): linear time in the text, so no rule can stall a check or a
watch pass however its pattern backtracks in other engines. A pattern RE2 cannot compile
(backreferences, lookaround, atomic groups) is a :class:`RuleError` naming the rule and the
field when the rule loads. Only literal alternations (escaped ``contains`` lists) use
:mod:`re`, which has no backtracking to do on them.

A rule applies to an event when each of its log-source fields that is set (``category``,
``product``, ``service``) equals the event's (events have no service).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from store.core.errors import RuleError
from store.rules.document import check_document
from store.rules.prefilter import Requirement, requirement

__all__ = ["Matcher", "Rule", "compile_rule", "parse_rules"]

#: A compiled condition: the event's fields, the lower-cased ones, and a list collecting
#: ``(field, value)`` of the positive tests that matched.
Matcher = Callable[[Mapping[str, Any], dict[str, Any], list[tuple[str, str]]], bool]

LEVELS: tuple[str, ...] = ("informational", "low", "medium", "high", "critical")


@dataclass(frozen=True, slots=True)
class Rule:
    """A loaded Sigma rule: what the findings and reports show, and its compiled ``matcher``."""

    id: str
    title: str
    level: str
    tags: tuple[str, ...]
    description: str
    category: str | None
    product: str | None
    service: str | None
    origin: str
    matcher: Matcher = field(repr=False, compare=False)
    fields: frozenset[str] = field(repr=False, compare=False)
    #: Program names (lower case) one of which the event's ``Image`` must end in for the rule
    #: to match (read off the condition); ``None``: any event may match.
    images: frozenset[str] | None = field(default=None, repr=False, compare=False)
    #: What a call's searchable text must hold for the rule to match it
    #: (:mod:`store.rules.prefilter`); ``None``: every call must be evaluated.
    needs: Requirement | None = field(default=None, repr=False, compare=False)

    def applies(self, category: str, product: str) -> bool:
        return ((self.category is None or self.category == category)
                and (self.product is None or self.product == product)
                and self.service is None)

    @property
    def rank(self) -> int:
        """The level's place in :data:`LEVELS` (informational 0 ... critical 4)."""
        return LEVELS.index(self.level) if self.level in LEVELS else 0


def parse_rules(text: str, origin: str) -> list[Rule]:
    """The rules of one YAML text (one rule, or several as YAML documents); ``RuleError``
    naming ``origin`` when it is not YAML, a document is not a Sigma rule
    (:func:`store.rules.document.check_document` names the field), pySigma refuses one or it
    uses what this evaluator cannot. Nothing else is raised, whatever the text holds."""
    import yaml
    from sigma.collection import SigmaCollection
    from sigma.exceptions import SigmaError
    from sigma.rule import SigmaRule

    try:
        # (libyaml's parser where PyYAML has it: the built-in pack parses in a tenth of the
        # time, the same documents; pure Python otherwise)
        documents = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader",
                                                            yaml.SafeLoader)))
    except Exception as exc:  # yaml's errors, and RecursionError on deep nesting  # noqa: BLE001
        raise RuleError(f"{origin}: not a Sigma rule file: {one_line(exc)}") from None
    for number, document in enumerate(documents, start=1):
        check_document(document, origin if len(documents) == 1
                       else f"{origin} (document {number})")
    try:
        collection = SigmaCollection.from_dicts(documents, collect_errors=True,
                                                **_policy())
        problems = [str(e) for e in collection.errors]
        items = list(collection.rules) if not problems else []
    except Exception as exc:  # a shape pySigma did not expect: still not a rule  # noqa: BLE001
        raise RuleError(f"{origin}: not a Sigma rule: {one_line(exc)}") from None
    if problems:
        raise RuleError(f"{origin}: {'; '.join(problems)}")
    rules: list[Rule] = []
    for item in items:
        if not isinstance(item, SigmaRule):
            raise RuleError(f"{origin}: {type(item).__name__} (correlation/filter rules) "
                            "are not supported; only detection rules")
        try:
            rules.append(compile_rule(item, origin))
        except RuleError:
            raise
        except SigmaError as exc:
            raise RuleError(f"{origin}: rule {item.title!r}: {exc}") from None
        except Exception as exc:  # a value pySigma let through that no test can use  # noqa: BLE001
            raise RuleError(f"{origin}: rule {item.title!r}: not a Sigma rule: "
                            f"{one_line(exc)}") from None
    return rules


def one_line(exc: BaseException) -> str:
    """An exception as one line of text (its type when it says nothing)."""
    text = " ".join(str(exc).split())
    return text[:500] if text else type(exc).__name__


def _policy() -> dict[str, Any]:
    """pySigma's policy that checks a regular expression's syntax with Python's ``re``
    (compiling only, never matching): RE2's own check (pySigma 2) logs to stderr and names
    neither rule nor field; :func:`linear_regex` then refuses what RE2 cannot run, naming
    both. Empty for a pySigma without policies."""
    try:
        from sigma.policy.profiles import TrustedPolicy
    except ImportError:
        return {}
    return {"policy": TrustedPolicy}


def compile_rule(rule: Any, origin: str) -> Rule:
    """A pySigma ``SigmaRule`` as a :class:`Rule` (its conditions ORed)."""
    name = f"{origin}: rule {rule.title!r}"
    fields: set[str] = set()
    trees = [cond.parsed for cond in rule.detection.parsed_condition]
    matchers = [_node(tree, name, fields) for tree in trees]
    gates = [_images(tree) for tree in trees]
    images = None if any(g is None for g in gates) else frozenset().union(
        *(g for g in gates if g is not None))
    if not matchers:
        raise RuleError(f"{name} has no condition")
    matcher = matchers[0] if len(matchers) == 1 else _any(matchers)
    source = rule.logsource
    level = rule.level.name.lower() if rule.level is not None else "medium"
    return Rule(
        id=str(rule.id) if rule.id is not None else rule.title,
        title=rule.title,
        level=level,
        tags=tuple(f"{t.namespace}.{t.name}" for t in rule.tags),
        description=rule.description or "",
        category=source.category, product=source.product, service=source.service,
        origin=origin, matcher=matcher, fields=frozenset(fields), images=images,
        needs=requirement(trees),
    )


def _images(node: Any) -> frozenset[str] | None:
    """The program names an ``Image`` must end in for ``node`` to hold, when the condition
    says so (``Image|endswith: /curl`` under ``and``s, in every branch of an ``or``)."""
    from sigma.conditions import ConditionAND, ConditionFieldEqualsValueExpression, ConditionOR
    from sigma.types import SigmaString, SpecialChars

    if isinstance(node, ConditionAND):
        found = [g for g in (_images(a) for a in node.args) if g is not None]
        return frozenset.intersection(*found) if found else None
    if isinstance(node, ConditionOR):
        branches = [_images(a) for a in node.args]
        if any(g is None for g in branches):
            return None
        return frozenset().union(*(g for g in branches if g is not None))
    if (isinstance(node, ConditionFieldEqualsValueExpression) and node.field == "Image"
            and isinstance(node.value, SigmaString)):
        parts = list(node.value.iter_parts())
        if parts and parts[0] == SpecialChars.WILDCARD_MULTI:
            parts = parts[1:]
        if len(parts) == 1 and isinstance(parts[0], str) and "/" in parts[0]:
            program = parts[0].rsplit("/", 1)[1].lower()
            if program:
                return frozenset({program})
    return None


def _any(parts: list[Matcher]) -> Matcher:
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        a, b = parts
        return lambda f, low, hits: a(f, low, hits) or b(f, low, hits)
    return lambda f, low, hits: any(p(f, low, hits) for p in parts)


def _all(parts: list[Matcher]) -> Matcher:
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        a, b = parts
        return lambda f, low, hits: a(f, low, hits) and b(f, low, hits)
    return lambda f, low, hits: all(p(f, low, hits) for p in parts)


def _simple(node: Any) -> tuple[str, str, str] | None:
    """``(field, kind, lower-case text)`` of a test ``field = value`` whose value is a string
    compared ignoring case by equality, prefix, suffix or containment; else ``None``."""
    from sigma.conditions import ConditionFieldEqualsValueExpression
    from sigma.types import SigmaCasedString, SigmaString, SpecialChars

    if not isinstance(node, ConditionFieldEqualsValueExpression):
        return None
    value = node.value
    if not isinstance(value, SigmaString) or isinstance(value, SigmaCasedString):
        return None
    parts = list(value.iter_parts())
    star = SpecialChars.WILDCARD_MULTI
    head = bool(parts) and parts[0] == star
    tail = len(parts) > 1 and parts[-1] == star
    middle = parts[int(head):len(parts) - int(tail)]
    if len(middle) != 1 or not isinstance(middle[0], str):
        return None
    kind = "contains" if head and tail else "endswith" if head else (
        "startswith" if tail else "equals")
    return node.field, kind, middle[0].lower()


def _merged(args: list[Any], fields: set[str]) -> list[Matcher]:
    """The simple string tests of an ``or``, one matcher per field: suffixes and prefixes as
    one ``str.endswith``/``startswith`` of a tuple, containment as one regular expression."""
    by_field: dict[str, dict[str, list[str]]] = {}
    for arg in args:
        simple = _simple(arg)
        if simple is not None:
            field_name, kind, text_ = simple
            by_field.setdefault(field_name, {}).setdefault(kind, []).append(text_)
    matchers: list[Matcher] = []
    for field_name, kinds in by_field.items():
        fields.add(field_name)
        ends = tuple(kinds.get("endswith", ()))
        starts = tuple(kinds.get("startswith", ()))
        equal = frozenset(kinds.get("equals", ()))
        inside = kinds.get("contains", [])
        found = re.compile("|".join(re.escape(t) for t in inside)) if inside else None
        if "" in inside or "" in ends or "" in starts:
            found = re.compile("")

        def test(s: str, low: str, ends: tuple[str, ...] = ends,
                 starts: tuple[str, ...] = starts, equal: frozenset[str] = equal,
                 found: re.Pattern[str] | None = found) -> bool:
            return bool((ends and low.endswith(ends)) or (starts and low.startswith(starts))
                        or low in equal or (found is not None and found.search(low)))

        matchers.append(_field_test(field_name, test))
    return matchers


def _node(node: Any, name: str, fields: set[str]) -> Matcher:
    from sigma.conditions import (
        ConditionAND,
        ConditionFieldEqualsValueExpression,
        ConditionNOT,
        ConditionOR,
        ConditionValueExpression,
    )

    if isinstance(node, ConditionAND):
        return _all([_node(a, name, fields) for a in node.args])
    if isinstance(node, ConditionOR):
        return _any(_merged(node.args, fields) + [_node(a, name, fields) for a in node.args
                                                  if _simple(a) is None])
    if isinstance(node, ConditionNOT):
        inner = _node(node.args[0], name, fields)
        return lambda f, low, hits: not inner(f, low, [])
    if isinstance(node, ConditionFieldEqualsValueExpression):
        from sigma.types import SigmaExists

        fields.add(node.field)
        if isinstance(node.value, SigmaExists):
            key, wanted = node.field, node.value.exists
            return lambda f, low, hits: bool(f.get(key)) == wanted
        return _field_test(node.field, _value(node.value, f"{name}, field {node.field!r}"))
    if isinstance(node, ConditionValueExpression):
        return _keyword_test(_value(_anywhere(node.value), f"{name}, a keyword"))
    raise RuleError(f"{name}: unsupported condition element {type(node).__name__}")


def _anywhere(value: Any) -> Any:
    """A keyword (a value without a field) is searched for anywhere in a field, as full-text
    backends do: a plain string gets a ``*`` on each side it lacks."""
    from sigma.types import SigmaString, SpecialChars

    if not isinstance(value, SigmaString) or not value.s:
        return value
    star = SpecialChars.WILDCARD_MULTI
    if not value.startswith(star):
        value = star + value
    if not value.endswith(star):
        value = value + star
    return value


# A value test: (the field's text, its lower case) -> matched
ValueTest = Callable[[str, str], bool]


def _value(value: Any, name: str) -> ValueTest | None:
    """A test of one string; ``None`` for ``null`` (the field is absent or empty)."""
    from sigma import types as t

    if isinstance(value, t.SigmaNull):
        return None
    if isinstance(value, t.SigmaExpansion):
        tests = [_value(v, name) for v in value.values]
        real = [x for x in tests if x is not None]
        return lambda s, low: any(x(s, low) for x in real)
    if isinstance(value, t.SigmaCasedString):
        return _string(value, name, cased=True)
    if isinstance(value, t.SigmaString):
        return _string(value, name, cased=False)
    if isinstance(value, t.SigmaRegularExpression):
        flags = "".join(sorted(t.SigmaRegularExpression.sigma_to_re_flag[f] for f in value.flags))
        return _re2_test(str(value.regexp), flags, name, whole=False)
    if isinstance(value, t.SigmaBool):
        expected = "true" if value.boolean else "false"
        return lambda s, low: low == expected
    if isinstance(value, t.SigmaNumber):
        number = value.number
        return lambda s, low: _number(s) == number
    if isinstance(value, t.SigmaCompareExpression):
        return _compare(value)
    if isinstance(value, t.SigmaCIDRExpression):
        network = value.network
        return lambda s, low: _in_network(s, network)
    raise RuleError(f"{name}: unsupported value {type(value).__name__} ({value})")


def linear_regex(pattern: str, flags: str, where: str) -> Any:
    """``pattern`` compiled by RE2 (``flags``: Sigma's ``i``, ``m``, ``s``), whose matching
    takes time linear in the text; ``RuleError`` naming ``where`` (the rule and field) when
    RE2 cannot compile it (backreferences, lookaround, atomic groups ...)."""
    import re2  # type: ignore[import-untyped]  # the `rules` extra (google-re2)

    options = re2.Options()
    options.log_errors = False  # the error is ours to report, not RE2's log on stderr
    try:
        return re2.compile(f"(?{flags}){pattern}" if flags else pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise RuleError(f"{where}: regular expression {pattern!r} is not supported: {detail} "
                        "(rules run on RE2, in linear time: no backreferences, lookaround "
                        "or atomic groups)") from None


#: Texts longer than this (characters) that RE2's one-pattern set finds no match in are
#: searched again by the compiled pattern: a set only has RE2's DFA, which can run out of
#: memory on a long text (and then answers no), where a search falls back to the NFA.
_SET_CERTAIN = 1000


def _re2_test(pattern: str, flags: str, where: str, *, whole: bool) -> ValueTest:
    """A value test: does ``pattern`` match somewhere in the text (``whole``: all of it)?
    Answered by a one-pattern ``re2.Set`` (its public API costs about what :mod:`re` does;
    the compiled pattern's ``search`` several times more), confirmed by the pattern for long
    texts (:data:`_SET_CERTAIN`). RE2 reads UTF-8: a lone surrogate, which no stored text
    holds but a caller's may, is read as "?"."""
    import re2  # the `rules` extra (google-re2)

    compiled = linear_regex(pattern, flags, where)  # the errors, and the long texts
    options = re2.Options()
    options.log_errors = False
    one = re2.Set.FullMatchSet(options) if whole else re2.Set.SearchSet(options)
    one.Add(f"(?{flags}){pattern}" if flags else pattern)
    one.Compile()
    method = compiled.fullmatch if whole else compiled.search

    def test(s: str, low: str) -> bool:
        try:
            if one.Match(s) is not None:
                return True
        except UnicodeEncodeError:
            s = s.encode("utf-8", "replace").decode("utf-8")
            if one.Match(s) is not None:
                return True
        return len(s) > _SET_CERTAIN and method(s) is not None

    return test


def _string(value: Any, name: str, cased: bool) -> ValueTest:
    from sigma.types import SpecialChars

    parts = list(value.iter_parts())
    plain = [p for p in parts if isinstance(p, str)]
    inner = parts[1:-1] if len(parts) > 2 else []
    if (not all(isinstance(p, str) or p == SpecialChars.WILDCARD_MULTI for p in parts)
            or len(plain) > 1 or any(not isinstance(p, str) for p in inner)):
        return _re2_test(str(value.to_regex().regexp), "s" if cased else "is", name,
                         whole=True)
    text = plain[0] if plain else ""
    if not cased:
        text = text.lower()
    head = bool(parts) and parts[0] == SpecialChars.WILDCARD_MULTI
    tail = bool(parts) and parts[-1] == SpecialChars.WILDCARD_MULTI
    if not text:
        return (lambda s, low: True) if head or tail else (lambda s, low: s == "")
    if head and tail:
        return (lambda s, low: text in s) if cased else (lambda s, low: text in low)
    if head:
        return (lambda s, low: s.endswith(text)) if cased else (
            lambda s, low: low.endswith(text))
    if tail:
        return (lambda s, low: s.startswith(text)) if cased else (
            lambda s, low: low.startswith(text))
    return (lambda s, low: s == text) if cased else (lambda s, low: low == text)


def _field_test(name: str, test: ValueTest | None) -> Matcher:
    if test is None:
        return lambda f, low, hits: not f.get(name)
    check: ValueTest = test

    def matcher(f: Mapping[str, Any], low: dict[str, Any], hits: list[tuple[str, str]]) -> bool:
        value = f.get(name)
        if value is None:
            return False
        lowered: Any = low.get(name)
        if lowered is None:
            lowered = low[name] = (value.lower() if isinstance(value, str)
                                   else [v.lower() for v in value])
        if isinstance(value, str):
            if check(value, lowered):
                hits.append((name, value))
                return True
            return False
        for one, one_low in zip(value, lowered, strict=True):
            if check(one, one_low):
                hits.append((name, one))
                return True
        return False

    return matcher


def _keyword_test(test: ValueTest | None) -> Matcher:
    def matcher(f: Mapping[str, Any], low: dict[str, Any], hits: list[tuple[str, str]]) -> bool:
        if test is None:
            return False
        for name, value in f.items():
            for one in [value] if isinstance(value, str) else value:
                if test(one, one.lower()):
                    hits.append((name, one))
                    return True
        return False

    return matcher


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _compare(value: Any) -> ValueTest:
    number = value.number.number
    op = value.op.name  # LT, LTE, GT, GTE
    checks: dict[str, Callable[[float, float], bool]] = {
        "LT": lambda a, b: a < b, "LTE": lambda a, b: a <= b,
        "GT": lambda a, b: a > b, "GTE": lambda a, b: a >= b,
    }
    check = checks[op]

    def test(s: str, low: str) -> bool:
        got = _number(s)
        return got is not None and check(got, number)

    return test


def _in_network(text: str, network: Any) -> bool:
    try:
        return ipaddress.ip_address(text.strip()) in network
    except ValueError:
        return False
