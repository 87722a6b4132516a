"""Safe multi-document YAML loading with line numbers and hard limits.

Manifests come from untrusted trees of tens of thousands of files, so loading
must be bounded: an alias bomb or a pathologically deep document ends in a
diagnostic, never in a hang, a RecursionError or a crash of the C parser.

How: the C event parser (libyaml) when available, and our own iterative
composer on top of its events. Composing ourselves lets us count alias
expansion and nesting depth while the node graph is built, instead of after
the damage is done; it also avoids libyaml's recursive C composer, which can
overflow the C stack on very deep input. Construction then yields ``LineDict``
and ``LineList`` values that remember the line of every key and item.

Documents are split on ``---`` / ``...`` marker lines first and parsed one by
one, so a syntax error in one document does not hide the others. YAML forbids
those markers inside any scalar, so the split is exact.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml
from yaml.constructor import ConstructorError
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    ScalarEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from migrate.diagnostics import WARNING, Collector

# Nodes that aliases may add on top of the nodes written in the document.
MAX_ALIAS_EXPANSION = 100_000
# Nesting of mappings and sequences; real manifests stay well under 30.
MAX_DEPTH = 200

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# YAML's line breaks (libyaml and PyYAML agree on these); str.splitlines knows more.
_LINE_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")
_DOC_START = re.compile(r"---(?:[ \t]|$)")
_DOC_END = re.compile(r"\.\.\.(?:[ \t]|$)")


class AliasBombError(yaml.MarkedYAMLError):
    """Aliases expand to more nodes than ``MAX_ALIAS_EXPANSION``."""


class TooDeepError(yaml.MarkedYAMLError):
    """Mappings and sequences nest deeper than ``MAX_DEPTH``."""


class LineDict(dict[Any, Any]):
    """A mapping that remembers where it and each of its keys are in the file."""

    line: int
    end_line: int

    def __init__(self, line: int = 0, end_line: int = 0) -> None:
        super().__init__()
        self.line = line
        self.end_line = end_line
        # key -> (key line, first line of the value's content, last line of the value)
        self.spans: dict[Any, tuple[int, int, int]] = {}

    def key_line(self, key: Any) -> int:
        span = self.spans.get(key)
        return span[0] if span else self.line

    def value_line(self, key: Any) -> int:
        span = self.spans.get(key)
        return span[1] if span else self.line

    def value_end_line(self, key: Any) -> int:
        span = self.spans.get(key)
        return span[2] if span else self.end_line


class LineList(list[Any]):
    """A sequence that remembers where it and each of its items are in the file."""

    line: int
    end_line: int

    def __init__(self, line: int = 0, end_line: int = 0) -> None:
        super().__init__()
        self.line = line
        self.end_line = end_line
        self.spans: list[tuple[int, int]] = []  # per item: (first content line, last line)

    def item_line(self, index: int) -> int:
        return self.spans[index][0] if 0 <= index < len(self.spans) else self.line

    def item_end_line(self, index: int) -> int:
        return self.spans[index][1] if 0 <= index < len(self.spans) else self.end_line


@dataclass(frozen=True)
class Document:
    """One parsed YAML document of a file."""

    index: int  # position among the non-empty documents of the file, from 0
    start_line: int  # first line of the document's text, its '---' marker included (1-based)
    line: int  # first line of the document's content
    end_line: int
    data: Any  # LineDict, LineList or a plain scalar


if TYPE_CHECKING:
    _MixinBase = yaml.SafeLoader
else:
    _MixinBase = object


class _BoundedLoading(_MixinBase):
    """Mixed into a SafeLoader: an iterative, bounded composer, and maps and lists that keep lines.

    The methods it calls (get_event, resolve, construct_object, ...) come from the loader it is
    mixed into, the C one or the pure-Python one.
    """

    line_offset = 0

    def get_single_node(self) -> Node | None:
        self.get_event()  # StreamStart
        node = None
        if not self.check_event(StreamEndEvent):
            self.get_event()  # DocumentStart
            node = self._compose_bounded()
            self.get_event()  # DocumentEnd
        if not self.check_event(StreamEndEvent):
            extra: Any = self.get_event().start_mark
            raise yaml.composer.ComposerError(
                "expected a single document", None, "but found another document", extra
            )
        self.get_event()
        return node

    def _compose_bounded(self) -> Node:
        # Each frame: [node, anchor, pending mapping key, expanded size].
        stack: list[list[Any]] = []
        anchors: dict[str, tuple[Node, int]] = {}
        alias_expansion = 0
        while True:
            event = self.get_event()
            # The C parser's marks are its own type; they offer the same line and column.
            start: Any = event.start_mark
            end: Any = event.end_mark
            size = 1
            if isinstance(event, ScalarEvent):
                tag = event.tag
                if tag is None or tag == "!":
                    tag = self.resolve(ScalarNode, event.value, event.implicit)
                node: Node = ScalarNode(tag, event.value, start, end, style=event.style)
                if event.anchor is not None:
                    anchors[event.anchor] = (node, 1)
            elif isinstance(event, AliasEvent):
                if event.anchor not in anchors:
                    # Also catches an alias to an enclosing, unfinished anchor (a cycle).
                    raise yaml.composer.ComposerError(
                        None, None, f"found undefined alias {event.anchor!r}", start
                    )
                node, size = anchors[event.anchor]
                alias_expansion += size
                if alias_expansion > MAX_ALIAS_EXPANSION:
                    raise AliasBombError(
                        None,
                        None,
                        f"aliases expand to more than {MAX_ALIAS_EXPANSION} nodes",
                        start,
                    )
            elif isinstance(event, CollectionStartEvent):
                if len(stack) >= MAX_DEPTH:
                    raise TooDeepError(None, None, f"nesting deeper than {MAX_DEPTH} levels", start)
                is_seq = isinstance(event, SequenceStartEvent)
                node_cls = SequenceNode if is_seq else MappingNode
                tag = event.tag
                if tag is None or tag == "!":
                    tag = self.resolve(node_cls, None, event.implicit)
                collection = node_cls(tag, [], start, None, flow_style=event.flow_style)
                stack.append([collection, event.anchor, None, 1])
                continue
            else:  # the end of the innermost collection
                node, anchor, _, size = stack.pop()
                node.end_mark = end
                if anchor is not None:
                    anchors[anchor] = (node, size)
            if not stack:
                return node
            parent = stack[-1]
            parent[3] += size
            if isinstance(parent[0], SequenceNode):
                parent[0].value.append(node)
            elif parent[2] is None:
                parent[2] = node
            else:
                parent[0].value.append((parent[2], node))
                parent[2] = None

    # Construction: dicts and lists that keep their lines.

    def _first_line(self, node: Node) -> int:
        return int(node.start_mark.line) + 1 + self.line_offset

    def _content_line(self, node: Node) -> int:
        # A block scalar's text starts on the line after its '|' or '>' indicator.
        line = self._first_line(node)
        if isinstance(node, ScalarNode) and node.style in ("|", ">"):
            return line + 1
        return line

    def _last_line(self, node: Node) -> int:
        start = self._first_line(node)
        # A block collection ends where its last child ends; its own end mark is the
        # start of whatever token follows, possibly lines later.
        while isinstance(node, MappingNode | SequenceNode) and not node.flow_style and node.value:
            last = node.value[-1]
            node = last[1] if isinstance(node, MappingNode) else last
        mark = node.end_mark
        # An end mark at column 0 sits on the line after the node's last character.
        end = int(mark.line) + (1 if mark.column > 0 else 0) + self.line_offset
        return max(end, start)

    def construct_line_map(self, node: MappingNode) -> Iterator[LineDict]:
        data = LineDict(self._first_line(node), self._last_line(node))
        yield data
        self.flatten_mapping(node)  # merge keys (<<)
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=False)
            if not isinstance(key, Hashable):
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found unhashable key",
                    key_node.start_mark,
                )
            data[key] = self.construct_object(value_node, deep=False)
            data.spans[key] = (
                self._first_line(key_node),
                self._content_line(value_node),
                self._last_line(value_node),
            )

    def construct_line_list(self, node: SequenceNode) -> Iterator[LineList]:
        data = LineList(self._first_line(node), self._last_line(node))
        yield data
        for child in node.value:
            data.append(self.construct_object(child, deep=False))
            data.spans.append((self._content_line(child), self._last_line(child)))


class LimitedLoader(_BoundedLoading, _BaseLoader):  # type: ignore[misc, valid-type]
    """The loader used by default: libyaml's parser when PyYAML was built with it."""


