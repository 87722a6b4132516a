"""Literal credentials in a script become references; the script means the same given the variables."""

from __future__ import annotations

import re
import shutil
import subprocess
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrate import ir
from migrate.diagnostics import Collector
from migrate.translators.shell import redact as redact_module
from migrate.translators.shell.conceal import conceal, conceal_argv
from migrate.translators.shell.redact import export_names_only
from migrate.vocab import SecretKind

BASH = shutil.which("bash")
HF = "hf_" + "A1" * 12
GH = "ghp_" + "b2" * 12


@pytest.mark.parametrize(
    ("text", "expected", "variables"),
    [
        ("export WANDB_API_KEY=abc123\n", 'export WANDB_API_KEY="${WANDB_API_KEY}"\n', ["WANDB_API_KEY"]),
        ('DB_PASSWORD="a b" run\n', 'DB_PASSWORD="${DB_PASSWORD}" run\n', ["DB_PASSWORD"]),
        ("export GH=" + GH + "\n", 'export GH="${GH}"\n', ["GH"]),
        (
            "python t.py --api-key k1\n",
            'python t.py --api-key "${MIGRATE_SECRET_API_KEY}"\n',
            ["MIGRATE_SECRET_API_KEY"],
        ),
        (
            "python t.py --hf-token=k1\n",
            'python t.py --hf-token="${MIGRATE_SECRET_HF_TOKEN}"\n',
            ["MIGRATE_SECRET_HF_TOKEN"],
        ),
        (
            f"curl -H 'token {GH}' u\n",
            "curl -H 'token '${MIGRATE_SECRET_GITHUB_TOKEN}'' u\n",
            ["MIGRATE_SECRET_GITHUB_TOKEN"],
        ),
        (f'echo "t={HF}"\n', 'echo "t=${MIGRATE_SECRET_HF_TOKEN}"\n', ["MIGRATE_SECRET_HF_TOKEN"]),
        (
            "bash -c 'export HF_TOKEN=x; run'\n",
            "bash -c 'export HF_TOKEN=\"${HF_TOKEN}\"; run'\n",
            ["HF_TOKEN"],
        ),
        ("X=$(tool --token t)\n", 'X=$(tool --token "${MIGRATE_SECRET_TOKEN}")\n', ["MIGRATE_SECRET_TOKEN"]),
        (
            "export A_TOKEN=1\nexport A_TOKEN=2\n",
            'export A_TOKEN="${A_TOKEN_2}"\nexport A_TOKEN="${A_TOKEN_3}"\n',
            ["A_TOKEN_2", "A_TOKEN_3"],
        ),
    ],
)
def test_literals_become_references(text: str, expected: str, variables: list[str]) -> None:
    concealed = conceal(text, 1)
    assert concealed.text == expected
    assert sorted({h.variable for h in concealed.hidden}) == variables
    assert concealed.removed == ()


@pytest.mark.parametrize(
    "text",
    [
        "export PWD=/x KEY_PATH=/k/key.pem\n",
        "export HF_TOKEN=$(cat ~/.hf_token)\n",
        "export API_KEY=$KEY\n",
        "python serve.py --max-batch-tokens 65536 --token-file /run/t --secret-name s\n",
        "key=value; pass=1\n",
        "python3 - <<'PY'\nbest = max(scores, key=scores.get)\nPY\n",
    ],
)
def test_no_over_redaction(text: str) -> None:
    assert conceal(text, 1).text == text


def test_where_no_reference_fits_the_value_is_removed_and_said() -> None:
    concealed = conceal(f"cat <<'EOF'\n{HF}\nEOF\n", 3)
    assert HF not in concealed.text and concealed.removed == (4,)
    diags = Collector("x")
    concealed.report(diags)
    assert [(d.code, d.line) for d in diags.items] == [("SHELL-SECRET-LITERAL", 4)]


def test_diagnostics_name_the_variable_never_the_value() -> None:
    concealed = conceal("export WANDB_API_KEY=s3cr3tvalue\nrun --password hunter2\n", 10)
    diags = Collector("x")
    concealed.report(diags)
    assert [d.line for d in diags.items] == [10, 11]
    assert all("s3cr3t" not in d.message and "hunter2" not in d.message for d in diags.items)
    assert "$WANDB_API_KEY" in diags.items[0].message


