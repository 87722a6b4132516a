"""The fast indented JSON writer gives exactly the bytes of json.dumps(indent=2, sort_keys=True)."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from migrate import json_indented


def reference(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        "",
        None,
        True,
        0,
        -7,
        10**30,
        1.5,
        -0.0,
        1e-7,
        math.nan,
        math.inf,
        -math.inf,
        'é " \\ \n \t \u2028 \x00 😀',
        {"b": [1, {"z": [], "a": {}}], "a": (1, "x", None), "é": False},
        {3: "int keys", 10: "sort as numbers"},
        {1.5: "float key"},
        {True: "bool key"},
        {None: "null key"},
        [[[[]]], [{}], {"k": [[1], [2.5]]}],
    ],
)
def test_same_text_as_json_dumps(value: Any) -> None:
    assert json_indented.dumps(value) == reference(value)


def test_same_text_on_random_documents() -> None:
    rng = random.Random(3)
    words = ["a", "job:x/y.sbatch#0", "é", "", "line\nbreak", "U001"]

    def document(depth: int) -> Any:
        pick = rng.randrange(8 if depth < 4 else 5)
        if pick == 0:
            return rng.choice(words)
        if pick == 1:
            return rng.randint(-(10**6), 10**6)
        if pick == 2:
            return round(rng.uniform(-1000, 1000), rng.randint(0, 4))
        if pick == 3:
            return rng.choice((True, False, None))
        if pick == 4:
            return [rng.choice(words) for _ in range(rng.randint(0, 4))]
        if pick == 5:
            return [document(depth + 1) for _ in range(rng.randint(0, 4))]
        return {rng.choice(words) + str(i): document(depth + 1) for i in range(rng.randint(0, 4))}

    for _ in range(200):
        value = document(0)
        assert json_indented.dumps(value) == reference(value)


def test_what_json_cannot_write_is_refused() -> None:
    with pytest.raises(TypeError):
        json_indented.dumps({"when": object()})
    with pytest.raises(TypeError):
        json_indented.dumps({(1, 2): "tuple key"})


def test_iterators_are_written_as_lists() -> None:
    rows = [{"id": "a", "units": ["U1"]}, {"id": "b", "units": []}]
    streamed = {"jobs": iter(rows), "none": iter(())}
    assert json_indented.dumps(streamed) == reference({"jobs": rows, "none": []})
    assert json_indented.dumps(map(str.upper, "ab")) == reference(["A", "B"])


@pytest.mark.parametrize("size", [0, 1, 255, 256, 257, 1000])
def test_long_lists_and_objects(size: int) -> None:
    value = {"list": [f"item {n}" for n in range(size)], "object": {f"k{n:04d}": n for n in range(size)}}
    assert json_indented.dumps(value) == reference(value)
    assert json_indented.dumps(value["list"], end="\n") == reference(value["list"]) + "\n"
    assert json_indented.dumps(7, end="\n") == "7\n"


def test_another_indent_and_keys_in_their_order() -> None:
    """translation.json's form: one space per level, each object's keys as the code put them."""
    rng = random.Random(5)
    for _ in range(100):
        value = {
            "target": "kubernetes",
            "jobs": [
                {"z": rng.randint(0, 9), "a": ["x", {"é": None, "b": [1.5, True]}], "m": {}, "k": []}
                for _ in range(rng.randint(0, 3))
            ],
        }
        expected = json.dumps(value, indent=1, ensure_ascii=False)
        assert json_indented.dumps(value, indent=1, sort_keys=False) == expected
