"""Golden-file comparison: compare, or rewrite with --update-golden."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def dumps(data: Any) -> str:
    return json.dumps(data, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def check_text(path: Path, actual: str, update: bool) -> None:
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != actual:
            path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path}; run pytest --update-golden and review the diff"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"output differs from {path}; run pytest --update-golden and read the diff"


def check_json(path: Path, actual: Any, update: bool) -> None:
    check_text(path, dumps(actual), update)
