"""Safe YAML loading for manifests: lines, multi-document streams, limits, broken input."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from migrate import yamlload
from migrate.diagnostics import Collector, Diagnostic
from migrate.yamlload import (
    Document,
    LimitedLoader,
    LineDict,
    LineList,
    PureLimitedLoader,
    load_documents,
    split_documents,
)

LOADERS = [LimitedLoader, PureLimitedLoader]


def load(
    text: str, loader: type = LimitedLoader, templated: bool = False
) -> tuple[list[Document], list[Diagnostic]]:
    diags = Collector("m.yaml")
    docs = load_documents(text, diags, templated=templated, loader=loader)
    return docs, diags.items


def codes(diags: list[Diagnostic]) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in diags]


JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: demo
spec:
  template:
    spec:
      containers:
        - name: main
          image: busybox
          args:
            - |
              echo one
              echo two
"""


# ---------------------------------------------------------------------------
# Lines


@pytest.mark.parametrize("loader", LOADERS)
def test_lines_of_keys_items_and_block_scalars(loader: type) -> None:
    docs, diags = load(JOB, loader)
    assert diags == []
    (doc,) = docs
    data = doc.data
    assert isinstance(data, LineDict)
    assert (doc.index, doc.start_line, doc.line) == (0, 1, 1)
    assert data.key_line("kind") == 2
    assert data["metadata"].key_line("name") == 4
    containers = data["spec"]["template"]["spec"]["containers"]
    assert isinstance(containers, LineList)
    assert containers.item_line(0) == 9
    args = containers[0]["args"]
    assert args.line == 12
    # The text of a block scalar starts on the line after its '|'.
    assert args.item_line(0) == 13
    assert args.item_end_line(0) == 14
    assert data.end_line == doc.end_line == 14


@pytest.mark.parametrize("loader", LOADERS)
def test_crlf_bom_and_missing_final_newline_keep_lines(loader: type) -> None:
    lf_docs, _ = load(JOB, loader)
    crlf_docs, diags = load("\ufeff" + JOB.replace("\n", "\r\n"), loader)
    assert diags == []
    assert crlf_docs[0].data == lf_docs[0].data
    assert crlf_docs[0].data["metadata"].key_line("name") == 4
    assert crlf_docs[0].data["spec"]["template"]["spec"]["containers"][0]["args"].item_line(0) == 13
    no_newline, diags = load(JOB.rstrip("\n"), loader)
    assert diags == []
    assert no_newline[0].data["metadata"] == {"name": "demo"}
    assert no_newline[0].end_line == 14


def test_quoted_keys_and_values() -> None:
    docs, diags = load('"apiVersion": "batch/v1"\n"kind": \'Job\'\n')
    assert diags == []
    assert docs[0].data == {"apiVersion": "batch/v1", "kind": "Job"}
    assert docs[0].data.key_line("kind") == 2


def test_merge_keys_and_small_aliases_are_fine() -> None:
    text = "base: &b {cpu: 1, memory: 2Gi}\nworker:\n  <<: *b\n  cpu: 4\nother: *b\n"
    docs, diags = load(text)
    assert diags == []
    assert docs[0].data["worker"] == {"cpu": 4, "memory": "2Gi"}
    assert docs[0].data["other"] == {"cpu": 1, "memory": "2Gi"}


# ---------------------------------------------------------------------------
# Multi-document streams


def test_documents_are_split_on_markers_with_their_lines() -> None:
    text = "# header\n---\na: 1\n---\n# only a comment\n---\n--- {b: 2}\n...\n---\n- x\n"
    docs, diags = load(text)
    assert diags == []
    assert [(d.index, d.start_line, d.line, d.data) for d in docs] == [
        (0, 1, 3, {"a": 1}),  # the leading comment stays with the first document
        (1, 7, 7, {"b": 2}),
        (2, 9, 10, ["x"]),
    ]


def test_directives_stay_with_their_document() -> None:
    chunks = split_documents("%YAML 1.1\n---\na: 1\n")
    assert len(chunks) == 1
    docs, diags = load("%YAML 1.1\n---\na: 1\n")
    assert diags == [] and docs[0].data == {"a": 1}


@pytest.mark.parametrize("loader", LOADERS)
def test_a_broken_document_does_not_hide_the_others(loader: type) -> None:
    text = "a: 1\n---\nb: [1, 2\nc: 3\n---\nd: 4\n"
    docs, diags = load(text, loader)
    assert [d.data for d in docs] == [{"a": 1}, {"d": 4}]
    assert [(d.code, d.severity) for d in diags] == [("K8S-YAML-ERROR", "error")]
    assert diags[0].line in (3, 4, 5)
    assert "document 2" in diags[0].message


def test_syntax_error_line_comes_from_the_problem_mark() -> None:
    text = "spec:\n  limits:\n    cpu: '8'\n   memory: 32Gi\n"
    _, diags = load(text)
    assert codes(diags) == [("K8S-YAML-ERROR", 4)]


def test_syntax_errors_in_a_template_are_warnings() -> None:
    _, diags = load("name: {{ .Values.name }}\n", templated=True)
    assert [(d.code, d.severity) for d in diags] == [("K8S-YAML-ERROR", "warning")]


