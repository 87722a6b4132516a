"""Rewrite a script so that every literal credential is read from the environment.

``export WANDB_API_KEY=abc`` becomes ``export WANDB_API_KEY="${WANDB_API_KEY}"``,
``--api-key abc`` becomes ``--api-key "${MIGRATE_SECRET_API_KEY}"`` and a
token-shaped value anywhere (``hf_...``, ``ghp_...``, ``AKIA...``) becomes a
reference too. Given those variables hold the old values, the new script
means the same; the translated job provides them from a Secret (Kubernetes) or
from a provisioned file (Slurm). What counts as a credential is decided by
:mod:`.redact`; this module only finds where each one sits and how to splice
a reference in without changing the script's quoting.

Where no reference can mean the same (a quoted here-document, a string that
only another program reads as shell), :func:`.redact.redact` removes the
value and the caller reports that the script must be fixed by hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from migrate import ir
from migrate.diagnostics import Collector
from migrate.secrets import REDACTED
from migrate.translators.job_variables import SLURM
from migrate.vocab import EnvOrigin, SecretKind

from .analyze import MAX_SCRIPT_DEPTH, analyze
from .facts import BodyFacts
from .launchers import DECLARING, SHELLS
from .lexer import WORD, Lexed, Token, dequote, is_assignment, lex
from .redact import (
    SLACK_PATH,
    TOKEN,
    literal_credential,
    looks_like_credential,
    redact,
    secret_option_value,
)

PREFIX = SLURM.SECRET_PREFIX.name
_WHOLE_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_DELETED = "<removed>"  # a quoted here-document: no reference can stand there
_WANDB_KEY = re.compile(r"[A-Za-z0-9]{20,}\Z")


@dataclass(frozen=True)
class Hidden:
    """One literal credential taken out of a text: the variable that provides it now, and where."""

    variable: str
    line: int
    what: str  # what held it, never the value: "WANDB_API_KEY=", "--api-key", "a GitHub token"


@dataclass(frozen=True)
class Concealed:
    text: str
    hidden: tuple[Hidden, ...] = ()
    removed: tuple[int, ...] = ()  # lines where a credential could only be deleted

    def environment(self, found: Sequence[ir.EnvVar] = ()) -> tuple[ir.EnvVar, ...]:
        """``found`` (what the analysis of the new text saw) with a secret reference per providing variable.

        ``NAME="${VAR}"`` where ``VAR`` stands for a literal becomes a reference to ``VAR``; every other
        providing variable (an option's value, a token inside a word) gets an entry of its own.
        """
        lines = {(h.variable, h.line) for h in self.hidden}
        out: list[ir.EnvVar] = []
        covered: set[str] = set()
        for var in found:
            m = _WHOLE_REFERENCE.fullmatch(var.value or "")
            if m and (m.group(1), var.line) in lines:
                ref = ir.SecretRef(name=m.group(1), kind=SecretKind.LITERAL)
                out.append(ir.EnvVar(var.name, secret=ref, origin=var.origin, line=var.line))
                covered.add(m.group(1))
            else:
                out.append(var)
        for h in self.hidden:
            if h.variable not in covered:
                ref = ir.SecretRef(name=h.variable, kind=SecretKind.LITERAL)
                out.append(ir.EnvVar(h.variable, secret=ref, origin=EnvOrigin.SECRET_LITERAL, line=h.line))
                covered.add(h.variable)
        return tuple(out)

    def report(self, diags: Collector, job: str | None = None) -> None:
        for h in self.hidden:
            diags.add(
                "SHELL-SECRET-LITERAL",
                f"{h.what} holds a literal credential; the script now reads it from ${h.variable}, "
                "which the translated job provides from a secret",
                line=h.line,
                job=job,
            )
        for line in self.removed:
            diags.add(
                "SHELL-SECRET-LITERAL",
                "a literal credential was removed where no variable can stand for it; fix the script by hand",
                line=line,
                job=job,
            )


def conceal(text: str, start_line: int = 1) -> Concealed:
    """``text`` with every literal credential replaced by a reference to an environment variable."""
    if not text or redact(text) == text:  # the same rules: nothing to find, nothing to lex
        return Concealed(text)
    names = _Names(text)
    edits: list[_Edit] = []
    lexed = lex(text, record_substitutions=True)  # one lexing for both passes
    _words(text, 0, 0, names, edits, lexed)
    _tokens(text, lexed, names, edits)
    out, hidden, deleted = _apply(text, edits, start_line)
    removed = _leftovers(out, start_line)
    if removed:
        out = redact(out, any_case=False)
    return Concealed(out, tuple(hidden), tuple(sorted({*deleted, *removed})))


def conceal_argv(words: Sequence[str], line: int) -> tuple[list[str], tuple[Hidden, ...]]:
    """An exec-form argv (no shell): references in Kubernetes' own ``$(NAME)`` form."""
    names = _Names("\0".join(words))
    out: list[str] = []
    hidden: list[Hidden] = []
    option = ""
    for word in words:
        new = word
        if option and secret_option_value(option, word):
            ref = names.take(PREFIX + _option_base(option), word)
            new, what = f"$({ref})", option
        elif word.startswith("-") and "=" in word:
            opt, _, value = word.partition("=")
            if secret_option_value(opt, value):
                ref = names.take(PREFIX + _option_base(opt), value)
                new, what = f"{opt}=$({ref})", opt
        elif is_assignment(word):
            name, _, value = word.partition("=")
            if literal_credential(name.rstrip("+"), value):
                ref = names.take(PREFIX + name.rstrip("+").upper(), value)
                new, what = f"{name}=$({ref})", f"{name.rstrip('+')}="
        if new == word:
            new = _token_refs(word, names, hidden, line, "$({})")
        else:
            hidden.append(Hidden(ref, line, what))
        out.append(new)
        option = word if word.startswith("-") and "=" not in word else ""
    return out, tuple(hidden)


def _token_refs(word: str, names: _Names, hidden: list[Hidden], line: int, form: str) -> str:
    def sub(m: re.Match[str]) -> str:
        ref = names.take(PREFIX + _kind(m), m.group())
        hidden.append(Hidden(ref, line, _what(m)))
        return form.format(ref)

    return SLACK_PATH.sub(sub, TOKEN.sub(sub, word))


# ---------------------------------------------------------------------------
# naming


class _Names:
    """Variables that stand for the literals: one per distinct value, never one the script uses."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.by_value: dict[tuple[str, str], str] = {}
        self.taken: set[str] = set()

    def take(self, base: str, value: str, own: bool = False) -> str:
        """A name for ``value``; ``own``: the script assigns ``base`` only this literal (so it may stay)."""
        key = (base, value)
        if key in self.by_value:
            return self.by_value[key]
        name, n = base, 1
        while name in self.taken or (not (own and n == 1) and _used(name, self.text)):
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        self.by_value[key] = name
        return name


def _used(name: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def _option_base(option: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", option.lstrip("-")).strip("_").upper() or "VALUE"


def _kind(m: re.Match[str]) -> str:
    return m.lastgroup or "SLACK_WEBHOOK_PATH"


_SHAPES = {
    "HF_TOKEN": "a Hugging Face token",
    "GITHUB_TOKEN": "a GitHub token",
    "API_KEY": "an API key (sk-...)",
    "AWS_ACCESS_KEY_ID": "an AWS access key id",
    "SLACK_TOKEN": "a Slack token",
    "GITLAB_TOKEN": "a GitLab token",
    "SLACK_WEBHOOK_PATH": "a Slack webhook URL",
}


def _what(m: re.Match[str]) -> str:
    return _SHAPES.get(_kind(m), "a token")


# ---------------------------------------------------------------------------
# finding the literals


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str
    variable: str
    what: str


def _words(
    text: str, offset: int, depth: int, names: _Names, edits: list[_Edit], lexed: Lexed | None = None
) -> None:
    """Assignments, credential options and ``wandb login`` among the words of ``text``."""
    if lexed is None:
        lexed = lex(text, record_substitutions=True)
    words = [t for t in lexed.tokens if t.kind == WORD]
    tokens = lexed.tokens
    for i, tok in enumerate(tokens):
        if tok.kind != WORD:
            continue
        exported = i > 0 and tokens[i - 1].text in DECLARING
        _assignment(tok, exported, offset, names, edits)
        nxt = tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1].kind == WORD else None
        _option(tok, nxt, offset, names, edits)
        if nxt is not None and depth < MAX_SCRIPT_DEPTH:
            _inner_script(text, tokens, i, offset, depth, names, edits)
    _wandb_login(words, offset, names, edits)
    if depth < MAX_SCRIPT_DEPTH:
        for start, end in lexed.substitutions:
            _words(text[start:end], offset + start, depth + 1, names, edits)


def _assignment(tok: Token, exported: bool, offset: int, names: _Names, edits: list[_Edit]) -> None:
    """``NAME=literal``: an environment-style (upper-case) or exported name, or a token-shaped value."""
    if not is_assignment(tok.text):
        return
    eq = tok.text.index("=")
    name = tok.text[:eq].rstrip("+")
    raw = tok.text[eq + 1 :]
    if not raw or "[" in name or not literal_credential(name, dequote(raw)):
        return
    if not (name.isupper() or exported or looks_like_credential(dequote(raw))):
        return  # a shell-local lower-case name (key=..., pass=1) is rarely a credential
    own = not tok.text[:eq].endswith("+") and _only_this_literal(names.text, name, raw)
    variable = names.take(name, dequote(raw), own=own)
    edits.append(
        _Edit(offset + tok.start + eq + 1, offset + tok.end, _reference(variable, raw), variable, f"{name}=")
    )


def _only_this_literal(text: str, name: str, raw: str) -> bool:
    """Every assignment of ``name`` in the script sets this same literal."""
    spelled = re.findall(rf"(?<![A-Za-z0-9_$]){re.escape(name)}(\+?=)", text)
    return all(op == "=" for op in spelled) and text.count(f"{name}={raw}") == len(spelled)


def _option(tok: Token, nxt: Token | None, offset: int, names: _Names, edits: list[_Edit]) -> None:
    word = tok.text
    if not word.startswith("-"):
        return
    if "=" in word:
        option, _, raw = word.partition("=")
        if raw and secret_option_value(option, dequote(raw)):
            variable = names.take(PREFIX + _option_base(option), dequote(raw))
            start = offset + tok.start + len(option) + 1
            edits.append(_Edit(start, offset + tok.end, _reference(variable, raw), variable, option))
    elif nxt is not None and secret_option_value(word, dequote(nxt.text)):
        variable = names.take(PREFIX + _option_base(word), dequote(nxt.text))
        edits.append(
            _Edit(offset + nxt.start, offset + nxt.end, _reference(variable, nxt.text), variable, word)
        )


def _wandb_login(words: list[Token], offset: int, names: _Names, edits: list[_Edit]) -> None:
    for i in range(len(words) - 2):
        if words[i].text != "wandb" or words[i + 1].text != "login":
            continue
        for tok in words[i + 2 :]:
            if tok.text.startswith("-"):
                continue
            if _WANDB_KEY.match(tok.text):
                variable = names.take(PREFIX + "WANDB_API_KEY", tok.text)
                edits.append(
                    _Edit(offset + tok.start, offset + tok.end, f'"${{{variable}}}"', variable, "wandb login")
                )
            break


def _inner_script(
    text: str, tokens: list[Token], i: int, offset: int, depth: int, names: _Names, edits: list[_Edit]
) -> None:
    """``bash -c '...'``: a single-quoted script is shell text as written, read like the body."""
    shell = tokens[i].text.rsplit("/", 1)[-1]
    if shell not in SHELLS:
        return
    for tok in tokens[i + 1 :]:
        if tok.kind != WORD or not tok.text.startswith("-") or tok.text.startswith("--"):
            break
        if "c" not in tok.text[1:]:
            continue
        k = tokens.index(tok) + 1
        script = tokens[k] if k < len(tokens) and tokens[k].kind == WORD else None
        raw = script.text if script else ""
        if script and len(raw) >= 2 and raw[0] == raw[-1] == "'":
            _words(raw[1:-1], offset + script.start + 1, depth + 1, names, edits)
        return


def _reference(variable: str, raw: str) -> str:
    """The value's place taken by ``"${VAR}"``; a line continuation per line the value spanned."""
    return f'"${{{variable}}}"' + "\\\n" * raw.count("\n")


def _tokens(text: str, lexed: Lexed, names: _Names, edits: list[_Edit]) -> None:
    """Token-shaped values anywhere, spliced in with the quoting of the place they sit in."""
    taken = [(e.start, e.end) for e in edits]
    for pattern in (TOKEN, SLACK_PATH):
        for m in pattern.finditer(text):
            if any(s <= m.start() < e for s, e in taken) or text[m.start() - 1 : m.start()] in ("$", "{"):
                continue
            variable = names.take(PREFIX + _kind(m), m.group())
            splice = _splice(text, lexed, m.start(), variable)
            edits.append(_Edit(m.start(), m.end(), splice, variable, _what(m)))
            taken.append((m.start(), m.end()))


def _splice(text: str, lexed: Lexed, pos: int, variable: str) -> str:
    ref = f"${{{variable}}}"
    if any(s <= pos < e for s, e in lexed.comments):
        return REDACTED  # a comment: nothing runs it
    for doc in lexed.heredocs:
        if doc.body_start <= pos < doc.body_end:
            return ref if not doc.quoted else _DELETED
    inner = [(s, e) for s, e in lexed.quoted if s <= pos < e]
    if inner:
        start = max(inner)[0]
        if text[start - 1 : start] == "'":
            return f"'{ref}$'" if text[start - 2 : start - 1] == "$" else f"'{ref}'"
    return ref  # unquoted, in double quotes or in ${...}: the value is one word of safe characters


def _apply(text: str, edits: list[_Edit], start_line: int) -> tuple[str, list[Hidden], list[int]]:
    out: list[str] = []
    hidden: list[Hidden] = []
    deleted: list[int] = []
    at = 0
    for edit in sorted(edits, key=lambda e: e.start):
        if edit.start < at:
            continue  # inside a value already replaced
        out.append(text[at : edit.start])
        line = start_line + text.count("\n", 0, edit.start)
        if edit.text == _DELETED:
            out.append(REDACTED)
            deleted.append(line)
        else:
            out.append(edit.text)
        if edit.text not in (REDACTED, _DELETED):
            hidden.append(Hidden(edit.variable, line, edit.what))
        at = edit.end
    out.append(text[at:])
    return "".join(out), hidden, deleted


def _leftovers(text: str, start_line: int) -> tuple[int, ...]:
    """Lines where a credential is still written out (a place no reference fits)."""
    before, after = text.split("\n"), redact(text, any_case=False).split("\n")
    if len(before) != len(after):
        return (start_line,)
    return tuple(start_line + i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b)


def analyzed(
    text: str,
    start_line: int,
    diags: Collector,
    job: str | None = None,
    analyzer: Callable[[str, int, Collector], BodyFacts] = analyze,
) -> tuple[str, BodyFacts]:
    """``text`` with its credentials replaced, and the analysis of the new text.

    The analysis reads the rewritten text, so that no literal reaches a launcher,
    a raw item or anything else the IR keeps; the providing variables join the
    environment as secret references.
    """
    concealed = conceal(text, start_line)
    concealed.report(diags, job)
    facts = analyzer(concealed.text, start_line, diags)
    if concealed.hidden:
        facts = replace(facts, environment=concealed.environment(facts.environment))
    return concealed.text, facts


__all__ = [
    "PREFIX",
    "Concealed",
    "Hidden",
    "analyzed",
    "conceal",
    "conceal_argv",
]