def test_the_environment_holds_references_only() -> None:
    concealed = conceal("export WANDB_API_KEY=abc\nrun --api-key k\n", 1)
    found = (ir.EnvVar("WANDB_API_KEY", "${WANDB_API_KEY}", line=1),)
    env = concealed.environment(found)
    assert [(e.name, e.value, e.secret) for e in env] == [
        ("WANDB_API_KEY", None, ir.SecretRef("WANDB_API_KEY", kind=SecretKind.LITERAL)),
        ("MIGRATE_SECRET_API_KEY", None, ir.SecretRef("MIGRATE_SECRET_API_KEY", kind=SecretKind.LITERAL)),
    ]


def test_an_argv_gets_kubernetes_references() -> None:
    argv, hidden = conceal_argv(["serve", "--api-key", "k", f"--x={HF}", "DB_PASSWORD=p"], 7)
    assert argv == [
        "serve",
        "--api-key",
        "$(MIGRATE_SECRET_API_KEY)",
        "--x=$(MIGRATE_SECRET_HF_TOKEN)",
        "DB_PASSWORD=$(MIGRATE_SECRET_DB_PASSWORD)",
    ]
    assert {h.line for h in hidden} == {7}


def test_an_export_list_keeps_credential_names_only() -> None:
    line = "#SBATCH --export=ALL,HF_TOKEN=abc,KEEP=1,DB_PASSWORD='x y'"
    assert (
        export_names_only(line, ["HF_TOKEN", "DB_PASSWORD"])
        == "#SBATCH --export=ALL,HF_TOKEN,KEEP=1,DB_PASSWORD"
    )


_VALUE = (
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00\n"), max_size=12)
    .filter(lambda v: "$" not in v and "`" not in v)
    .map(lambda v: "§" + v)  # a mark no variable name holds, so that a leak is seen
)
_TOKEN = st.from_regex(r"hf_[A-Za-z0-9]{20,26}", fullmatch=True)


def _single(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


@pytest.mark.skipif(BASH is None, reason="bash runs both scripts")
@settings(max_examples=40, deadline=None)
@given(key=_VALUE, option=_VALUE, token=_TOKEN)
def test_the_rewritten_script_means_the_same_given_the_variables(key: str, option: str, token: str) -> None:
    script = (
        f"export WANDB_API_KEY={_single(key)}\n"
        'show() { printf "<%s>" "$@"; echo; }\n'
        f"show --api-key {_single(option)}\n"
        f"show \"{token}\" 'x {token} y' {token}\n"
        'show "$WANDB_API_KEY"\n'
    )
    concealed = conceal(script, 1)
    assert all(value not in concealed.text for value in (key, option, token))
    provided = {"WANDB_API_KEY": key, "MIGRATE_SECRET_API_KEY": option, "MIGRATE_SECRET_HF_TOKEN": token}
    assert {h.variable for h in concealed.hidden} <= set(provided)
    assert BASH is not None

    def run(text: str, env: dict[str, str]) -> bytes:
        return subprocess.run([BASH, "-c", text], env=env, capture_output=True, check=True).stdout

    assert run(concealed.text, {"PATH": "/usr/bin:/bin", **provided}) == run(
        script, {"PATH": "/usr/bin:/bin"}
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#SBATCH --export=ALL,HF_TOKEN=abc,X=1", "#SBATCH --export=ALL,HF_TOKEN,X=1"),
        ("ALL,DB_PASSWORD=pw,WHERE=$HOME", "ALL,DB_PASSWORD,WHERE=$HOME"),
        ("ALL,GH=ghp_abcdefghijklmnopqrstuvwx0123", "ALL,GH"),
        ("ALL,TOKEN=$FROM_ENV,PWD=/w", "ALL,TOKEN=$FROM_ENV,PWD=/w"),  # references and PWD stay
        ("#SBATCH --job-name=train", "#SBATCH --job-name=train"),
    ],
)
def test_export_items_that_hold_a_credential_keep_only_their_name(text: str, expected: str) -> None:
    assert export_names_only(text) == expected


