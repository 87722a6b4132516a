"""A deterministic synthetic site of N job files, derived from ``corpus/``.

Templates are the readable job files of ``corpus/cases`` and
``corpus/sample-site`` (the broken cases are left out: a site of broken files
measures nothing useful). Each generated file is a template with other values
(:mod:`.variation`), so the mix of formats and kinds is the corpus's mix, and
every file is distinct. Files are spread over team folders, 100 to a folder;
some scripts lose their extension, as real ones do. The ``real`` site (the
default) then grows each file to a size drawn from what public job
repositories hold (:mod:`.longtail`); the ``corpus`` site keeps the corpus's
small sizes.

    python -m benchmarks.generate --files 10000 --out /tmp/site --seed 7 [--sizes corpus]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import longtail, variation

REPO = Path(__file__).resolve().parent.parent
TEMPLATE_ROOTS = ("corpus/cases/slurm", "corpus/cases/kubernetes", "corpus/sample-site")
_NOT_TEMPLATES = frozenset({"README.md", "migrate.yaml", "migrate.yml"})
_AREAS = ("training", "eval", "data", "hpc", "ops", "serving", "sweeps", "pipelines", "dev", "k8s")
FILES_PER_FOLDER = 100
SIZES = ("real", "corpus")
# Size buckets the benchmark reports throughput for: (label, smallest byte count).
BUCKETS = (("<1 KB", 0), ("1-4 KB", 1024), ("4-16 KB", 4096), (">16 KB", 16384))


@dataclass(frozen=True)
class Template:
    path: str  # relative to the repository
    text: str
    kind: str  # "script", "crontab" or "manifest"


def _kind(path: Path, text: str) -> str:
    if "#SCRON" in text or path.name.startswith("scrontab"):
        return "crontab"
    if (
        path.suffix in (".yaml", ".yml")
        or "kubernetes" in path.parts
        or text.lstrip().startswith("apiVersion")
    ):
        return "manifest"
    return "script"


def load_templates(repo: Path = REPO) -> list[Template]:
    templates = []
    for root in TEMPLATE_ROOTS:
        for path in sorted((repo / root).rglob("*")):
            if path.is_file() and path.name not in _NOT_TEMPLATES:
                text = path.read_bytes().decode("utf-8")
                templates.append(Template(str(path.relative_to(repo)), text, _kind(path, text)))
    return templates


def _variant(template: Template, serial: int, rng: random.Random, sizes: str) -> str:
    if template.kind == "manifest":
        text = variation.vary_manifest(template.text, serial, rng)
        if sizes == "real":
            target = longtail.target_size(longtail.MANIFEST_SIZES, rng)
            text = longtail.grow_manifest(text, target, serial, rng)
        return text
    text = variation.vary_script(template.text, serial, rng, cron=template.kind == "crontab")
    if sizes == "real" and template.kind == "script":  # a scrontab file holds cron lines only
        target = longtail.target_size(longtail.SCRIPT_SIZES, rng)
        text = longtail.grow_script(text, target, serial, rng)
    return text


def _file_name(template: Template, serial: int, rng: random.Random) -> str:
    name = os.path.basename(template.path)
    stem, dot, ext = name.partition(".")
    if template.kind == "script" and dot and rng.random() < 0.08:
        dot = ext = ""  # sites keep scripts without an extension too
    return f"{stem}_{serial:06d}{dot}{ext}"


def _make_distinct(text: str, serial: int, kind: str) -> str:
    note = f"# revision {serial}\n"
    if kind != "manifest" and text.startswith("#!"):
        shebang, _, rest = text.partition("\n")
        return f"{shebang}\n{note}{rest}"
    return note + text


def generate(out: Path, files: int, seed: int = 7, repo: Path = REPO, sizes: str = "real") -> list[Path]:
    """Write ``files`` job files under ``out`` (emptied first); same seed, same bytes."""
    if sizes not in SIZES:
        raise ValueError(f"sizes must be one of {SIZES}, not {sizes!r}")
    templates = load_templates(repo)
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    seen: set[bytes] = set()
    written: list[Path] = []
    for serial in range(files):
        template = templates[rng.randrange(len(templates))]
        text = _variant(template, serial, rng, sizes)
        digest = hashlib.blake2b(text.encode()).digest()
        if digest in seen:
            text = _make_distinct(text, serial, template.kind)
            digest = hashlib.blake2b(text.encode()).digest()
        seen.add(digest)
        folder = (
            out / f"team{serial // (FILES_PER_FOLDER * 10):03d}" / _AREAS[(serial // FILES_PER_FOLDER) % 10]
        )
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / _file_name(template, serial, rng)
        path.write_bytes(text.encode())
        written.append(path)
    # The sample site's configuration, where plan and translate look for it (scan skips it).
    shutil.copy(repo / "corpus/sample-site/migrate.yaml", out / "migrate.yaml")
    return written


def site_files(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*") if p.is_file() and p.name != "migrate.yaml")


def bucket_of(size: int) -> str:
    label = BUCKETS[0][0]
    for name, smallest in BUCKETS:
        if size >= smallest:
            label = name
    return label


def _percentile(sorted_values: list[int], share: float) -> int:
    return sorted_values[min(len(sorted_values) - 1, int(share * len(sorted_values)))] if sorted_values else 0


def size_distribution(site: Path) -> dict[str, Any]:
    """Median, 90th percentile and largest size per kind of file, and the count per size bucket."""
    kinds: dict[str, list[int]] = {"scripts": [], "manifests": []}
    buckets = {name: 0 for name, _ in BUCKETS}
    for path in site_files(site):
        data = path.read_bytes()
        size = len(data)
        manifest = not data.startswith(b"#!") and b"apiVersion:" in data
        kinds["manifests" if manifest else "scripts"].append(size)
        buckets[bucket_of(size)] += 1
    out: dict[str, Any] = {"buckets": buckets}
    for kind, values in kinds.items():
        values.sort()
        out[kind] = {
            "files": len(values),
            "median": _percentile(values, 0.5),
            "p90": _percentile(values, 0.9),
            "max": values[-1] if values else 0,
        }
    return out


def describe(distribution: dict[str, Any]) -> str:
    parts = [
        f"{kind} {d['files']}: median {d['median'] / 1024:.1f} KB, p90 {d['p90'] / 1024:.1f} KB, "
        f"max {d['max'] / 1024:.1f} KB"
        for kind, d in distribution.items()
        if kind != "buckets"
    ]
    parts.append("buckets " + ", ".join(f"{k}: {v}" for k, v in distribution["buckets"].items()))
    return "; ".join(parts)


def change_files(site: Path, share: float, seed: int) -> int:
    """Append a comment line to ``share`` of the files: new content, same meaning."""
    files = site_files(site)
    chosen = random.Random(seed).sample(files, max(1, round(len(files) * share)))
    for n, path in enumerate(chosen):
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"\n# edited for benchmark round {n}\n")
    return len(chosen)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sizes", choices=SIZES, default="real", help="real-sized files or the corpus's")
    parser.add_argument("--change", type=float, metavar="SHARE", help="edit this share of an existing site")
    args = parser.parse_args(argv)
    if args.change:
        print(f"{change_files(args.out, args.change, args.seed)} files changed under {args.out}")
        return
    written = generate(args.out, args.files, args.seed, sizes=args.sizes)
    print(f"{len(written)} files under {args.out}")
    print(describe(size_distribution(args.out)))


if __name__ == "__main__":
    main()