@pytest.mark.parametrize(
    "text",
    [
        "a: b\n\x00\n",  # control character
        "a: &x [*x]\n",  # an alias to its own, unfinished anchor
        "a: *nowhere\n",
        "a: !python/object:os.system x\n",  # unsafe tag
        "? [a, b]\n: c\n",  # unhashable key
        "a: 2024-13-45\n",  # a timestamp that is not a date
    ],
)
def test_bad_yaml_is_a_diagnostic(text: str) -> None:
    docs, diags = load(text)
    assert docs == []
    assert [d.code for d in diags] == ["K8S-YAML-ERROR"]
    assert diags[0].line is not None


# ---------------------------------------------------------------------------
# Limits


BILLION_LAUGHS = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


def counting(loader: type) -> tuple[type, list[int]]:
    """A loader that records, as each parse ends, how many parser events it took."""
    taken: list[int] = []

    class Counting(loader):  # type: ignore[misc, valid-type]
        events = 0

        def get_event(self) -> Any:
            self.events += 1
            return super().get_event()

        def dispose(self) -> None:
            taken.append(self.events)
            super().dispose()

    return Counting, taken


@pytest.mark.parametrize("loader", LOADERS)
def test_alias_bomb_stops_without_expanding(loader: type) -> None:
    spy, taken = counting(loader)
    docs, diags = load(BILLION_LAUGHS, spy)
    # The work is the text's own events (about a hundred), not the billion the aliases stand for.
    assert sum(taken) < 300
    assert docs == []
    assert codes(diags) == [("K8S-YAML-ALIAS-BOMB", 5)]


def test_alias_bomb_in_one_document_keeps_the_next() -> None:
    docs, diags = load(BILLION_LAUGHS + "---\nok: 1\n")
    assert [d.data for d in docs] == [{"ok": 1}]
    assert [d.code for d in diags] == ["K8S-YAML-ALIAS-BOMB"]


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize(
    "text",
    ["[" * 10_000 + "]" * 10_000, "- " * 10_000 + "x\n", "{a: " * 10_000 + "1" + "}" * 10_000],
    ids=["flow-lists", "block-lists", "flow-maps"],
)
def test_ten_thousand_deep_nesting_stops_at_the_limit(loader: type, text: str) -> None:
    spy, taken = counting(loader)
    docs, diags = load(text, spy)
    # One parse, ended at the limit (a level is at most a key and a collection): not the
    # 20,000 and more events of the whole text.
    assert len(taken) == 1 and taken[0] <= 2 * yamlload.MAX_DEPTH + 10
    assert docs == []
    assert {d.code for d in diags} == {"K8S-YAML-TOO-DEEP"}


def test_deep_block_mappings_report_the_line_where_the_limit_is_crossed() -> None:
    text = "a:\n" + "".join(" " * i + "b:\n" for i in range(1, 300))
    _, diags = load(text)
    assert codes(diags) == [("K8S-YAML-TOO-DEEP", yamlload.MAX_DEPTH + 1)]


def test_nesting_within_the_limit_is_read() -> None:
    docs, diags = load("[" * 150 + "]" * 150)
    assert diags == [] and len(docs) == 1


# ---------------------------------------------------------------------------
# Never raise


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    diags = Collector("x.yaml")
    docs = load_documents(text, diags)
    assert all(isinstance(d, Document) for d in docs)


# YAML syntax pieces, '|'-separated ('|' itself is added below).
_YAML_PIECES = (
    "a: | b: |   - c|---|...|&x|*x|<<: |[|]|{|}|'|\"|>|#|\t|%YAML 1.1|? |: |- |!!str|!!binary|!!set|~"
)
_YAMLISH = st.lists(
    st.sampled_from([*_YAML_PIECES.split("|"), "\n", "\r\n", "|"]),
    max_size=60,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_YAMLISH)
def test_yaml_shaped_noise_never_raises(text: str) -> None:
    for loader in LOADERS:
        load_documents(text, Collector("x.yaml"), loader=loader)


def test_loaders_agree_with_pyyaml_on_plain_data() -> None:
    text = "a: [1, 2.5, true, null, '3']\nb: {c: d}\nwhen: 2024-05-16\n"
    expected = yaml.safe_load(text)
    for loader in LOADERS:
        docs, diags = load(text, loader)
        assert diags == [] and docs[0].data == expected


# ---------------------------------------------------------------------------
# The plain way (values straight from the events) agrees with the composer


def _shape(value: object) -> object:
    """A value with every line it carries, for comparing two loads exactly."""
    if isinstance(value, LineDict):
        items = [(repr(k), _shape(v), value.spans[k]) for k, v in value.items()]
        return ("map", value.line, value.end_line, items)
    if isinstance(value, LineList):
        return ("list", value.line, value.end_line, [_shape(v) for v in value], list(value.spans))
    return (type(value).__name__, repr(value))


