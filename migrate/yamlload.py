"""Safe multi-document YAML loading with line numbers and hard limits.

Manifests come from untrusted trees of tens of thousands of files, so loading
must be bounded: an alias bomb or a pathologically deep document ends in a
diagnostic, never in a hang, a RecursionError or a crash of the C parser.

How: the C event parser (libyaml) when available, and our own iterative
composer on top of its events. Composing ourselves lets us count alias
expansion (in nodes and in characters of text) and nesting depth while the
node graph is built, instead of after the damage is done; it also avoids
libyaml's recursive C composer, which can overflow the C stack on very deep
input. Construction then yields ``LineDict`` and ``LineList`` values that
remember the line of every key and item.

Most manifests are plain maps, lists and scalars: those are built straight
from the events, without a node graph (``_build_plain``), which is most of the
cost of loading. A document with anchors, aliases, merge keys, explicit tags
or anything else unusual is read again by the composer and PyYAML's
constructor, so both ways always give the same values, lines and errors.

Documents are split on ``---`` / ``...`` marker lines first and parsed one by
one, so a syntax error in one document does not hide the others. YAML forbids
those markers inside any scalar, so the split is exact.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml
from yaml.constructor import ConstructorError
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from migrate.diagnostics import WARNING, Collector

# Nodes that aliases may add on top of the nodes written in the document.
MAX_ALIAS_EXPANSION = 100_000
# Characters of scalar text that aliases may add: few nodes can still spell a lot of text
# (one big scalar aliased thousands of times), and all of it would be in the scan's output.
MAX_ALIAS_TEXT = 4 << 20
# Nesting of mappings and sequences; real manifests stay well under 30.
MAX_DEPTH = 200

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_STR_TAG = "tag:yaml.org,2002:str"
# Scalars the plain way builds with PyYAML's own constructors; other tags take the composer.
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "timestamp")
)
_MERGING_TAGS = frozenset({"tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"})
_NO_KEY = object()
_REMEMBERED_LENGTH = 64
_REMEMBERED_TAGS = 50_000

# YAML's line breaks (libyaml and PyYAML agree on these); str.splitlines knows more.
_LINE_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")
_DOC_START = re.compile(r"---(?:[ \t]|$)")
_DOC_END = re.compile(r"\.\.\.(?:[ \t]|$)")
# Either marker at the start of a line ('---' captured), for text broken by '\n' only: at the start
# of the text, or after a '\n' (a search led by that literal skips most of the text at C speed,
# where '^' with MULTILINE is tried at every position).
_MARKER_AT_START = re.compile(r"(?:(---)|\.\.\.)(?=[ \t]|$)", re.MULTILINE)
_MARKER_AFTER_BREAK = re.compile(r"\n(?:(---)|\.\.\.)(?=[ \t]|$)", re.MULTILINE)
_RARE_BREAKS = ("\r", "\x85", "\u2028", "\u2029")


class AliasBombError(yaml.MarkedYAMLError):
    """Aliases expand to more than ``MAX_ALIAS_EXPANSION`` nodes or ``MAX_ALIAS_TEXT`` characters."""


class NotPlain(Exception):
    """The document needs the composer: anchors, aliases, merge keys, tags, odd keys or values."""


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
    _plain_tags: dict[str, str]  # each loader class has its own (set below)

    def get_single_node(self) -> Node | None:
        return self._single_document(self._compose_bounded)

    def _single_document(self, build: Callable[[], Any]) -> Any:
        """What ``build`` makes of the stream's one document (None for an empty stream)."""
        self.get_event()  # StreamStart
        built = None
        if not self.check_event(StreamEndEvent):
            self.get_event()  # DocumentStart
            built = build()
            self.get_event()  # DocumentEnd
        if not self.check_event(StreamEndEvent):
            extra: Any = self.get_event().start_mark
            raise yaml.composer.ComposerError(
                "expected a single document", None, "but found another document", extra
            )
        self.get_event()
        return built

    def _compose_bounded(self) -> Node:
        # Each frame: [node, anchor, pending mapping key, expanded nodes, expanded characters].
        stack: list[list[Any]] = []
        anchors: dict[str, tuple[Node, int, int]] = {}
        alias_nodes = 0
        alias_text = 0
        while True:
            event = self.get_event()
            # The C parser's marks are its own type; they offer the same line and column.
            start: Any = event.start_mark
            end: Any = event.end_mark
            size = 1
            text = 0
            if isinstance(event, ScalarEvent):
                tag = event.tag
                if tag is None or tag == "!":
                    tag = self.resolve(ScalarNode, event.value, event.implicit)
                node: Node = ScalarNode(tag, event.value, start, end, style=event.style)
                text = len(event.value)
                if event.anchor is not None:
                    anchors[event.anchor] = (node, 1, text)
            elif isinstance(event, AliasEvent):
                if event.anchor not in anchors:
                    # Also catches an alias to an enclosing, unfinished anchor (a cycle).
                    raise yaml.composer.ComposerError(
                        None, None, f"found undefined alias {event.anchor!r}", start
                    )
                node, size, text = anchors[event.anchor]
                alias_nodes += size
                alias_text += text
                if alias_nodes > MAX_ALIAS_EXPANSION:
                    raise AliasBombError(
                        None, None, f"aliases expand to more than {MAX_ALIAS_EXPANSION} nodes", start
                    )
                if alias_text > MAX_ALIAS_TEXT:
                    raise AliasBombError(
                        None, None, f"aliases expand to more than {MAX_ALIAS_TEXT} characters of text", start
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
                stack.append([collection, event.anchor, None, 1, 0])
                continue
            else:  # the end of the innermost collection
                node, anchor, _, size, text = stack.pop()
                node.end_mark = end
                if anchor is not None:
                    anchors[anchor] = (node, size, text)
            if not stack:
                return node
            parent = stack[-1]
            parent[3] += size
            parent[4] += text
            if isinstance(parent[0], SequenceNode):
                parent[0].value.append(node)
            elif parent[2] is None:
                parent[2] = node
            else:
                parent[0].value.append((parent[2], node))
                parent[2] = None

    # The plain way: values straight from the events.

    def get_plain_data(self) -> Any:
        """What ``get_single_data`` returns, built without a node graph; raises ``NotPlain``
        (before any value escapes) for a document that needs the composer."""
        return self._single_document(self._build_plain)

    def _build_plain(self) -> Any:
        # Each frame: [container, is a mapping, pending key, its line, first line, block style,
        # end mark of the last item, the container's spans]. A value's last line is found as
        # _last_line finds a node's. ``top`` is the innermost frame (stack[-1]), kept at hand.
        stack: list[list[Any]] = []
        top: list[Any] | None = None
        offset = self.line_offset + 1
        get_event = self.get_event
        plain_tags = self._plain_tags
        while True:
            event = get_event()
            kind = event.__class__
            if kind is ScalarEvent:
                if event.anchor is not None:
                    raise NotPlain
                value = event.value
                tag = event.tag
                implicit = event.implicit
                if tag is not None and tag != "!":
                    pass  # explicit: the constructor below decides
                elif implicit[0]:
                    tag = plain_tags.get(value) or self._plain_tag(value)
                else:
                    tag = self.resolve(ScalarNode, value, implicit)
                if tag != _STR_TAG:
                    value = self._plain_scalar(tag, event)
                start = event.start_mark.line + offset
                if top is not None and top[1] and top[2] is _NO_KEY:
                    if tag in _MERGING_TAGS:
                        raise NotPlain  # merge keys (<<) and value keys (=) are flattened by PyYAML
                    top[2] = value
                    top[3] = start
                    continue
                content = start + 1 if event.style in ("|", ">") else start
                last_mark = event.end_mark
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                if len(stack) >= MAX_DEPTH:
                    raise TooDeepError(
                        None, None, f"nesting deeper than {MAX_DEPTH} levels", event.start_mark
                    )
                is_map = kind is MappingStartEvent
                if event.anchor is not None or (event.tag is not None and event.tag != "!"):
                    raise NotPlain
                if top is not None and top[1] and top[2] is _NO_KEY:
                    raise NotPlain  # a collection as a key: PyYAML's error
                start = event.start_mark.line + offset
                container = LineDict(start) if is_map else LineList(start)
                top = [container, is_map, _NO_KEY, 0, start, not event.flow_style, None, container.spans]
                stack.append(top)
                continue
            elif kind is AliasEvent:
                raise NotPlain
            else:  # the end of the innermost collection
                value, _, _, _, start, block, last_item, _ = stack.pop()
                top = stack[-1] if stack else None
                # A block collection ends where its last item ends (see _last_line).
                last_mark = last_item if block and last_item is not None else event.end_mark
                content = start
            end = last_mark.line + (1 if last_mark.column > 0 else 0) + offset - 1
            last = end if end > start else start
            if kind is not ScalarEvent:
                value.end_line = last
            if top is None:
                return value
            top[6] = last_mark
            if top[1]:
                key = top[2]
                top[0][key] = value
                top[7][key] = (top[3], content, last)
                top[2] = _NO_KEY
            else:
                top[0].append(value)
                top[7].append((content, last))

    def _plain_tag(self, value: str) -> str:
        # A plain scalar's tag depends on its text only; manifests repeat the same few, which
        # _build_plain finds in _plain_tags before it calls this.
        tag: str = self.resolve(ScalarNode, value, (True, False))
        if len(value) <= _REMEMBERED_LENGTH and len(self._plain_tags) < _REMEMBERED_TAGS:
            self._plain_tags[value] = tag
        return tag

    def _plain_scalar(self, tag: str, event: Any) -> Any:
        """A scalar that is not a string (int, bool, null, timestamp ...), by PyYAML's constructor."""
        construct = self.yaml_constructors.get(tag) if tag in _SCALAR_TAGS else None
        if construct is None:
            raise NotPlain
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        try:
            return construct(self, node)
        except Exception:
            raise NotPlain from None  # the constructor's error, where the constructor reports it

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
    _cls._plain_tags = {}


@dataclass(frozen=True)
class _Chunk:
    line: int  # 1-based line of the chunk's first line in the file
    text: str


def split_documents(text: str) -> list[_Chunk]:
    """Cut a YAML stream at its document markers, keeping each chunk's first line."""
    chunks = _cut_line_by_line(text) if _has_rare_breaks(text) else _cut_at_markers(text)
    return [c for c in chunks if _has_content(c.text)]


def _has_rare_breaks(text: str) -> bool:
    """Whether ``text`` has a line break other than '\n' ('\r\n' included)."""
    return any(brk in text for brk in _RARE_BREAKS)


def _count_breaks(text: str) -> int:
    """The line breaks of ``text``, '\r\n' as one (str.count is many times faster than the regex)."""
    return len(_LINE_BREAK.findall(text)) if _has_rare_breaks(text) else text.count("\n")


def _cut_at_markers(text: str) -> list[_Chunk]:
    """The cut of ``_cut_line_by_line`` for text broken by ``\n`` only, looking at marker lines only."""
    chunks: list[_Chunk] = []
    start, start_line = 0, 1  # the current chunk's offset and first line
    line_no, counted = 1, 0  # the line at offset ``counted``
    for pos, starts_document in _marker_lines(text):
        line_no += text.count("\n", counted, pos)
        counted = pos
        if starts_document:  # '---' starts a document, unless only directives come before it
            if pos > start and not _only_directives(text[start:pos].split("\n")):
                chunks.append(_Chunk(start_line, text[start:pos]))
                start, start_line = pos, line_no
        else:  # '...' ends the document with its own line
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end + 1
            chunks.append(_Chunk(start_line, text[start:end]))
            start, start_line = end, line_no + 1
    if start < len(text):
        chunks.append(_Chunk(start_line, text[start:]))
    return chunks


def _marker_lines(text: str) -> Iterator[tuple[int, bool]]:
    """The offset of each line that is a document marker, and whether it is '---' (not '...')."""
    first = _MARKER_AT_START.match(text)
    if first is not None:
        yield 0, first.group(1) is not None
    for marker in _MARKER_AFTER_BREAK.finditer(text):
        yield marker.start() + 1, marker.group(1) is not None


def _cut_line_by_line(text: str) -> list[_Chunk]:
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
    return chunks


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
    text: str,
    diags: Collector,
    templated: bool = False,
    loader: type = LimitedLoader,
    wanted: Callable[[str], bool] | None = None,
) -> list[Document]:
    """Parse every document of a YAML stream; problems become K8S-YAML-* diagnostics.

    Empty documents are skipped. With ``templated`` (the file is a Helm or
    envsubst template), syntax errors are expected and reported as warnings.
    ``wanted``: parse only the documents whose text it takes (the others keep their index).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    documents: list[Document] = []
    parsed = _PARSED
    for index, chunk in enumerate(split_documents(text)):
        if wanted is not None and not wanted(chunk.text):
            continue
        if parsed is None:
            data = _load_chunk(chunk, index, diags, templated, loader)
        else:
            key = (chunk.text, chunk.line, loader)
            data = parsed.get(key, _FAILED)
            if data is _FAILED:
                data = _load_chunk(chunk, index, diags, templated, loader)
                if data is not _FAILED:  # a failure is parsed (and reported) again
                    parsed[key] = data
        if data is _FAILED or data is None:
            continue
        end_line = chunk.line + _count_breaks(chunk.text.rstrip())
        line = data.line if isinstance(data, LineDict | LineList) else _first_content_line(chunk)
        documents.append(Document(index, chunk.line, line, end_line, data))
    return documents


_FAILED = object()

# While one file is read (see parsed_once): each document's value by its text, first line and loader.
_PARSED: dict[tuple[str, int, type], Any] | None = None


@contextlib.contextmanager
def parsed_once() -> Iterator[None]:
    """Within the block, a document of the same text at the same line is parsed once: a second
    reading of a file (the scan's cross-file passes take its Services and Kueue objects) shares
    the values of the first, which no reader changes."""
    global _PARSED
    outer = _PARSED
    _PARSED = {}
    try:
        yield
    finally:
        _PARSED = outer


def spelling(word: str) -> Callable[[str], bool]:
    """For ``load_documents(wanted=...)``: the documents whose text may hold a scalar ``word``, that is
    those where it is written out, or with a backslash that a double-quoted escape may spell it with
    (aliases reach no further than their own document)."""
    return lambda text: word in text or "\\" in text


def _first_content_line(chunk: _Chunk) -> int:
    for offset, (line_text, _) in enumerate(_lines(chunk.text)):
        stripped = line_text.strip()
        if stripped in ("---", "...") or not stripped or stripped.startswith(("#", "%")):
            continue
        return chunk.line + offset
    return chunk.line


def _parse(chunk: _Chunk, loader_cls: type) -> Any:
    """The chunk's value: the plain way when it can, else again through the composer."""
    for plain in (True, False):
        loader = loader_cls(chunk.text)
        try:
            loader.line_offset = chunk.line - 1
            return loader.get_plain_data() if plain else loader.get_single_data()
        except NotPlain:
            continue
        finally:
            loader.dispose()
    raise AssertionError("unreachable: the composer never raises NotPlain")


def _load_chunk(chunk: _Chunk, index: int, diags: Collector, templated: bool, loader_cls: type) -> Any:
    where = f"document {index + 1}"
    try:
        return _parse(chunk, loader_cls)
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
