"""The sbatch option table and its value parsers."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from migrate import ir
from migrate.diagnostics import Collector
from migrate.translators.slurm import directives, options, reader
from migrate.translators.slurm.options import BY_LONG, OPTIONS, PLUGIN_OPTIONS, Option
from migrate.vocab import FidelityStatus

# Every long option of the current sbatch manual (Slurm 26.05), checked against SchedMD's
# src/common/slurm_opt.c (options with an sbatch setter) and the 25.05/25.11/26.05 release
# notes for the options added since. Kept literal on purpose: it documents what was checked.
MANUAL_LONG_OPTIONS = [
    "account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir", "cluster-constraint",
    "clusters", "comment", "consolidate-segments", "constraint", "container", "container-id", "context",
    "contiguous", "core-spec", "cores-per-socket", "cpu-freq", "cpus-per-gpu", "cpus-per-task",
    "deadline", "delay-boot", "dependency", "distribution", "error", "exclude", "exclusive", "export",
    "export-file", "extra", "extra-node-info", "get-user-env", "gid", "gpu-bind", "gpu-freq", "gpus",
    "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "help", "hint", "hold",
    "ignore-pbs", "input", "job-name", "kill-on-invalid-dep", "licenses", "mail-type", "mail-user",
    "mcs-label", "mem", "mem-bind", "mem-per-cpu", "mem-per-gpu", "mem-update", "mincpus", "network",
    "nice", "no-kill", "no-requeue", "nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core",
    "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket", "oom-kill-step", "open-mode", "output",
    "overcommit", "oversubscribe", "parsable", "partition", "prefer", "priority", "profile",
    "propagate", "qos", "quiet", "reboot", "requeue", "reservation", "resources", "resv-ports",
    "segment", "signal", "sockets-per-node", "spread-job", "spread-segments", "stepmgr", "switches",
    "test-only", "thread-spec", "threads-per-core", "time", "time-min", "tmp", "tres-bind",
    "tres-per-task", "uid", "usage", "use-min-nodes", "verbose", "version", "wait", "wait-all-nodes",
    "wckey", "wrap",
]  # fmt: skip

MANUAL_SHORT_OPTIONS = {
    "A": "account", "B": "extra-node-info", "C": "constraint", "D": "chdir", "F": "nodefile",
    "G": "gpus", "H": "hold", "J": "job-name", "L": "licenses", "M": "clusters", "N": "nodes",
    "O": "overcommit", "Q": "quiet", "S": "core-spec", "V": "version", "W": "wait", "a": "array",
    "b": "begin", "c": "cpus-per-task", "d": "dependency", "e": "error", "h": "help", "i": "input",
    "k": "no-kill", "m": "distribution", "n": "ntasks", "o": "output", "p": "partition", "q": "qos",
    "s": "oversubscribe", "t": "time", "v": "verbose", "w": "nodelist", "x": "exclude",
}  # fmt: skip

OPTIONAL_ARGUMENT = {"exclusive", "get-user-env", "nice", "no-kill", "oom-kill-step", "propagate", "requeue",
                     "resv-ports"}  # fmt: skip


def test_table_covers_the_manual() -> None:
    missing = [name for name in MANUAL_LONG_OPTIONS if name not in BY_LONG]
    assert missing == []
    core = {o.long for o in OPTIONS}
    extra = core - set(MANUAL_LONG_OPTIONS) - {"ntasks-per-tres"}  # accepted but undocumented
    assert extra == set()


def test_short_letters_match_the_manual() -> None:
    assert {o.short: o.long for o in OPTIONS if o.short} == MANUAL_SHORT_OPTIONS


def test_optional_arguments_match_getopt() -> None:
    assert {o.long for o in OPTIONS if o.arg == options.OPTIONAL} == OPTIONAL_ARGUMENT


@pytest.mark.parametrize("option", OPTIONS + PLUGIN_OPTIONS, ids=lambda o: o.long)
def test_row_is_well_formed(option: Option) -> None:
    assert option.group in options.GROUPS
    assert option.kind in options.VALUE_PARSERS
    assert option.k8s.status in FidelityStatus
    assert option.k8s.reason.strip() == option.k8s.reason != ""
    assert (option.arg == options.NONE) == (option.kind == "flag")
    if option.arg != options.NONE:
        assert option.example is not None
        option.parse(option.example)


_IR_FIELDS = {
    "resources": {f.name for f in dataclasses.fields(ir.Resources)},
    "placement": {f.name for f in dataclasses.fields(ir.Placement)},
    "failure": {f.name for f in dataclasses.fields(ir.FailurePolicy)},
    "io": {f.name for f in dataclasses.fields(ir.IOSpec)},
    "mail": {f.name for f in dataclasses.fields(ir.Mail)},
    "job": {f.name for f in dataclasses.fields(ir.Job)},
}


@pytest.mark.parametrize("option", OPTIONS + PLUGIN_OPTIONS, ids=lambda o: o.long)
def test_target_is_an_ir_field_or_a_handler(option: Option) -> None:
    if option.target == "raw" or option.target in reader._HANDLERS:
        return
    section, _, name = option.target.partition(".")
    assert name in _IR_FIELDS[section], option.target
    # filled by one assignment: the reader has a typed field for it, so the example is not kept raw
    given = f"--{option.long}" if option.arg != "required" else f"--{option.long}={option.example}"
    diags = Collector("t.sbatch")
    (job,) = reader.read(f"#!/bin/bash\n#SBATCH {given}\nhostname\n", "t.sbatch", diags)
    assert [item.key for item in job.raw] == [] and "SLURM-BAD-VALUE" not in [d.code for d in diags.items]


def test_names_are_unique() -> None:
    longs = [o.long for o in OPTIONS + PLUGIN_OPTIONS]
    shorts = [o.short for o in OPTIONS if o.short]
    assert len(longs) == len(set(longs))
    assert len(shorts) == len(set(shorts))
    assert not set(options.OBSOLETE) & set(BY_LONG)


def _header(body: str) -> tuple[directives.Header, Collector]:
    diags = Collector("t.sbatch")
    header = directives.read_header(directives.split_lines("#!/bin/bash\n" + body + "\nhostname\n"), diags)
    return header, diags


def _spellings(option: Option) -> list[str]:
    forms = []
    value = f'"{option.example}"' if " " in (option.example or "") else option.example
    if option.arg == options.NONE:
        forms.append(f"--{option.long}")
        if option.short:
            forms.append(f"-{option.short}")
    elif option.arg == options.OPTIONAL:
        forms += [f"--{option.long}", f"--{option.long}={value}"]
        if option.short:
            forms += [f"-{option.short}", f"-{option.short}{value}"]
    else:
        forms += [f"--{option.long}={value}", f"--{option.long} {value}"]
        if option.short:
            forms += [f"-{option.short}{value}", f"-{option.short} {value}"]
    return forms


@pytest.mark.parametrize(
    ("option", "spelling"),
    [(o, s) for o in OPTIONS + PLUGIN_OPTIONS for s in _spellings(o)],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_every_option_parses_long_and_short(option: Option, spelling: str) -> None:
    header, diags = _header(f"#SBATCH {spelling}")
    assert [s.option for s in header.settings] == [option]
    assert header.unknown == ()
    codes = {d.code for d in diags} - {"SLURM-PLUGIN-OPTION"}
    assert codes == set()
    jobs = reader.read("#!/bin/bash\n#SBATCH " + spelling + "\nhostname\n", "t.sbatch", diags)
    assert len(jobs) == 1
    assert not [d for d in diags if d.code == "SLURM-BAD-VALUE"]


# ---------------------------------------------------------------------------
# Value parsers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30", 1800),
        ("0", 0),
        ("90", 5400),
        ("10:30", 630),
        ("01:00:00", 3600),
        ("100:00:00", 360000),
        ("1-12", 129600),
        ("2-03:04", 183840),
        ("1-00:00:01", 86401),
        ("1-", 86400),  # sbatch 22.05 takes it as one day
        ("UNLIMITED", None),
        ("infinite", None),
        ("-1", None),
    ],
)
def test_parse_time(text: str, seconds: int | None) -> None:
    assert options.parse_time(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "abc", "1:2:3:4", "1-2-3", "-5", "1.5", "-1-", ":30", "1d", "1-1:2:3:4", "٣"]
)
def test_parse_time_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        options.parse_time(text)


@pytest.mark.parametrize(
    ("seconds", "text"), [(None, "UNLIMITED"), (0, "00:00:00"), (3661, "01:01:01"), (90061, "1-01:01:01")]
)
def test_format_time(seconds: int | None, text: str) -> None:
    assert options.format_time(seconds) == text


@given(st.integers(min_value=0, max_value=10**8))
def test_format_time_round_trips(seconds: int) -> None:
    assert options.parse_time(options.format_time(seconds)) == seconds


@pytest.mark.parametrize(
    ("text", "mib"),
    [
        ("4000", 4000),
        ("0", 0),
        ("1024K", 1),
        ("1025k", 2),
        ("16M", 16),
        ("4G", 4096),
        ("4g", 4096),
        ("2T", 2097152),
    ],
)
def test_parse_memory(text: str, mib: int) -> None:
    assert options.parse_memory(text) == mib


@pytest.mark.parametrize("text", ["", "4B", "4TiB", "4Gfoo", "1.5G", "-1", "G", "4 G", "lots"])
def test_parse_memory_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        options.parse_memory(text)


@given(st.integers(min_value=0, max_value=10**9))
def test_format_memory_round_trips(mib: int) -> None:
    assert options.parse_memory(options.format_memory(mib)) == mib


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2", (2, None)), ("2-4", (2, 4)), ("1,4,8", (1, 8)), ("2-16:2", (2, 16)), ("4-4", (4, 4))],
)
def test_parse_nodes(text: str, expected: tuple[int, int | None]) -> None:
    assert options.parse_nodes(text) == expected
    low, high = expected
    assert options.parse_nodes(options.format_nodes(low, high))[0] == low


@pytest.mark.parametrize("text", ["", "4-2", "a", "2-", "-2", "1,,2"])
def test_parse_nodes_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        options.parse_nodes(text)


def test_parse_array_range_step_and_limit() -> None:
    spec = options.parse_array("0-99:4%10")
    assert spec.count == 25 and spec.max_concurrent == 10
    assert spec.indices[:3] == (0, 4, 8) and spec.indices[-1] == 96
    assert spec.spec == "0-99:4%10"


def test_parse_array_sparse_and_mixed() -> None:
    assert options.parse_array("1,3,7,42").indices == (1, 3, 7, 42)
    mixed = options.parse_array("0,6,16-20")
    assert mixed.indices == (0, 6, 16, 17, 18, 19, 20) and mixed.max_concurrent is None


def test_parse_array_bare_percent_means_no_limit() -> None:
    assert options.parse_array("1-10%").max_concurrent is None
    assert options.parse_array("1-10%a").max_concurrent is None  # read like atoi, as the controller does
    assert options.parse_array("1-10%2x").max_concurrent == 2


@pytest.mark.parametrize(
    ("text", "indices"),
    [("[0-2]", (0, 1, 2)), ("[1,3,5]%1", (1, 3, 5)), ("0-2,[4]", (0, 1, 2, 4)), ("[0-6:3]", (0, 3, 6)),
     ("1,,2", (1, 2)), (",1", (1,))],
)  # fmt: skip
def test_parse_array_takes_brackets_and_skips_empty_items(text: str, indices: tuple[int, ...]) -> None:
    spec = options.parse_array(text)
    assert (spec.indices, spec.count, spec.spec) == (indices, len(indices), text)


def test_parse_array_large_keeps_only_the_count() -> None:
    spec = options.parse_array("0-999999%50")
    assert spec.indices == () and spec.count == 1_000_000


@pytest.mark.parametrize(
    "text", ["", "0-x", "5-1", "1-10:0", "a", "1;2", "0-9999999", "[[0-2]", "[0-2]]", "]0-2[", ",", "0-2:"]
)
def test_parse_array_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        options.parse_array(text)


def test_parse_dependency_and() -> None:
    deps = options.parse_dependency("afterok:1:2,afterany:3")
    assert deps == (
        ir.Dependency(type="afterok", targets=("1", "2")),
        ir.Dependency(type="afterany", targets=("3",)),
    )


def test_parse_dependency_or_time_and_singleton() -> None:
    deps = options.parse_dependency("afterok:1:2?afterany:3?after:5+10?singleton")
    assert all(d.any_of for d in deps)
    assert deps[2] == ir.Dependency(type="after", targets=("5",), delay_s=600, any_of=True)
    assert deps[3].type == "singleton"


def test_parse_dependency_mixed_separators_are_any_of() -> None:
    deps = options.parse_dependency("afterok:1,afterany:2?afterok:3+5")
    assert [d.any_of for d in deps] == [True, True, True]
    assert deps[2] == ir.Dependency(type="afterok", targets=("3",), delay_s=300, any_of=True)


def test_parse_dependency_mixed_delays_split() -> None:
    deps = options.parse_dependency("after:1+5:2:3+5")
    assert [(d.targets, d.delay_s) for d in deps] == [(("1", "3"), 300), (("2",), None)]


def test_parse_dependency_variables_and_array_tasks() -> None:
    deps = options.parse_dependency("afterok:$jid1:${JID2}:123_4")
    assert deps[0].targets == ("$jid1", "${JID2}", "123_4")
    assert options.parse_dependency("4242") == (ir.Dependency(type="afterany", targets=("4242",)),)


@pytest.mark.parametrize(
    "text", ["afterfoo:1", "afterok:abc", "afterok:", "after:1+x", "x", "afterok:1,,afterok:2"]
)
def test_parse_dependency_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        options.parse_dependency(text)


@pytest.mark.parametrize(
    "text", ["afterok:1:2", "afterok:1?afterany:2", "after:5+10", "singleton", "afterok:1,singleton"]
)
def test_format_dependencies_round_trips(text: str) -> None:
    deps = options.parse_dependency(text)
    assert options.parse_dependency(options.format_dependencies(deps)) == deps


@pytest.mark.parametrize(
    ("text", "signal"),
    [
        ("B:USR1@300", ir.Signal("USR1", 300, batch_only=True)),
        ("R:TERM@60", ir.Signal("TERM", 60, reservation_too=True)),
        ("RB:USR2", ir.Signal("USR2", 60, batch_only=True, reservation_too=True)),
        ("SIGTERM@120", ir.Signal("TERM", 120)),
        ("USR1", ir.Signal("USR1", 60)),
        ("10@90", ir.Signal("USR1", 90)),
        ("sigusr2", ir.Signal("USR2", 60)),
    ],
)
def test_parse_signal(text: str, signal: ir.Signal) -> None:
    assert options.parse_signal(text) == signal
    assert options.parse_signal(options.format_signal(signal)) == signal


def test_parse_signal_takes_any_positive_number() -> None:
    assert options.parse_signal("99") == ir.Signal("99", 60)  # sbatch does not check the number
    assert options.parse_signal(options.format_signal(ir.Signal("99", 60))) == ir.Signal("99", 60)


@pytest.mark.parametrize("text", ["", "X:USR1", "FOO", "USR1@", "USR1@70000", "0", "B:"])
def test_parse_signal_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        options.parse_signal(text)


def test_parse_gres() -> None:
    assert options.parse_gres("gpu:a100:4,nvme:1") == (
        ir.GenericResource("gpu", 4, "a100"),
        ir.GenericResource("nvme", 1),
    )
    assert options.parse_gres("gpu") == (ir.GenericResource("gpu", 1),)
    assert options.parse_gres("gpu:tesla") == (ir.GenericResource("gpu", 1, "tesla"),)
    assert options.parse_gres("gres/gpu:1g.10gb:2") == (ir.GenericResource("gpu", 2, "1g.10gb"),)
    assert options.parse_gres("bandwidth:lustre:4G")[0].count == 4 * 1024**3
    assert options.parse_gres("none") == ()
    assert options.format_gres(options.parse_gres("gpu:a100:4,nvme:1")) == "gpu:a100:4,nvme:1"


@pytest.mark.parametrize("text", ["", "gpu:a100:x", "gpu:a:b:4", ":4", "help", "gpu,,nvme"])
def test_parse_gres_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        options.parse_gres(text)


def test_parse_gpus_and_tres() -> None:
    assert options.parse_gpus("a100:8") == (ir.GenericResource("gpu", 8, "a100"),)
    assert options.parse_gpus("2") == (ir.GenericResource("gpu", 2),)
    assert options.parse_tres("cpu=4,gres/gpu:a100=1") == (
        ir.GenericResource("cpu", 4, per="task"),
        ir.GenericResource("gpu", 1, "a100", per="task"),
    )
    for bad in ("", "a100:", "x", "gpu:two"):
        with pytest.raises(ValueError):
            options.parse_gpus(bad)
    with pytest.raises(ValueError):
        options.parse_tres("cpu")


def test_parse_licenses() -> None:
    assert options.parse_licenses("matlab:2,ansys@flex:1") == (
        ir.GenericResource("matlab", 2, per="job"),
        ir.GenericResource("ansys@flex", 1, per="job"),
    )
    assert len(options.parse_licenses("a|b")) == 2
    with pytest.raises(ValueError):
        options.parse_licenses("matlab:x")


def test_parse_mail_types() -> None:
    assert options.parse_mail_types("begin,END,TIME_LIMIT_90") == ("BEGIN", "END", "TIME_LIMIT_90")
    assert options.parse_mail_types("END,SOMETIMES") == ("END",)  # sbatch skips what it does not know
    assert options.unknown_mail_types("END,SOMETIMES") == ("SOMETIMES",)
    with pytest.raises(ValueError):
        options.parse_mail_types("SOMETIMES")


@pytest.mark.parametrize(
    ("text", "policy", "variables"),
    [
        ("ALL", "ALL", ()),
        ("NONE", "NONE", ()),
        ("NIL", "NIL", ()),
        ("ALL,CKPT=/fsx/ckpt,HOME", "ALL", (("CKPT", "/fsx/ckpt"), ("HOME", None))),
        ("A=1,B='x,y'", "LIST", (("A", "1"), ("B", "x,y"))),
        ("NONE,A=1", "NONE", (("A", "1"),)),  # sbatch does not check the list
        ("ALL,NONE", "ALL", ()),
        ("EQ=a=b", "LIST", (("EQ", "a=b"),)),
    ],
)
def test_parse_export(text: str, policy: str, variables: tuple[tuple[str, str | None], ...]) -> None:
    assert options.parse_export(text) == options.ExportSpec(policy, variables)


def test_parse_export_skips_empty_items() -> None:
    assert options.parse_export("A=1,,B") == options.ExportSpec("LIST", (("A", "1"), ("B", None)))
    assert options.parse_export("ALL,") == options.ExportSpec("ALL", ())


@pytest.mark.parametrize("text", [",", ""])
def test_parse_export_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        options.parse_export(text)


def test_keyword_values() -> None:
    assert options.parse_exclusive("user") == "user"
    assert options.parse_exclusive("TOPO") == "topo"
    assert options.parse_open_mode("a") == "append" and options.parse_open_mode("Truncate") == "truncate"
    assert options.parse_no_kill("off") is False and options.parse_no_kill("set") is True
    assert options.parse_priority("top") == "TOP" and options.parse_priority("100") == "100"
    assert options.parse_nice("-5") == -5
    assert options.parse_nice("abc") == 0 and options.parse_nice("5x") == 5  # strtoll, as sbatch reads it
    assert options.parse_priority("abc") == "0"
    assert options.parse_requeue("expedite") == "expedite"
    assert options.parse_switches("2@1:00:00") == "2@1:00:00"
    for parse, bad in [
        (options.parse_exclusive, "node"),
        (options.parse_open_mode, "x"),
        (options.parse_no_kill, "maybe"),
        (options.parse_priority, "-1"),
        (options.parse_nice, "99999999999"),
        (options.parse_requeue, "later"),
        (options.parse_switches, "x@1"),
        (options.parse_count, "0"),
        (options.parse_bit, "2"),
        (options.parse_yes_no, "true"),
        (options.parse_profile, "task,gpu"),
        (options.parse_string, ""),
    ]:
        with pytest.raises(ValueError):
            parse(bad)


@pytest.mark.parametrize(
    "text",
    ["16:00", "now+1hour", "now+60", "now + 2 days", "2010-01-20T12:34:00", "2026-12-01", "midnight",
     "teatime", "tomorrow", "12/25", "12/25/26", "4:30pm", "122526"],
)  # fmt: skip
def test_parse_date(text: str) -> None:
    assert options.parse_date(text) == text


@pytest.mark.parametrize("text", ["", "soon", "now+", "2026-13", "next tuesday", "now+1fortnight"])
def test_parse_date_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        options.parse_date(text)


def test_lookup_long_prefixes() -> None:
    assert options.lookup_long("nodes")[0] is BY_LONG["nodes"]
    assert options.lookup_long("part")[0] is BY_LONG["partition"]
    assert options.lookup_long("time-m")[0] is BY_LONG["time-min"]
    assert options.lookup_long("time")[0] is BY_LONG["time"]  # exact beats prefix
    option, candidates = options.lookup_long("cpus")
    assert option is None and candidates == ("cpus-per-gpu", "cpus-per-task")
    assert options.lookup_long("frobnicate") == (None, ())