class PureLimitedLoader(_BoundedLoading, yaml.SafeLoader):
    """The same on PyYAML's pure-Python parser (the fallback, and a test double)."""


for _cls in (LimitedLoader, PureLimitedLoader):
    _cls.add_constructor("tag:yaml.org,2002:map", _cls.construct_line_map)
    _cls.add_constructor("tag:yaml.org,2002:seq", _cls.construct_line_list)


@dataclass(frozen=True)
class _Chunk:
    line: int  # 1-based line of the chunk's first line in the file
    text: str


def split_documents(text: str) -> list[_Chunk]:
    """Cut a YAML stream at its document markers, keeping each chunk's first line."""
    chunks: list[_Chunk] = []
    pieces: list[str] = []
    start_line = 1
    for line_no, (line_text, brk) in enumerate(_lines(text), start=1):
        if _DOC_START.match(line_text) and pieces and not _only_directives(pieces):
            chunks.append(_Chunk(start_line, "".join(pieces)))
            pieces, start_line = [], line_no
        if not pieces:
            start_line = line_no
        pieces.append(line_text + brk)
        if _DOC_END.match(line_text):
            chunks.append(_Chunk(start_line, "".join(pieces)))
            pieces = []
    if pieces:
        chunks.append(_Chunk(start_line, "".join(pieces)))
    return [c for c in chunks if _has_content(c.text)]


