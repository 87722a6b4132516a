"""Reading sbatch scripts, wrappers and scrontab files into IR jobs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from one_line import validate_all

from migrate import ir
from migrate.diagnostics import Collector, Diagnostic
from migrate.serialize import job_from_dict, job_to_dict
from migrate.site.config import SpankOption
from migrate.translators.interfaces import ReadContext
from migrate.translators.shell.facts import BodyFacts
from migrate.translators.slurm import directives, reader

SHEBANG = "#!/bin/bash\n"


def read(text: str, path: str = "job.sbatch") -> tuple[list[ir.Job], list[Diagnostic]]:
    diags = Collector(path)
    jobs = reader.read(text, path, diags)
    for job in jobs:  # everything the reader builds survives the JSON round trip
        assert job_from_dict(job_to_dict(job)) == job
    return jobs, diags.items


def one(text: str) -> tuple[ir.Job, list[Diagnostic]]:
    jobs, diags = read(text)
    assert len(jobs) == 1
    return jobs[0], diags


def codes(diags: list[Diagnostic]) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in diags]


def script(*directive_lines: str, body: str = "srun hostname\n") -> str:
    return SHEBANG + "".join(f"#SBATCH {line}\n" for line in directive_lines) + body


# ---------------------------------------------------------------------------
# sniff
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (script("-N 2"), "sbatch"),
        ("#SBATCH -N 2\nhostname\n", "sbatch"),
        ("\ufeff#!/bin/bash\n#SBATCH -N1\n", "sbatch"),
        (SHEBANG + "srun ./a.out\n", "sbatch"),
        (SHEBANG + "python x.py --shard $SLURM_ARRAY_TASK_ID\n", "sbatch"),
        (SHEBANG + "jid=$(sbatch --parsable a.sbatch)\nsbatch -d afterok:$jid b.sbatch\n", "wrapper"),
        ("#SCRON -p cpu\n0 2 * * * /home/ops/cleanup.sh\n", "scrontab"),
        ("# ops crontab\n*/5 * * * * /opt/bin/check.sh\n@daily /opt/bin/report.py\n", "scrontab"),
        (SHEBANG + "echo hello\n", None),
        (
            SHEBANG
            + "# rotate slurm-*.out files; run sbatch elsewhere\nfind . -name 'slurm-*.out' -delete\n",
            None,
        ),
        (SHEBANG + "# srun is not called here\necho done\n", None),
        (SHEBANG + "exec salloc -N1 --gpus=1 \\\n  srun --pty bash -l\n", "salloc"),
        ("apiVersion: batch/v1\nkind: Job\n", None),
        ("0 2 * * * echo hi\n", None),  # a crontab line that runs no script
        ("", None),
        ("just some notes about #SBATCH lines\n", None),
        ("# Submitting jobs\n\nPut options at the top:\n\n```\n#SBATCH -N 2\n```\n", None),
        ("# notes\n\nUse scrontab like this:\n#SCRON -p cpu\n0 2 * * * /a.sh\n", None),
    ],
)
def test_sniff(text: str, kind: str | None) -> None:
    assert reader.script_kind(text) == kind
    assert reader.sniff(text) is (kind is not None)


def test_plain_script_gives_no_job() -> None:
    assert read(SHEBANG + "echo hello\n") == ([], [])


# ---------------------------------------------------------------------------
# directive syntax
# ---------------------------------------------------------------------------


def test_long_short_spaced_attached_and_several_per_line() -> None:
    validate_all(
        script("--nodes=2 -n 16", "--ntasks-per-node 8", "-c4 -t 1-12", "-pgpu,debug -A proj"),
        ir={
            "resources.nodes_min,tasks,tasks_per_node,cpus_per_task": (2, 16, 8, 4),
            "time_limit_s": 36 * 3600,
            "placement.partitions,account": (("gpu", "debug"), "proj"),
        },
        diagnostics=[],
    )


def test_bundled_short_flags() -> None:
    overcommit = ir.RawItem("--overcommit", "", 2, "#SBATCH")
    validate_all(
        "#SBATCH -OHN2\n#SBATCH -k",
        ir={"hold": True, "failure.no_kill": True, "resources.nodes_min": 2, "raw": (overcommit,)},
        diagnostics=[],
    )


@pytest.mark.parametrize(
    ("source", "fields", "diagnostics"),
    [
        # getopt: -k takes "N2" as its optional argument
        ("#SBATCH -kN2", {"resources.nodes_min": None}, [("SLURM-BAD-VALUE", 2)]),
        # a value on the next directive line
        ("#SBATCH --nodes\n#SBATCH 3", {"resources.nodes_min": 3}, []),
        # an unmatched quote spoils its own line only
        ("#SBATCH --job-name='oops\n#SBATCH -N 3", {"resources.nodes_min": 3}, ["SLURM-BAD-VALUE"]),
    ],
)
def test_where_a_value_ends(source: str, fields: dict[str, object], diagnostics: list[str]) -> None:
    validate_all(source, ir=fields, diagnostics=diagnostics)


def test_quotes_escapes_and_comments() -> None:
    validate_all(
        script(
            '--job-name="my job"',
            "--comment='a # not a comment' -N 4   # four nodes",
            r"--output=out\ file.log",
            "--constraint=a100#and this is a comment",
        ),
        ir={
            "name": "my job",
            "io.stdout": "out file.log",
            "resources.nodes_min,constraint": (4, "a100"),
            "raw": (ir.RawItem("--comment", "a # not a comment", 3, "#SBATCH"),),
        },
        diagnostics=[("SLURM-BAD-VALUE", 5)],  # the '#' glued to a100 is worth a warning
    )


def test_crlf_and_bom() -> None:
    validate_all(
        "\ufeff" + script("--nodes=2", "--job-name=win").replace("\n", "\r\n"),
        ir={"name": "win", "resources.nodes_min": 2, "script.body": "srun hostname\n"},
        # both are read as sbatch's text would be, and both make sbatch refuse the script
        diagnostics=[("SLURM-NO-SHEBANG", "error", 1), ("SLURM-DOS-LINE-BREAKS", "error", 1)],
    )


def test_directives_after_the_first_command_are_not_applied() -> None:
    validate_all(
        SHEBANG + "#SBATCH -N 2\n\n# a comment\necho start\n#SBATCH --mem=200G\n#SBATCH -N 9\n",
        ir={"resources.nodes_min,mem_per_node_mb": (2, None), "script.first_command_line": 5},
        diagnostics=[("SLURM-DIRECTIVE-AFTER-COMMAND", 6), ("SLURM-DIRECTIVE-AFTER-COMMAND", 7)],
    )


def test_blank_lines_and_comments_do_not_end_the_header() -> None:
    text = SHEBANG + "\n# resources\n#SBATCH -N 2\n\n   # indented comment\n#SBATCH -t 5\nhostname\n"
    validate_all(text, ir={"resources.nodes_min": 2, "time_limit_s": 300})


# ---------------------------------------------------------------------------
# every diagnostic code the reader emits
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#SBATCH -N 2\nhostname\n", [("SLURM-NO-SHEBANG", 1)]),
        (script("--frobnicate=yes"), [("SLURM-UNKNOWN-OPTION", 2)]),
        (script("-N 1", "-Z"), [("SLURM-UNKNOWN-OPTION", 3)]),
        (script("--cpus=4"), [("SLURM-UNKNOWN-OPTION", 2)]),
        (script("--cpu-bind=cores"), [("SLURM-UNKNOWN-OPTION", 2)]),
        (script("--time=10", "-N 1", "--time=20"), [("SLURM-REPEATED-OPTION", 4)]),
        (script("--workdir=/tmp"), [("SLURM-OBSOLETE-OPTION", 2)]),
        (script("--tasks-per-node=4"), [("SLURM-OBSOLETE-OPTION", 2)]),
        (script("--part=gpu"), [("SLURM-OBSOLETE-OPTION", 2)]),
        (script("--checkpoint=10"), [("SLURM-OBSOLETE-OPTION", 2)]),
        (script("-P 1234"), [("SLURM-OBSOLETE-OPTION", 2)]),
        (script("--time=abc"), [("SLURM-BAD-VALUE", 2)]),
        (script("--mem=4TiB"), [("SLURM-BAD-VALUE", 2)]),
        (script("--mail-type=END,SOMETIMES"), [("SLURM-BAD-VALUE", 2)]),
        (script("--array=0-x"), [("SLURM-BAD-VALUE", 2)]),
        (script("--dependency=afterfoo:1"), [("SLURM-BAD-VALUE", 2)]),
        (script("--job-name='unterminated"), [("SLURM-BAD-VALUE", 2)]),
        (script("--nodes"), [("SLURM-MISSING-VALUE", 2)]),
        (script("--nodes=", "-n 2"), [("SLURM-MISSING-VALUE", 2)]),
        (script("--time", "--nodes=2"), [("SLURM-MISSING-VALUE", 2)]),
        (script("--hold=yes"), [("SLURM-UNEXPECTED-VALUE", 2)]),
        (script("--exclusive user"), [("SLURM-UNEXPECTED-VALUE", 2)]),
        (script("-N 2 extra"), [("SLURM-UNEXPECTED-VALUE", 2)]),
        (script("-N 2", body="hostname\n#SBATCH -n 4\n"), [("SLURM-DIRECTIVE-AFTER-COMMAND", 4)]),
        (SHEBANG + "##SBATCH -p debug\n#SBATCH -N 1\nhostname\n", [("SLURM-COMMENTED-DIRECTIVE", 2)]),
        (SHEBANG + "# SBATCH -p debug\nhostname\n", [("SLURM-COMMENTED-DIRECTIVE", 2)]),
        (SHEBANG + "  #SBATCH -p debug\n#SBATCH -N 1\nhostname\n", [("SLURM-COMMENTED-DIRECTIVE", 2)]),
        (SHEBANG + "#sbatch -p debug\n#SBATCH -N 1\nhostname\n", [("SLURM-COMMENTED-DIRECTIVE", 2)]),
        (script("--nodes=${NODES}"), [("SLURM-TEMPLATED", 2)]),
        (script("-N 1", "--job-name=<NAME>"), [("SLURM-TEMPLATED", 3)]),
        (SHEBANG + "#SBATCH --nodes={{ nodes }}\nhostname\n", [("SLURM-TEMPLATED", 2)]),
        (script("--output=/scratch/$USER/out.log"), [("SLURM-DYNAMIC-VALUE", 2)]),
        (script("-N 1", "hetjob", "-N 2"), [("SLURM-HETJOB", 3)]),
        (script("-N 1", "--export=ALL,AWS_SECRET_ACCESS_KEY=abc"), [("SHELL-SECRET-LITERAL", 3)]),
    ],
)
def test_diagnostics(text: str, expected: list[tuple[str, int]]) -> None:
    validate_all(text, diagnostics=expected)


def test_repeated_option_names_both_lines() -> None:
    _, diags = one(script("--time=10", "-t 20"))
    (diag,) = diags
    assert "lines 2 and 3" in diag.message and "(20)" in diag.message


def test_unknown_option_suggests_the_nearest_name() -> None:
    job, diags = one(script("--ntask-per-node=8", "--gpu-per-node=8"))
    assert "did you mean --ntasks-per-node?" in diags[0].message
    assert "did you mean --gpus-per-node?" in diags[1].message
    assert [r.key for r in job.raw] == ["--ntask-per-node", "--gpu-per-node"]
    assert job.raw[0].value == "8"


def test_bad_value_is_kept_raw_and_the_rest_is_read() -> None:
    bad = ir.RawItem("--time", "abc", 2, "#SBATCH")
    validate_all(
        "#SBATCH --time=abc\n#SBATCH --nodes=2",
        ir={"raw": (bad,), "resources.nodes_min": 2},
        diagnostics=["SLURM-BAD-VALUE"],
    )


def test_self_resubmit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "analyze", lambda body, start, diags: BodyFacts(self_resubmit=True))
    validate_all(script("-N 1", body="srun a.out\nsbatch $0\n"), diagnostics=[("SLURM-SELF-RESUBMIT", 3)])


def test_plugin_options() -> None:
    validate_all(
        script(
            r"--container-image=nvcr.io\#nvidia/pytorch:24.03-py3",
            "--container-mounts=/fsx:/fsx,/data:/data:ro",
            "--container-workdir=/workspace",
            "--no-container-mount-home",
        ),
        ir={
            "components.0.containers.*.image": ["nvcr.io#nvidia/pytorch:24.03-py3"],
            "components.0.containers.0.runtime,workdir": ("pyxis", "/workspace"),
            "components.0.containers.0.mounts.1": ir.Mount("/data", "/data", read_only=True, line=3),
            "raw": (ir.RawItem("--no-container-mount-home", "", 5, "#SBATCH"),),
        },
        diagnostics=["SLURM-PLUGIN-OPTION"] * 4,
    )


def test_hash_inside_a_word_cuts_the_value_as_in_sbatch() -> None:
    validate_all(
        "#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.03-py3 -N 2",
        # the rest of the line is a comment
        ir={"components.0.containers.0.image": "nvcr.io", "resources.nodes_min": None},
        diagnostics=[("SLURM-BAD-VALUE", "warning", 2), ("SLURM-PLUGIN-OPTION", 2)],
    )


# ---------------------------------------------------------------------------
# IR fields
# ---------------------------------------------------------------------------


def test_resources() -> None:
    validate_all(
        script(
            "-N 2-4",
            "--mem=0",
            "--gres=gpu:a100:4,nvme:1",
            "--cpus-per-gpu=12",
            "--mem-per-gpu=80G",
            "--tmp=100G",
            "--exclusive",
            "--constraint='a100&ib'",
            "-L matlab:2",
        ),
        ir={
            "resources.nodes_min,nodes_max,mem_per_node_mb": (2, 4, 0),
            "resources.gpus_per_node,gpu_type,cpus_per_gpu,mem_per_gpu_mb": (4, "a100", 12, 81920),
            "resources.generic": (ir.GenericResource("nvme", 1),),
            "resources.tmp_disk_mb,exclusive,constraint": (102400, "node", "a100&ib"),
            "resources.licenses": (ir.GenericResource("matlab", 2, per="job"),),
        },
        diagnostics=[],
    )


TWO_TYPES = (ir.GpuCount("a100", 2), ir.GpuCount("v100", 1))
UNLIMITED = ir.RawItem("--time", "UNLIMITED", 2, "#SBATCH")
OCI_BUNDLE = ir.Container("/bundles/ubuntu", runtime="oci-bundle", line=2)


@pytest.mark.parametrize(
    ("source", "fields"),
    [
        ("#SBATCH -G 16", {"resources.gpus": 16}),
        ("#SBATCH --gpus=a100:8", {"resources.gpus,gpu_type": (8, "a100")}),
        ("#SBATCH --gpus-per-node=h100:8", {"resources.gpus_per_node,gpu_type": (8, "h100")}),
        ("#SBATCH --gpus-per-task=1", {"resources.gpus_per_task": 1}),
        ("#SBATCH --gres=gpu:2", {"resources.gpus_per_node": 2}),
        ("#SBATCH --tres-per-task=cpu=4,gres/gpu:1", {"resources.cpus_per_task,gpus_per_task": (4, 1)}),
        ("#SBATCH --mem-per-cpu=4000", {"resources.mem_per_cpu_mb": 4000}),
        ("#SBATCH --mincpus=16", {"resources.cpus_per_node": 16}),
        ("#SBATCH --exclusive=user", {"resources.exclusive": "user"}),
        ("#SBATCH --exclusive=topo", {"resources.exclusive": "topo"}),
        (
            "#SBATCH --gpus=a100:2,v100:1",
            {"resources.gpus,gpu_type,gpu_types": (3, None, TWO_TYPES), "raw": ()},
        ),
        ("#SBATCH --time=UNLIMITED", {"time_limit_s": None, "raw": (UNLIMITED,)}),  # None, with a raw note
        ("#SBATCH --no-requeue\n#SBATCH -H", {"failure.requeue": False, "hold": True}),
        ("#SBATCH --container=/bundles/ubuntu", {"components.0.containers": (OCI_BUNDLE,)}),
        ("#SBATCH --export=A=1,B", {"export": "A,B"}),
    ],
)
def test_options_read_into_fields(source: str, fields: dict[str, object]) -> None:
    validate_all(source, ir=fields, diagnostics=[])


def test_a_typed_and_an_untyped_gpu_count_keep_only_the_total_typed() -> None:
    validate_all("#SBATCH --gpus=a100:2,1", ir={"resources.gpus,gpu_types": (3, ()), "raw.0.key": "--gpus"})


def test_time_placement_failure_io_mail() -> None:
    validate_all(
        script(
            "--time=2-00:00:00",
            "--time-min=12:00:00",
            "--begin=now+1hour",
            "--deadline=2026-12-01T08:00:00",
            "--qos=high --priority=100 --nice=10 --reservation=maint",
            "-w node[01-04] -x node03 -M east",
            "--switches=1@10:00 --segment=4 --contiguous",
            "--requeue --signal=B:USR1@300 --no-kill",
            "-D /scratch/run -o %x-%j.out -e none -i in.txt --open-mode=append",
            "--mail-type=END --mail-type=FAIL --mail-user=me@example.org",
        ),
        ir={
            "time_limit_s,time_min_s": (172800, 43200),
            "begin,deadline": ("now+1hour", "2026-12-01T08:00:00"),
            "placement.qos,priority,nice,reservation": ("high", "100", 10, "maint"),
            "placement.nodelist,exclude,clusters": ("node[01-04]", "node03", "east"),
            "placement.topology": (
                ir.KeyValue("switches", "1@10:00"),
                ir.KeyValue("segment", "4"),
                ir.KeyValue("contiguous", "true"),
            ),
            "failure": ir.FailurePolicy(
                requeue=True, signal=ir.Signal("USR1", 300, batch_only=True), no_kill=True
            ),
            "io": ir.IOSpec("/scratch/run", "%x-%j.out", "/dev/null", "in.txt", "append"),
            "mail": ir.Mail(("END", "FAIL"), "me@example.org"),
            "storage.*.path,access,via": [
                ("/scratch/run", ir.READ_WRITE, "chdir"),
                ("%x-%j.out", ir.WRITE, "output"),
                ("in.txt", ir.READ, "input"),
            ],
        },
        diagnostics=[],
    )


def test_array_and_dependencies() -> None:
    validate_all(
        "#SBATCH --array=0-15:4%2\n#SBATCH -d afterok:11:12?afternotok:13",
        ir={
            "array": ir.ArraySpec("0-15:4%2", (0, 4, 8, 12), 4, 2),
            "dependencies": (
                ir.Dependency("afterok", ("11", "12"), any_of=True, line=3),
                ir.Dependency("afternotok", ("13",), any_of=True, line=3),
            ),
        },
    )


def test_export_environment() -> None:
    listed = (
        ir.EnvVar("CKPT", "/fsx/ckpt", origin="sbatch-export", line=2),
        ir.EnvVar("HOME", None, origin="sbatch-export", line=2),
    )
    validate_all("#SBATCH --export=ALL,CKPT=/fsx/ckpt,HOME", ir={"export,environment": ("ALL", listed)})


def test_unmapped_options_are_raw_items_with_lines() -> None:
    validate_all(
        script("--wckey=projA", "--comment=hi", "--hint=nomultithread", "--acctg-freq=task=30"),
        ir={
            "raw.*.key,value,line,origin": [
                ("--wckey", "projA", 2, "#SBATCH"),
                ("--comment", "hi", 3, "#SBATCH"),
                ("--hint", "nomultithread", 4, "#SBATCH"),
                ("--acctg-freq", "task=30", 5, "#SBATCH"),
            ]
        },
    )


def test_templated_values_are_kept_verbatim() -> None:
    validate_all(
        script("--job-name=${RUN}", "--partition=${PART}", "--nodes=${NODES}"),
        ir={
            "templated,name": (True, "${RUN}"),
            "placement.partitions": ("${PART}",),
            "raw": (ir.RawItem("--nodes", "${NODES}", 4, "#SBATCH"),),
        },
    )


def test_jinja_expressions_with_spaces_and_statement_lines() -> None:
    text = (
        SHEBANG + "#SBATCH --nodes={{ nodes }}\n{% if gpu %}\n#SBATCH --gpus-per-node={{ g | default(8) }}\n"
    )
    text += "{% endif %}\nsrun {{ cmd }}\n"
    fields = {"templated": True, "raw.*.value": ["{{nodes}}", "{{g|default(8)}}"]}
    validate_all(text, ir=fields, diagnostics=["SLURM-TEMPLATED"])


def test_hetjob_components() -> None:
    validate_all(
        script(
            "--job-name=rl -t 10:00:00 -p gpu -N 1 --gres=gpu:4",
            "hetjob",
            "-p cpu -N 4 -c 1",
            "packjob",
            "-N 2",
        ),
        ir={
            "components.*.name": ["het0", "het1", "het2"],
            "components.*.resources.nodes_min": [1, 4, 2],
            "components.0.resources.gpus_per_node": 4,
            "components.1.resources.cpus_per_task": 1,
            "placement.partitions": ("gpu",),
            "raw": (ir.RawItem("--partition", "cpu", 4, "#SBATCH", component=1),),
            "total_nodes()": 7,
        },
        diagnostics=["SLURM-HETJOB", "SLURM-OBSOLETE-OPTION"],
    )


def test_hetjob_separates_only_as_the_first_word() -> None:
    # checked with sbatch 22.05: a value or a later word "hetjob" starts no component
    validate_all(
        script("-N 1", "--comment=my-hetjob-run -t 5 hetjob", "-N 2"),
        ir={"components.*.resources.nodes_min": [2]},
        diagnostics=[("SLURM-HETJOB", 3), ("SLURM-REPEATED-OPTION", 4)],
    )


def test_options_on_the_separator_line_are_ignored() -> None:
    validate_all(
        script("-N 1", "HETJOB -N 2", "-c 2"),
        ir={"components.*.resources.nodes_min": [1, None], "components.1.resources.cpus_per_task": 2},
        diagnostics=[("SLURM-HETJOB", "warning"), ("SLURM-HETJOB", "info")],
    )


def test_repeats_in_different_components_are_not_repeats() -> None:
    validate_all(script("-N 1", "hetjob", "-N 2"), diagnostics=[("SLURM-HETJOB", 3)])


def test_body_facts_are_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    srun0 = ir.Launcher("srun", (ir.KeyValue("--het-group", "0"),), line=6)
    srun1 = ir.Launcher("srun", (ir.KeyValue("het-group", "1"),), line=7)
    facts = BodyFacts(
        launchers=(srun0, srun1),
        containers=(ir.Container("img:1", runtime="apptainer", line=7),),
        modules=("cuda/12",),
        software_envs=(ir.KeyValue("venv", "/fsx/venv"),),
        environment=(ir.EnvVar("NCCL_DEBUG", "WARN", line=5),),
        storage=(ir.StoragePath("/fsx/data", ir.READ, line=6),),
        monitoring=(ir.MonitoringHook("nvidia-smi", line=6),),
        slurm_vars=("SLURM_JOB_ID",),
        statements=3,
        understood=2,
        raw=(ir.RawItem("trap", "USR1", 5, "body"),),
    )
    seen: list[tuple[str, int]] = []

    def fake(body: str, start: int, diags: Collector) -> BodyFacts:
        seen.append((body, start))
        return facts

    monkeypatch.setattr(reader, "analyze", fake)
    text = script("-N 1", "hetjob", "-N 2", body="export NCCL_DEBUG=WARN\nsrun a : b\nsrun c\n")
    job, _ = one(text)
    assert seen == [("export NCCL_DEBUG=WARN\nsrun a : b\nsrun c\n", 5)]
    assert job.components[0].launchers == (srun0,) and job.components[1].launchers == (srun1,)
    assert job.components[1].containers[0].image == "img:1"
    assert job.components[0].environment == facts.environment
    assert (job.modules, job.software_envs, job.monitoring) == (
        facts.modules,
        facts.software_envs,
        facts.monitoring,
    )
    assert facts.storage[0] in job.storage and facts.raw[0] in job.raw
    assert job.script == ir.ScriptInfo(
        shell="bash",
        statements=3,
        understood=2,
        slurm_vars=("SLURM_JOB_ID",),
        first_command_line=5,
        body="export NCCL_DEBUG=WARN\nsrun a : b\nsrun c\n",
        header="#!/bin/bash\n#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 2\n",
    )


def test_directives_and_header_as_written() -> None:
    text = (
        "#!/bin/bash\n# train on two nodes\n#SBATCH -N 2 --frobnicate=1\n"
        "#SBATCH --export=ALL,HF_TOKEN=hf_abcdefghijklmnopqrstuvwx\n#SBATCH hetjob\n#SBATCH --time 10\n"
        "\nsrun hostname\n"
    )
    job, _ = one(text)
    assert job.directives == (
        ir.Directive("nodes", "-N 2", 3),
        ir.Directive("frobnicate", "--frobnicate=1", 3),
        ir.Directive("export", "--export=ALL,HF_TOKEN", 4),
        ir.Directive("time", "--time=10", 6, component=1),
    )
    assert job.script is not None and job.script.header == (
        "#!/bin/bash\n# train on two nodes\n#SBATCH -N 2 --frobnicate=1\n"
        "#SBATCH --export=ALL,HF_TOKEN\n#SBATCH hetjob\n#SBATCH --time 10\n"
    )
    assert job.script.header + job.script.body == text.replace("=hf_abcdefghijklmnopqrstuvwx", "")


def test_wrappers_and_salloc_helpers_have_no_directives() -> None:
    validate_all(SHEBANG + "jid=$(sbatch --parsable -N 2 a.sbatch)\n", ir={"directives": ()})
    # an salloc helper's options still count
    validate_all(SHEBANG + "salloc -N 2 --time=1:00:00\n", ir={"directives": (), "resources.nodes_min": 2})


def test_analysis_failure_does_not_lose_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(body: str, start: int, diags: Collector) -> BodyFacts:
        raise RuntimeError("boom")

    monkeypatch.setattr(reader, "analyze", broken)
    validate_all("#SBATCH -N 2", ir={"resources.nodes_min": 2}, diagnostics=["SHELL-UNPARSED"])


@pytest.mark.parametrize(
    ("shebang", "shell"),
    [
        ("#!/bin/bash -l", "bash"),
        ("#!/usr/bin/env bash", "bash"),
        ("#!/usr/bin/env -S zsh -f", "zsh"),
        ("#!", None),
    ],
)
def test_shell_from_shebang(shebang: str, shell: str | None) -> None:
    validate_all(shebang + "\n#SBATCH -N 1\nhostname\n", ir={"script.shell": shell})


def test_job_identity() -> None:
    path = "/site/train.sbatch"
    source = ir.SourceRef(path, "slurm", 1, 3)
    validate_all("#SBATCH -J x", path=path, ir={"id,kind,source": (path, "sbatch", source)})


# ---------------------------------------------------------------------------
# wrappers and scrontab
# ---------------------------------------------------------------------------


def test_wrapper(monkeypatch: pytest.MonkeyPatch) -> None:
    sub = ir.Submission("train.sbatch", captures="jid", parsable=True, line=2)
    monkeypatch.setattr(reader, "analyze", lambda body, start, diags: BodyFacts(submits=(sub,)))
    validate_all(
        SHEBANG + "jid=$(sbatch --parsable train.sbatch)\n",
        path="submit.sh",
        ir={"id,kind,submits": ("submit.sh", "wrapper", (sub,)), "script.first_command_line": 2},
        diagnostics=[],
    )


SCRONTAB = """\
# ops crontab
#SCRON -p cpu -t 00:10:00
#SCRON --qos=maint -J purge
0 2 * * * /home/ops/bin/cleanup.sh

