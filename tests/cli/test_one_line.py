"""A table cell's line (``store.cli._common.one_line``): its first non-blank line, cut at the
limit with an ellipsis, an ellipsis after it when more lines follow, every control character
written visibly; a printable cell (most of them) takes a shorter path to the same text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from store.cli._common import ELLIPSIS, one_line, visible

_ODD = "\x00\x1b\x7f\x85\u061c\u200e\u202e\u2028\u2029\u3000\xa0\t\n\r\x0b\x0c\x1c é漢🚀"


def _reference(text: str, limit: int) -> str:
    """What a cell shows, said plainly: the first non-blank of its visible lines."""
    lines = [line for line in visible(text).splitlines() if line.strip()]
    first = lines[0].strip() if lines else ""
    if len(first) > limit:
        return first[:limit - 1] + ELLIPSIS
    return first + " " + ELLIPSIS if len(lines) > 1 else first


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(" abcXYZ019%_{}[]\\\"'" + _ODD)), max_size=90),
       st.sampled_from([1, 5, 60, 100_000]))
def test_a_cell_line_is_its_first_visible_line_cut(text: str, limit: int) -> None:
    assert one_line(text, limit) == _reference(text, limit)


def test_a_printable_cell_is_stripped_and_cut() -> None:
    assert one_line("  git push origin main  ", 8) == "git pus" + ELLIPSIS
    assert one_line("ls", 60) == "ls"
    assert one_line("\x1b[31mred", 60) == "\\x1b[31mred"
    assert one_line("a\n\nb", 60) == "a " + ELLIPSIS
