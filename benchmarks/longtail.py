"""Grow corpus variants to the sizes real job repositories have.

The corpus files are short (sbatch median about 0.8 KB). Public job
repositories hold longer ones with a long tail: sbatch scripts median
1.1-2.1 KB, 90th percentile 4.5-5 KB, up to 16 KB; manifests median 1.7 KB,
90th percentile 9 KB, multi-document bundles up to 20 KB. A file's target
size is drawn from a log-normal with that median and 90th percentile, and a
variant shorter than its target grows by blocks the way such files grow:
argument arrays, functions, here-documents, nested loops and conditionals,
``case`` dispatch (scripts); more documents with many env entries, volumes
and init containers, and ConfigMaps holding scripts (manifests).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

# (median bytes, 90th percentile bytes, largest bytes)
SCRIPT_SIZES = (1500, 4800, 15_500)
MANIFEST_SIZES = (700, 11_000, 19_000)  # drawn; the corpus variant itself is the floor
_Z90 = 1.2816  # the standard normal's 90th percentile


def target_size(sizes: tuple[int, int, int], rng: random.Random) -> int:
    median, p90, largest = sizes
    sigma = math.log(p90 / median) / _Z90
    return min(largest, round(median * math.exp(rng.gauss(0.0, sigma))))


def growable_script(text: str) -> bool:
    """Plain sh/bash scripts only: a Jinja template would read ``{#`` in ``${#a[@]}`` as a comment."""
    first = text.split("\n", 1)[0]
    return first.startswith("#!") and "sh" in first and "{{" not in text and "{%" not in text


# ---------------------------------------------------------------------------
# shell blocks
# ---------------------------------------------------------------------------

_MODULES = ("cuda/12.1", "cuda/11.8", "gcc/12.2.0", "openmpi/4.1.5", "nccl/2.18.3", "anaconda3/2023.09")
_MODELS = ("llama-7b", "gpt2-xl", "vit-large", "resnet152", "t5-3b", "bert-base")
_STAGES = ("prepare", "train", "eval", "export", "report")


class _Shell:
    """Blocks of shell text; ``n`` makes names distinct inside one file."""

    def __init__(self, serial: int, rng: random.Random) -> None:
        self.serial = serial
        self.rng = rng
        self.n = 0

    def block(self) -> str:
        self.n += 1
        makers: tuple[Callable[[], str], ...] = (
            self.modules,
            self.argument_array,
            self.function,
            self.heredoc,
            self.nested_loops,
            self.dispatch,
            self.exports,
            self.steps,
        )
        # Commands, exports and arrays are what long scripts hold most; dispatch and here-documents less.
        return self.rng.choices(makers, weights=(3, 2, 2, 1, 2, 1, 3, 4))[0]()

    def test(self, condition: str) -> str:
        """Most scripts test with ``[ ]``; some with bash's ``[[ ]]``."""
        return f"[[ {condition} ]]" if self.rng.random() < 0.3 else f"[ {condition} ]"

    def modules(self) -> str:
        picked = self.rng.sample(_MODULES, self.rng.randrange(1, 4))
        lines = ["module purge", *(f"module load {m}" for m in picked)]
        if self.rng.random() < 0.5:
            lines.append(f"source activate /opt/envs/env{self.rng.randrange(1, 40)}")
        return "\n".join(lines)

    def argument_array(self) -> str:
        rng, n = self.rng, self.n
        args = [
            f'  --model "${{MODEL:-{rng.choice(_MODELS)}}}"',
            f"  --lr {rng.choice(('1e-4', '3e-4', '5e-5', '2e-5'))}",
            f"  --batch-size {rng.choice((8, 16, 32, 64, 128))}",
            f"  --epochs {rng.randrange(1, 100)}",
            f'  --output-dir "$RUN_DIR/out{n}"',
            f"  --seed {self.serial + n}",
            f"  --warmup-steps {rng.randrange(0, 4000, 100)}",
            '  --log-every "${LOG_EVERY:-50}"',
        ]
        picked = args[: rng.randrange(3, len(args) + 1)]
        resuming = self.test('-n "${RESUME:-}"')
        return "\n".join(
            [
                f"declare -a ARGS_{n}=(",
                *picked,
                ")",
                f'if {resuming}; then ARGS_{n}+=(--resume "$RESUME"); fi',
                f'echo "args: ${{#ARGS_{n}[@]}} options"',
            ]
        )

    def function(self) -> str:
        n, rng = self.n, self.rng
        out_of_tries = rng.choice(("(( tries <= 0 ))", '[ "$tries" -le 0 ]'))
        shapes = (
            [
                f"log_{n}() {{",
                '  local level="$1"; shift',
                '  printf \'[%s] %s %s\\n\' "$(date -Is)" "$level" "$*" >&2',
                "}",
                f'log_{n} INFO "stage {n} of run {self.serial}"',
            ],
            [
                f"retry_{n}() {{",
                f"  local tries={rng.randrange(2, 6)} delay={rng.randrange(5, 60)}",
                '  until "$@"; do',
                "    tries=$((tries - 1))",
                f"    if {out_of_tries}; then",
                '      echo "giving up: $*" >&2; return 1',
                "    fi",
                '    sleep "$delay"',
                "  done",
                "}",
                f'retry_{n} rsync -a "$DATA_DIR/" "$TMPDIR/data{n}/"',
            ],
            [
                f"cleanup_{n}() {{",
                f'  rm -rf "${{TMPDIR:-/tmp}}/scratch{n}"',
                '  echo "cleaned up after $SLURM_JOB_ID"',
                "}",
                f"trap cleanup_{n} EXIT",
            ],
        )
        return "\n".join(rng.choice(shapes))

    def heredoc(self) -> str:
        n, rng = self.n, self.rng
        quote = rng.random() < 0.4
        mark = f"'EOF{n}'" if quote else f"EOF{n}"
        body = [
            f"model: {rng.choice(_MODELS)}",
            f"batch_size: {rng.choice((8, 16, 32, 64))}",
            "nodes: $SLURM_JOB_NUM_NODES" if not quote else "nodes: auto",
            f"steps: {rng.randrange(1000, 200000, 1000)}",
            "data:",
            f"  train: /lustre/datasets/set{rng.randrange(1, 30)}/train",
            f"  valid: /lustre/datasets/set{rng.randrange(1, 30)}/valid",
        ]
        head = ['mkdir -p "$RUN_DIR"', f'cat > "$RUN_DIR/config{n}.yaml" <<{mark}']
        return "\n".join([*head, *body, f"EOF{n}"])

    def nested_loops(self) -> str:
        n, rng = self.n, self.rng
        done = self.test(f'-f "$RUN_DIR/shard_${{shard}}.done{n}"')
        return "\n".join(
            [
                f"for shard in $(seq 0 {rng.randrange(3, 64)}); do",
                f"  if {done}; then",
                "    continue",
                "  fi",
                f"  for attempt in {' '.join(str(i) for i in range(1, rng.randrange(3, 6)))}; do",
                f'    if srun --ntasks={rng.randrange(1, 9)} python preprocess.py --shard "$shard"; then',
                f'      touch "$RUN_DIR/shard_${{shard}}.done{n}"',
                "      break",
                '    elif [ "$attempt" -ge 3 ]; then',
                '      echo "shard $shard failed" >&2',
                "    fi",
                "    sleep " + rng.choice(("$((attempt * 10))", "10", "30", '"$BACKOFF"')),
                "  done",
                "done",
            ]
        )

    def dispatch(self) -> str:
        stages = self.rng.sample(_STAGES, 3)
        lines = [f'case "${{STAGE_{self.n}:-{stages[0]}}}" in']
        for stage in stages:
            lines += [f"  {stage})", f'    srun python {stage}.py --config "$RUN_DIR/{stage}.yaml"', "    ;;"]
        lines += ["  *)", '    echo "unknown stage" >&2', "    exit 2", "    ;;", "esac"]
        return "\n".join(lines)

    def exports(self) -> str:
        rng = self.rng
        pairs = [
            ("NCCL_DEBUG", rng.choice(("WARN", "INFO"))),
            ("NCCL_IB_HCA", "mlx5"),
            ("NCCL_SOCKET_IFNAME", rng.choice(("ib0", "eth0", "hsn0"))),
            ("OMP_NUM_THREADS", str(rng.choice((1, 4, 8)))),
            ("HF_HOME", f"/scratch/cache{rng.randrange(1, 20)}/hf"),
            ("MASTER_PORT", str(29500 + rng.randrange(1, 400))),
            ("PYTHONUNBUFFERED", "1"),
            ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"),
        ]
        picked = rng.sample(pairs, rng.randrange(2, len(pairs)))
        lines = [f"export {k}={v}" for k, v in picked]
        lines.append('export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)')
        return "\n".join(lines)

    def steps(self) -> str:
        rng, n = self.rng, self.n
        return "\n".join(
            [
                f"srun --ntasks-per-node={rng.choice((1, 4, 8))} --cpus-per-task={rng.choice((4, 8, 16))} \\",
                f"     python train.py --stage {n} \\",
                f'     --data "$DATA_DIR" --out "$RUN_DIR/step{n}" > "$RUN_DIR/step{n}.log" 2>&1',
                f"status_{n}=$?",
                f'[ "$status_{n}" -eq 0 ] || {{ echo "step {n} failed" >&2; exit "$status_{n}"; }}',
            ]
        )


def grow_script(text: str, target: int, serial: int, rng: random.Random) -> str:
    """Blocks added after the header and the first commands until the script reaches ``target`` bytes."""
    if len(text) >= target or not growable_script(text):
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split("\n")
    at = _after_header(lines)
    shell = _Shell(serial, rng)
    blocks: list[str] = []
    size = len(text)
    while size < target:
        block = shell.block() + "\n"
        blocks.append(block)
        size += len(block) + 1
    grown = "\n".join(blocks).replace("\n", newline).split("\n")
    lines[at:at] = grown
    return "\n".join(lines)


def _after_header(lines: list[str]) -> int:
    """The line after the shebang, the directives and the comments that follow them."""
    for i, line in enumerate(lines):
        stripped = line.strip()
        if i and stripped and not stripped.startswith("#"):
            return i
    return len(lines)


# ---------------------------------------------------------------------------
# manifest documents
# ---------------------------------------------------------------------------


def _script_configmap(serial: int, n: int, rng: random.Random, lines: int) -> str:
    shell = _Shell(serial, rng)
    shell.n = n * 100
    body: list[str] = ["#!/bin/bash", "set -euo pipefail"]
    while len(body) < lines:
        body += shell.block().split("\n")
    return "\n".join(
        [
            "apiVersion: v1",
            "kind: ConfigMap",
            "metadata:",
            f"  name: run-scripts-s{serial}-{n}",
            "data:",
            "  run.sh: |",
            *(f"    {line}" if line else "" for line in body),
        ]
    )


def _job_document(serial: int, n: int, rng: random.Random, env: int, volumes: int) -> str:
    name = f"batch-s{serial}-{n}"
    out = [
        "apiVersion: batch/v1",
        "kind: Job",
        "metadata:",
        f"  name: {name}",
        "  labels:",
        f"    team: team{rng.randrange(1, 40):02d}",
        "spec:",
        f"  backoffLimit: {rng.randrange(0, 6)}",
        "  template:",
        "    spec:",
        "      restartPolicy: Never",
        "      initContainers:",
        "        - name: fetch-data",
        "          image: docker.io/library/busybox:1.36",
        '          command: ["sh", "-c", "cp -r /src/. /work/"]',
        "          volumeMounts:",
        "            - name: work",
        "              mountPath: /work",
        "      containers:",
        "        - name: main",
        f"          image: nvcr.io/nvidia/pytorch:{rng.randrange(22, 25)}.{rng.randrange(1, 13):02d}-py3",
        f'          command: ["python", "train.py", "--epochs", "{rng.randrange(1, 50)}"]',
        "          env:",
    ]
    for i in range(env):
        if rng.random() < 0.15:
            out += [
                f"            - name: FROM_CONFIG_{i}",
                "              valueFrom:",
                "                configMapKeyRef:",
                f"                  name: settings-s{serial}",
                f"                  key: key{i}",
            ]
        else:
            out += [f"            - name: SETTING_{i}", f'              value: "{rng.randrange(0, 10_000)}"']
    out += [
        "          resources:",
        "            limits:",
        f"              cpu: {rng.choice((2, 4, 8, 16))}",
        f"              memory: {rng.choice(('8Gi', '16Gi', '64Gi'))}",
        f'              nvidia.com/gpu: "{rng.choice((1, 2, 4, 8))}"',
        "          volumeMounts:",
        "            - name: work",
        "              mountPath: /work",
    ]
    out += [f"            - name: data{i}\n              mountPath: /data/{i}" for i in range(volumes)]
    out += ["      volumes:", "        - name: work", "          emptyDir: {}"]
    out += [
        f"        - name: data{i}\n          persistentVolumeClaim:\n            claimName: datasets-{i}"
        for i in range(volumes)
    ]
    return "\n".join(out)


def grow_manifest(text: str, target: int, serial: int, rng: random.Random) -> str:
    """More documents (Jobs with many env entries and volumes, ConfigMaps with scripts) up to ``target``."""
    if len(text) >= target:
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    docs: list[str] = []
    size = len(text)
    n = 0
    while size < target:
        n += 1
        room = target - size
        if room < 4000:  # the last documents: small ConfigMaps, so the bundle ends near its target
            doc = _script_configmap(serial, n, rng, lines=max(1, room // 40))
        elif rng.random() < 0.5:
            doc = _script_configmap(serial, n, rng, lines=max(8, min(200, room // 30)))
        else:
            doc = _job_document(serial, n, rng, env=max(3, min(60, room // 60)), volumes=rng.randrange(0, 5))
        docs.append(doc)
        size += len(doc) + 5
    tail = "".join(f"---\n{doc}\n" for doc in docs).replace("\n", newline)
    base = text if text.endswith(("\n",)) or not text else text + newline
    return base + tail