def _lines(text: str) -> Iterator[tuple[str, str]]:
    pos = 0
    for match in _LINE_BREAK.finditer(text):
        yield text[pos : match.start()], match.group()
        pos = match.end()
    if pos < len(text):
        yield text[pos:], ""


def _only_directives(pieces: list[str]) -> bool:
    # '%YAML 1.1' lines belong to the document that follows them.
    return all(not p.strip() or p.lstrip().startswith(("#", "%")) for p in pieces)


def _has_content(chunk: str) -> bool:
    for line_text, _ in _lines(chunk):
        stripped = line_text.strip()
        if not stripped or stripped.startswith(("#", "%")):
            continue
        if _DOC_START.match(stripped) or _DOC_END.match(stripped):
            rest = stripped[3:].strip()
            if rest and not rest.startswith("#"):
                return True
            continue
        return True
    return False


def load_documents(
    text: str, diags: Collector, templated: bool = False, loader: type = LimitedLoader
) -> list[Document]:
    """Parse every document of a YAML stream; problems become K8S-YAML-* diagnostics.

    Empty documents are skipped. With ``templated`` (the file is a Helm or
    envsubst template), syntax errors are expected and reported as warnings.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    documents: list[Document] = []
    for index, chunk in enumerate(split_documents(text)):
        data = _load_chunk(chunk, index, diags, templated, loader)
        if data is _FAILED or data is None:
            continue
        end_line = chunk.line + len(_LINE_BREAK.findall(chunk.text.rstrip()))
        line = data.line if isinstance(data, LineDict | LineList) else _first_content_line(chunk)
        documents.append(Document(index, chunk.line, line, end_line, data))
    return documents


_FAILED = object()


def _first_content_line(chunk: _Chunk) -> int:
    for offset, (line_text, _) in enumerate(_lines(chunk.text)):
        stripped = line_text.strip()
        if stripped in ("---", "...") or not stripped or stripped.startswith(("#", "%")):
            continue
        return chunk.line + offset
    return chunk.line


def _load_chunk(chunk: _Chunk, index: int, diags: Collector, templated: bool, loader_cls: type) -> Any:
    loader = None
    where = f"document {index + 1}"
    try:
        loader = loader_cls(chunk.text)
        loader.line_offset = chunk.line - 1
        return loader.get_single_data()
    except AliasBombError as exc:
        diags.add("K8S-YAML-ALIAS-BOMB", f"{where}: {exc.problem}; not read", _mark_line(exc, chunk))
    except TooDeepError as exc:
        diags.add("K8S-YAML-TOO-DEEP", f"{where}: {exc.problem}; not read", _mark_line(exc, chunk))
    except RecursionError:
        diags.add("K8S-YAML-TOO-DEEP", f"{where}: nesting too deep to read", chunk.line)
    except yaml.MarkedYAMLError as exc:
        if "nesting depth" in str(exc.problem):  # libyaml's own depth guard
            diags.add("K8S-YAML-TOO-DEEP", f"{where}: {exc.problem}; not read", _mark_line(exc, chunk))
            return _FAILED
        _report_syntax(diags, f"{where}: {exc.problem or exc.context}", _mark_line(exc, chunk), templated)
    except yaml.reader.ReaderError as exc:
        line = chunk.line + len(_LINE_BREAK.findall(chunk.text[: max(0, int(exc.position))]))
        _report_syntax(diags, f"{where}: {exc.reason} (character {exc.character!r})", line, templated)
    except (yaml.YAMLError, ValueError, TypeError) as exc:
        # TypeError: e.g. a !!set or !!binary value where a mapping was expected.
        _report_syntax(diags, f"{where}: {exc}", chunk.line, templated)
    finally:
        if loader is not None:
            loader.dispose()
    return _FAILED


def _mark_line(exc: yaml.MarkedYAMLError, chunk: _Chunk) -> int:
    mark = exc.problem_mark or exc.context_mark
    if mark is None:
        return chunk.line
    return int(mark.line) + chunk.line


def _report_syntax(diags: Collector, message: str, line: int, templated: bool) -> None:
    if templated:
        diags.add("K8S-YAML-ERROR", f"{message} (the file is a template)", line, severity=WARNING)
    else:
        diags.add("K8S-YAML-ERROR", message, line)
