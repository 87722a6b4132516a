"""What a case's submitter gives it beside the script: variables of their environment, arguments of
their sbatch command line, and the files their job reads (inputs made before it: a listing of shards,
a cohort's sample sheet, the step eval picked). Without them both sides stop before the first
program, which proves nothing.

Both sides get the same. On Slurm, the variables are in the submitting shell and the arguments on
sbatch's command line. In the pods they are what the user adds after the translation said the job
needs them (TRANSLATE-SUBMITTER-VARIABLE): env entries, and the container's args. A file's path is
absolute (on the site's storage) or relative to the folder the job is submitted from.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Given:
    env: dict[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)


def _lines(template: str, count: int) -> str:
    return "".join(template.format(i) + "\n" for i in range(count))


COHORT = "ukb-wgs-2024"
# a cohort's sample sheet, as the pipeline's driver writes it before the chain (one sample a line)
_COHORT_FILES = {
    f"/lustre/cohorts/{COHORT}/samples.tsv": _lines("S{:04d}\tbatch-7", 32),
    f"/lustre/cohorts/{COHORT}/qc/.keep": "",
}

GIVEN: dict[str, Given] = {
    "cases__slurm__eval.sbatch": Given(
        env={"CKPT": "/fsx/checkpoints/llm-7b/run3"},
        files={f"/fsx/checkpoints/llm-7b/run3/step_{s}/config.json": "{}\n" for s in (1000, 2000)},
    ),
    "cases__slurm__storage_staging.sbatch": Given(
        env={"SAMPLE": "NA12878"},
        files={
            "/weka/genomics/bams/NA12878.bam": "",
            "/weka/genomics/bams/NA12878.bam.bai": "",
            "/gpfs/refs/GRCh38/GRCh38_full_analysis_set.fa": ">chr1\n",
        },
    ),
    "cases__slurm__mig_inference.sbatch": Given(args=("/fsx/audio/batch-0412",)),
    "sample-site__eval__eval_harness_array.sbatch": Given(
        env={"MODEL": "/fsx/checkpoints/ft/mistral7b-support-v7-123456"}
    ),
    "sample-site__sweeps__sft_sweep_agent.sbatch": Given(env={"SWEEP_ID": "northwind/sft/k3j9x2"}),
    "cases__chains__genome_assembly__trim_lanes.sbatch": Given(env={"SAMPLE": "NA12878"}),
    "cases__slurm__chains__align.sbatch": Given(env={"COHORT": COHORT}, files=_COHORT_FILES),
    "cases__slurm__chains__qc_per_sample.sbatch": Given(env={"COHORT": COHORT}, files=_COHORT_FILES),
    "cases__slurm__chains__notify_failure.sbatch": Given(env={"COHORT": COHORT}),
    "cases__slurm__chains__watch_progress.sbatch": Given(env={"COHORT": COHORT}),
    "cases__slurm__array_shards.sbatch": Given(
        files={"files.txt": _lines("/fsx/datasets/raw/c4-en/c4-train.{:05d}-of-01024.parquet", 100)}
    ),
    "sample-site__data__tokenize_shards.sbatch": Given(
        files={
            "/fsx/datasets/dedup/web-v3/shards.txt": _lines(
                "/fsx/datasets/dedup/web-v3/part-{:05d}.jsonl", 512
            )
        }
    ),
    "sample-site__data__verify_tokenized.sbatch": Given(
        files={f"/fsx/datasets/tokenized/web-v3/web-v3_{k:05d}.idx": "" for k in range(512)}
    ),
    "sample-site__training__export_release.sbatch": Given(
        files={"/fsx/eval/llm-13b/best_step.txt": "12000\n"}
    ),
}

NOTHING = Given()


def given(case: str) -> Given:
    return GIVEN.get(case, NOTHING)