#SCRON -t 5 -o /logs/hc-%j.out
*/30 * * * * /home/ops/bin/check_fs.sh /fsx
@daily /home/ops/bin/smoke.sh
"""


def test_scrontab_entries() -> None:
    jobs, diags = read(SCRONTAB, "ops.cron")
    assert [j.id for j in jobs] == ["ops.cron@4", "ops.cron@7", "ops.cron@8"]
    assert all(j.kind == "scrontab" for j in jobs)
    first, second, third = jobs
    assert first.schedule == ir.Schedule("0 2 * * *", line=4)
    assert (first.name, first.placement.partitions, first.placement.qos, first.time_limit_s) == (
        "purge",
        ("cpu",),
        "maint",
        600,
    )
    assert second.io.stdout == "/logs/hc-%j.out" and second.time_limit_s == 300
    assert third.schedule == ir.Schedule("@daily", line=8) and third.time_limit_s is None
    assert third.script is not None and third.script.body == "/home/ops/bin/smoke.sh\n"
    assert codes(diags) == [
        ("SLURM-SCRONTAB-ENTRY", 4),
        ("SLURM-SCRONTAB-ENTRY", 7),
        ("SLURM-SCRONTAB-ENTRY", 8),
    ]


def test_scrontab_entries_keep_their_directives() -> None:
    jobs, _ = read(SCRONTAB, "ops.cron")
    first = jobs[0]
    assert [(d.option, d.text, d.line) for d in first.directives] == [
        ("partition", "-p cpu", 2),
        ("time", "-t 00:10:00", 2),
        ("qos", "--qos=maint", 3),
        ("job-name", "-J purge", 3),
    ]
    assert first.script is not None and first.script.header == ""  # the entry is its command only


def test_scrontab_problems() -> None:
    text = "#SCRON --bogus\n0 2 * * * /x.sh\n@reboot /y.sh\nnot a cron line\n#SCRON -p cpu\n"
    jobs, diags = read(text, "c")
    assert [j.id for j in jobs] == ["c@2"]
    assert codes(diags) == [
        ("SLURM-UNKNOWN-OPTION", 1),
        ("SLURM-SCRONTAB-ENTRY", 2),
        ("SLURM-BAD-VALUE", 3),
        ("SLURM-BAD-VALUE", 4),
        ("SLURM-COMMENTED-DIRECTIVE", 5),
    ]


# ---------------------------------------------------------------------------
# the reader never raises
# ---------------------------------------------------------------------------

VALID = script(
    "--job-name=train -N 2 --ntasks-per-node=8",
    "--gres=gpu:a100:8 --mem=0 --time=1-00:00:00",
    "--array=0-9%2 --dependency=afterok:1?singleton",
    "--signal=B:USR1@300 --export=ALL,X=1",
    "hetjob",
    "-N 1 -c 4",
    body="module load cuda\nsrun --het-group=0 python train.py\n",
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    diags = Collector("x")
    jobs = reader.read(text, "x", diags)
    assert isinstance(jobs, list)
    reader.sniff(text)


_PIECES = st.sampled_from(
    ["#SBATCH ", "-", "--", "=", " ", "\n", "'", '"', "\\", "#", "hetjob", "${X}", "{{ y }}", "<Z>", ":", ",",
     "?", "%", "@", "+", "0", "99", "-N", "--time", "--gres", "gpu", "\r", "\ufeff", "#SCRON ",
     "* * * * * /a.sh\n"]
)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_never_raises_on_mutated_scripts(data: st.DataObject) -> None:
    text = VALID
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 8))
        text = text[:at] + data.draw(_PIECES) + text[at + cut :]
    diags = Collector("m")
    jobs = reader.read(text, "m", diags)
    for job in jobs:
        assert job_from_dict(job_to_dict(job)) == job
    assert all(d.code != "INTERNAL-ERROR" for d in diags)


def test_the_valid_script_is_clean() -> None:
    fields = {"components.*.name": ["het0", "het1"], "array.count": 10, "failure.signal.name": "USR1"}
    validate_all(VALID, ir=fields, diagnostics=["SLURM-HETJOB"])


def test_split_lines() -> None:
    assert directives.split_lines("\ufeffa\r\nb\n\nc") == ["a", "b", "", "c"]
    assert directives.split_lines("") == []


def test_dynamic_output_path_is_kept_and_stored() -> None:
    stored = ir.StoragePath("/scratch/$USER/%j.log", ir.WRITE, "output", 2)
    validate_all(
        "#SBATCH --output=/scratch/$USER/%j.log",
        ir={"io.stdout": "/scratch/$USER/%j.log", "storage": (stored,)},
        diagnostics=[("SLURM-DYNAMIC-VALUE", 2)],
    )


def test_parse_command_line_stops_at_the_script() -> None:
    argv = ["--parsable", "-d", "afterok:$jid", "-N2", "train.sbatch", "--lr", "3e-4"]
    words = [directives.Word(w, 7) for w in argv]
    diags = Collector("w.sh")
    settings, unknown, rest = directives.parse_command_line(words, diags)
    assert [(s.option.long, s.value) for s in settings] == [
        ("parsable", None),
        ("dependency", "afterok:$jid"),
        ("nodes", "2"),
    ]
    assert unknown == [] and [w.text for w in rest] == ["train.sbatch", "--lr", "3e-4"]
    assert diags.items == []


def test_an_salloc_helper_is_an_interactive_job_sized_by_its_options() -> None:
    text = (
        "#!/bin/bash\n"
        "part=${1:-gpu}\n"
        "exec salloc --partition=$part -N 2 --gpus-per-node=4 --time=2:00:00 \\\n"
        "    --job-name=dev srun --pty bash -l\n"
    )
    diags = Collector("dev.sh")
    (job,) = reader.read(text, "dev.sh", diags)
    assert (job.kind, job.name, job.time_limit_s) == ("salloc", "dev", 7200)
    assert job.components[0].resources.nodes_min == 2
    assert job.placement.partitions == ("$part",)
    dynamic = [d for d in diags.items if d.code == "SLURM-DYNAMIC-VALUE"]
    assert [(d.line, "the shell sets it" in d.message) for d in dynamic] == [(3, True)]
    assert [launcher.name for launcher in job.components[0].launchers] == ["srun"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="#SBATCHRON \n\r\tx", max_size=60))
def test_line_starting_finds_what_a_multiline_anchor_finds(text: str) -> None:
    import re

    for prefix in ("#SBATCH", "#SCRON"):
        m = re.compile("^" + prefix, re.MULTILINE).search(text)
        assert reader._line_starting(text, prefix) == (m.start() if m else -1)


def test_shifter_image_is_the_container_of_the_job_and_its_modules_stay_raw() -> None:
    text = (
        SHEBANG + "#SBATCH -C gpu\n#SBATCH --image=docker:nersc/pytorch:24.06.01\n#SBATCH --module=gpu,nccl\n"
        "srun shifter python train.py\n"
    )
    checked = validate_all(
        text,
        ir={
            "components.0.containers.*.image": ["docker:nersc/pytorch:24.06.01"],
            "components.0.containers.0.runtime,line": ("shifter", 3),
            "raw": (ir.RawItem("--module", "gpu,nccl", 4, "#SBATCH"),),
        },
        diagnostics=[("SLURM-PLUGIN-OPTION", "info", 3), ("SLURM-PLUGIN-OPTION", "info", 4)],
    )
    assert all("shifter SPANK plugin" in d.message for d in checked.diagnostics)


def test_shifter_volumes_are_mounts_of_the_job_image_and_its_long_spellings_read_the_same() -> None:
    text = (
        SHEBANG + "#SBATCH --volume=/pscratch/a:/input;/pscratch/b:/output:ro\n"
        "#SBATCH --shifter.image=docker:nersc/app:1\n#SBATCH --shifter.volume=/global/cfs/m1:/data\n"
        "#SBATCH --ccm\nshifter prog /input/x /elsewhere/y\n"
    )
    validate_all(
        text,
        ir={
            "components.0.containers.*.image": ["docker:nersc/app:1"],
            "components.0.containers.0.runtime": "shifter",
            "components.0.containers.0.mounts.*.source,target,read_only": [
                ("/pscratch/a", "/input", False),
                ("/pscratch/b", "/output", True),
                ("/global/cfs/m1", "/data", False),
            ],
            # /input/x is inside a volume: the host folder stands for it; /elsewhere is the body's own
            "storage.*.path": ["/pscratch/a", "/pscratch/b", "/global/cfs/m1", "/elsewhere/y"],
            "raw": (ir.RawItem("--ccm", "", 5, "#SBATCH"),),
        },
        diagnostics=["SLURM-PLUGIN-OPTION"] * 4,
    )


def test_the_sites_own_spank_options_are_read_as_raw_items_naming_their_plugin() -> None:
    site = (
        SpankOption("ssd-size", "nvme-scratch"),
        SpankOption("ssd-keep", "nvme-scratch", "none"),
        SpankOption("trace", "tracer", "optional"),
    )
    text = SHEBANG + "#SBATCH --ssd-size 800G --ssd-keep\n#SBATCH --trace --burst-tier=gold\nhostname\n"
    diags = Collector("t")
    (job,) = reader.read(text, "t", diags, ReadContext(spank=site))
    assert [(r.key, r.value) for r in job.raw] == [
        ("--ssd-size", "800G"),
        ("--ssd-keep", ""),
        ("--trace", ""),
        ("--burst-tier", "gold"),
    ]
    assert [(d.code, d.line) for d in diags.items] == [
        ("SLURM-PLUGIN-OPTION", 2),
        ("SLURM-PLUGIN-OPTION", 2),
        ("SLURM-PLUGIN-OPTION", 3),
        ("SLURM-UNKNOWN-OPTION", 3),
    ]
    assert "nvme-scratch SPANK plugin (listed in migrate.yaml spank_options)" in diags.items[0].message
    assert diags.items[3].severity == "error" and "under spank_options" in diags.items[3].message
    (plain,) = reader.read(text, "t", Collector("t"))
    # without the site's list, all are unknown
    assert [r.key for r in plain.raw] == ["--ssd-size", "--ssd-keep", "--trace", "--burst-tier"]


def test_a_site_option_abbreviates_and_wins_over_a_known_plugins_of_its_name() -> None:
    site = (SpankOption("image", "site-images"),)
    diags = Collector("t")
    text = SHEBANG + "#SBATCH --image=x:1\n#SBATCH --ssd=1\nhostname\n"
    (job,) = reader.read(text, "t", diags, ReadContext(spank=site))
    assert job.components[0].containers == ()  # not Shifter's here
    assert [r.key for r in job.raw] == ["--image", "--ssd"]
    assert "site-images" in diags.items[0].message


@pytest.mark.parametrize(
    ("options", "tasks", "per_node", "gpus"),
    [
        # checked on the sandbox: SLURM_NTASKS=16 (8 a node, no SLURM_NTASKS_PER_NODE); -n 6 gets 3 GPUs
        ("-N 2 --gpus-per-node=4 --ntasks-per-gpu=2", 16, 8, 8),
        ("-n 6 --ntasks-per-gpu=2", 6, 6, 3),
        ("--gpus=4 --ntasks-per-gpu=3", 12, 12, 4),
    ],
)
def test_ntasks_per_gpu_gives_the_task_count_sbatch_derives(
    options: str, tasks: int, per_node: int, gpus: int
) -> None:
    # sbatch sets SLURM_NTASKS, not SLURM_NTASKS_PER_NODE: tasks_per_node stays unset
    derived = "resources.computed_tasks(),computed_tasks_per_node(),computed_gpus(),tasks_per_node"
    validate_all("#SBATCH " + options, ir={derived: (tasks, per_node, gpus, None)})
