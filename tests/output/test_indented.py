"""output.indented.dumps writes what json.dumps(indent=2, ensure_ascii=False) writes, for any value."""

from __future__ import annotations

import enum
import json
import random
from collections import OrderedDict

import pytest

from linkaudit.output.indented import Rows, dumps


class _Level(enum.IntEnum):
    LOW = 1


class _Word(enum.StrEnum):
    A = "a"


_STRINGS = ["", "plain", 'quote " and \\ back', "new\nline\ttab", "\x00\x1f\x7f", "é ü 中", "\u2028\u202e", "😀"]
_SCALARS = [*_STRINGS, None, True, False, 0, -7, 2**70, 1.5, float("nan"), float("inf"), -0.0, _Level.LOW, _Word.A]


def _value(rng: random.Random, depth: int) -> object:
    pick = rng.random()
    if depth >= 4 or pick < 0.45:
        return rng.choice(_SCALARS)
    if pick < 0.7:
        n = rng.choice([0, 1, 3, 6])
        return (
            [_value(rng, depth + 1) for _ in range(n)]
            if rng.random() < 0.8
            else tuple(_value(rng, depth + 1) for _ in range(n))
        )
    keys = [rng.choice([*_STRINGS, "k", "k2"]) for _ in range(rng.choice([0, 1, 4, 7]))]
    if rng.random() < 0.1:
        keys.append(rng.choice([3, None, True, 2.5]))  # keys json turns into strings
    d = {k: _value(rng, depth + 1) for k in keys}
    return OrderedDict(d) if rng.random() < 0.05 else d


@pytest.mark.parametrize("seed", range(40))
def test_equal_to_json_dumps_on_random_documents(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        value = _value(rng, 0)
        assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_a_report_of_file_entries_equal() -> None:
    doc = {
        "schema": "linkaudit/1",
        "files": [
            {"path": f"a.tar.gz!lib/lib{i}.so", "status": "audited", "format": "elf", "error": None} for i in range(3)
        ],
        "findings": [],
        "summary": {"files": 3, "seconds": 0.25},
    }
    assert dumps(doc) == json.dumps(doc, indent=2, ensure_ascii=False)


def test_what_json_refuses_is_refused() -> None:
    with pytest.raises(TypeError):
        dumps({"a": [object()]})
    with pytest.raises(TypeError):
        dumps({"a": {(1, 2): 1}})


@pytest.mark.parametrize("seed", range(10))
def test_rows_are_written_as_their_list_of_dicts(seed: int) -> None:
    rng = random.Random(seed)
    keys = tuple(rng.sample(["path", "status", "é", 'q"', "k"], rng.randint(0, 4)))
    rows = [tuple(_value(rng, 2) for _ in keys) for _ in range(rng.choice([0, 1, 5]))]
    table = Rows(keys, rows)
    doc = {"a": 1, "files": table, "deeper": [{"x": table}]}
    plain = {"a": 1, "files": table.as_list(), "deeper": [{"x": table.as_list()}]}
    assert dumps(doc) == json.dumps(plain, indent=2, ensure_ascii=False)