def _both_ways(text: str, loader: type) -> tuple[object, object]:
    outcomes = []
    for plain in (True, False):
        parser = loader(text)
        parser.line_offset = 6
        try:
            outcomes.append(_shape(parser.get_plain_data() if plain else parser.get_single_data()))
        except yamlload.NotPlain:
            outcomes.append("needs the composer")
        except Exception as exc:  # the same error, with the same message, either way
            outcomes.append((type(exc).__name__, str(exc)))
        finally:
            parser.dispose()
    return outcomes[0], outcomes[1]


PLAIN_CASES = [
    JOB,
    "a: 1\nb: [1, 2.5, true, null, '3', ~]\nc: {d: e, f: [g]}\nwhen: 2024-05-16\n",
    "- |\n  text\n  more\n- >-\n  folded\n- 'q'\n- \"d\\x24{X}\"\n",
    "a:\n  - b: 1\n    c:\n      - - x\n        - y\n  - {}\n  - []\nz: 0x1F\n",
    "k: v\nk: w\n1: int key\ntrue: bool key\n? complex\n: value\n",
    "a: !!str 1\nb: ! 2\n",
    "- [a, {b: c}, [d]]\n- {e: [f, g], h: {}}\n",
    "a: b\n  c: d\n",  # a syntax error, from the parser either way
    "a: [1, 2\n",
    "a: 2024-13-45\n",  # the timestamp constructor's error
    "? [a, b]\n: c\n",  # an unhashable key
    "a: &x 1\nb: *x\n",  # anchors and aliases
    "base: &b {x: 1}\nm:\n  <<: *b\n",
    "a: !custom 1\n",
    "s: !!set {a, b}\n",
    "x: =\n= : y\n",
    "",
    "just a scalar\n",
    "[" * 150 + "]" * 150,
    "- " * 250 + "x\n",
]


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("text", PLAIN_CASES)
def test_the_plain_way_builds_what_the_composer_builds(loader: type, text: str) -> None:
    plain, composed = _both_ways(text, loader)
    assert plain == "needs the composer" or plain == composed


@settings(max_examples=300, deadline=None)
@given(_YAMLISH)
def test_the_plain_way_agrees_on_yaml_shaped_noise(text: str) -> None:
    for loader in LOADERS:
        plain, composed = _both_ways(text, loader)
        assert plain == "needs the composer" or plain == composed


def test_plain_documents_do_not_need_the_composer() -> None:
    plain, _ = _both_ways(JOB + "extra: {a: [1, 2]}\n", LimitedLoader)
    assert plain != "needs the composer"


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(["---", "...", "--- a: 1", "... # end", "---x", "a: 1", "# c", "%YAML 1.1", "", " "]),
        max_size=12,
    ),
    st.sampled_from(["", "\n"]),
)
def test_the_cut_at_markers_is_the_line_by_line_cut(lines: list[str], end: str) -> None:
    text = "\n".join(lines) + end
    assert yamlload._cut_at_markers(text) == yamlload._cut_line_by_line(text)


# ---------------------------------------------------------------------------
# Aliases count their text too


def test_aliases_of_a_big_scalar_are_a_bomb() -> None:
    scalar = "z" * 100_000
    aliases = ", ".join(["*s"] * (yamlload.MAX_ALIAS_TEXT // len(scalar) + 1))
    docs, diags = load(f'a: &s "{scalar}"\nb: [{aliases}]\n---\nok: 1\n')
    assert [d.data for d in docs] == [{"ok": 1}]
    assert codes(diags) == [("K8S-YAML-ALIAS-BOMB", 2)]
    assert "characters" in diags[0].message


def test_aliases_of_a_big_scalar_within_the_limit_are_read() -> None:
    scalar = "z" * 100_000
    docs, diags = load(f'a: &s "{scalar}"\nb: [*s, *s, *s]\n')
    assert diags == []
    assert docs[0].data["b"] == [scalar] * 3


def test_only_the_wanted_documents_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "kind: Deployment\n---\nkind: Service\nspec: {a: 1}\n---\nkind: ConfigMap\n---\n"
    text += "kind: 'Serv\\x69ce'\n"
    parsed: list[int] = []
    real = yamlload._load_chunk
    monkeypatch.setattr(
        yamlload, "_load_chunk", lambda chunk, *a: parsed.append(chunk.line) or real(chunk, *a)
    )
    wanted = yamlload.spelling("Service")
    documents = load_documents(text, Collector("f.yaml"), wanted=wanted)
    assert parsed == [2, 7]  # each chunk from its marker; a backslash may be an escape: parsed too
    found = [(d.index, d.line, d.data["kind"]) for d in documents]
    assert found == [(1, 3, "Service"), (3, 8, "Serv\\x69ce")]
    everything = load_documents(text, Collector("f.yaml"))
    assert [everything[1], everything[3]] == documents


def test_a_document_that_may_spell_the_word_with_an_escape_is_parsed() -> None:
    text = 'kind: "Serv\\x69ce"\n---\nkind: Pod\n'
    documents = load_documents(text, Collector("f.yaml"), wanted=yamlload.spelling("Service"))
    assert [(d.index, d.data["kind"]) for d in documents] == [(0, "Service")]
