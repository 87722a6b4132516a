#!/usr/bin/env bash
# mypy over the installed layout: translators/ and reports/ are checked as
# migrate.translators and migrate.reports, the names the code imports them by.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
mypy="${MYPY:-$repo/.venv/bin/mypy}"
# A stable place, so that mypy's cache stays valid between runs.
tree="$repo/.mypy-tree"
rm -rf "$tree"
mkdir -p "$tree/migrate"
for f in "$repo"/migrate/*.py "$repo"/migrate/*/; do ln -s "${f%/}" "$tree/migrate/"; done
ln -s "$repo/translators" "$tree/migrate/translators"
ln -s "$repo/reports" "$tree/migrate/reports"
cd "$tree"
"$mypy" --config-file "$repo/pyproject.toml" --cache-dir "$repo/.mypy_cache" -p migrate
