"""``config.tomlkeys``: the depth of a TOML document's dotted keys, counted before it is parsed."""

from __future__ import annotations

import tomllib

import pytest

from linkaudit.config.tomlkeys import MAX_KEY_PARTS, deepest_key, too_deep


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("a = 1\n", 1),
        ('a."b".c = 1\n', 3),
        ("a . b\t. c = 1\n", 3),
        ("[a.b.c]\nx = 1\n", 3),
        ("[[a.b]]\n", 2),
        ('x = "a.b.c.d.e.f"\n', 1),  # dots in strings are not keys
        ("x = 'a.b.c.d.e.f'\n", 1),
        ('x = """\na.b.c.d.e = 1\n"""\n', 1),
        ("x = '''\na.b.c.d.e = 1\n'''\n", 1),
        ("# a.b.c.d.e.f\nx = 1\n", 1),
        ("x = [1.5, 2.5]\n", 2),  # a float's parts: over, never under
        ("a..b = 1\n", 1),  # not TOML: a dot after a dot ends the key
        ('"a\\".b" = 1\n', 1),  # an escaped quote stays inside the quoted part
    ],
)
def test_deepest_key(text: str, depth: int) -> None:
    assert deepest_key(text) == depth


def test_every_key_of_a_valid_document_is_counted_in_full() -> None:
    # Never under: the deepest key tomllib builds is as deep as the count.
    parts = [f"k{i}" for i in range(40)]
    text = f"[{'.'.join(parts[:10])}]\n" + " . ".join(parts) + " = 1\n"
    assert tomllib.loads(text)
    assert deepest_key(text) == 40


def test_too_deep_only_past_the_bound() -> None:
    assert too_deep(".".join(["a"] * MAX_KEY_PARTS) + " = 1\n") is None
    reason = too_deep(".".join(["a"] * (MAX_KEY_PARTS + 1)) + " = 1\n")
    assert reason is not None and f"{MAX_KEY_PARTS + 1} parts" in reason


def test_an_unterminated_string_is_read_in_linear_steps() -> None:
    # Each alternative of the scanner consumes what it matches once: a file of lone quotes
    # and backslashes is one pass (a backtracking pattern here would never end).
    assert deepest_key('"\\' * 200_000) <= 1
    assert deepest_key('"""' + '\\"' * 200_000) == 0  # one string, no key