# One text per word the quick check looks for, each one the rules change; and letters that a
# case-insensitive match reads as ASCII ones.
_CHANGED = [
    *("export MY_KEY=abc", "DB_PASS=abc", "X_PWD=abc", "AWS_SECRET=abc", "GH_TOKEN=abc", "CREDENTIALS=abc"),
    *("X_AUTH=abc", "run --password hunter2", "run --Api-Key abc", "wandb login " + "a1" * 10),
    *("https://hooks.slack.com/services/T0/B0/xyz", "hf_" + "A" * 20, "ghp_" + "b" * 20),
    *("github_pat_" + "c" * 20, "sk-" + "d" * 20, "AKIA" + "E" * 16, "xoxb-" + "f" * 10, "glpat-" + "g" * 20),
    *("run --pa\u017fsword hunter2", "run --to\u212aen abcdef", "run --secret-\u212aey abcdef"),
]


def _both_ways(text: str, names: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    def all_three() -> tuple[str, ...]:
        return (
            redact_module.redact(text),
            redact_module.redact(text, any_case=False),
            export_names_only(text, names),
        )

    quick = all_three()
    every_rule = redact_module._EVERY_RULE
    with mock.patch.object(redact_module, "_hints", lambda text: every_rule):  # no shortcut
        return quick, all_three()


@pytest.mark.parametrize("text", _CHANGED)
def test_the_quick_check_lets_every_credential_through(text: str) -> None:
    quick, full = _both_ways(text, [])
    assert full[0] != text and quick == full
    listed = "--export=ALL,FOO=bar"  # a name the caller lists: no rule needed
    assert _both_ways(listed, ["FOO"]) == ((listed, listed, "--export=ALL,FOO"),) * 2


_PIECES = st.sampled_from(
    [
        *_CHANGED,
        *("HF_TOKEN", "db_pass", "Secret", "=", "'", '"', " ", ",", "--", "-", "--export=ALL,", "--token"),
        *("abcdefghijklmnopqrstuvwxyz0123", "ABCDEFGHIJKLMNOP", "$X", "x", "1", "\n", ";", "|", "/p"),
        *("\u017f", "\u212a", "\u0130", "\u0131"),
        # each rule's hint, in both cases: a hint that is wrong must show here
        *("hf_", "HF_", "ghp_", "GHP_", "gh", "akia", "AKIA", "WANDB", "wandb login ", "Hooks.slack.com/"),
        *("hooks.slack.com/", "KEY", "key=", "Passwd", "-Token ", "XOX", "xoxb-", "SK-", "GLPAT-"),
    ]
)


@settings(max_examples=600, deadline=None)
@given(
    st.lists(_PIECES, max_size=10).map("".join), st.lists(st.sampled_from(["FOO", "HF_TOKEN"]), max_size=2)
)
def test_the_quick_check_never_changes_what_is_redacted(text: str, names: list[str]) -> None:
    """A text without a word any rule needs is returned at once: running every rule gives the same."""
    quick, full = _both_ways(text, names)
    assert quick == full


def _option_values_as_written(text: str) -> str:
    """The option rule as one case-insensitive substitution: what the faster search must equal."""

    def option(m: re.Match[str]) -> str:
        if redact_module.secret_option_value(m.group(1), redact_module._unquoted(m.group(3))):
            return f"{m.group(1)}{m.group(2)}{redact_module.REDACTED}"
        return m.group(0)

    return redact_module._OPTION_VALUE.sub(option, text)


_OPTION_PIECES = st.sampled_from(
    [
        *(
            "--api-key",
            "--API_KEY",
            "--Api-Key",
            "-apikey",
            "--hf-token",
            "--Password",
            "--passwd",
            "--secret",
        ),
        *("--token-file", "--max-new-tokens", " ", "=", "= ", "'a b'", '"c\nd"', "abcdefghijklmnopqrstuv"),
        *("$X", "/p", "-", ";", "|", "&", "\n", "\u212a", "\u017f", "\u0130", "x"),
    ]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_OPTION_PIECES, max_size=12).map("".join))
def test_the_option_rule_redacts_what_its_case_insensitive_pattern_finds(text: str) -> None:
    assert redact_module._secret_option_values(text) == _option_values_as_written(text)
