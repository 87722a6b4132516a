"""The scan table's view: the same rows and counts as the scan's results give, with the
cross-file passes run over only the files that take part in them, and their outcome cached."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_spark_templates import APPLICATION, EXECUTOR

from migrate.scan import argo_refs, kueue_refs, links, ray_refs, scanner, service_refs, spark_refs
from migrate.scan import overview as scan_overview
from migrate.scan.results import FileFacts, FileResult, ScanOptions, job_sizes, read_json
from migrate.scan.rows import FileRows

REPO = Path(__file__).resolve().parent.parent
CORPUS = [str(REPO / "corpus")]


def _bytes(result: FileResult) -> bytes:
    try:
        return Path(result.path).read_bytes()
    except OSError:
        return b""  # a folder or a vanished file: the passes read nothing of it either


@pytest.fixture(scope="module")
def read_alone(tmp_path_factory: pytest.TempPathFactory) -> list[FileResult]:
    """The corpus and a Spark pod template another file names, each file read on its own
    (before the cross-file passes)."""
    spark = tmp_path_factory.mktemp("spark")
    (spark / "templates").mkdir()
    (spark / "templates" / "executor-pod-template.yaml").write_text(EXECUTOR)
    (spark / "tpcds.yaml").write_text(APPLICATION)
    return list(scanner.iter_scan([*CORPUS, str(spark)], ScanOptions(jobs=1)))


def test_the_passes_over_the_files_that_take_part_give_them_what_all_files_give(
    read_alone: list[FileResult],
) -> None:
    everything = links.resolve(read_alone)
    part = [i for i, r in enumerate(read_alone) if links.takes_part(r, _bytes(r))]
    some = links.resolve([read_alone[i] for i in part])
    assert [everything[i] for i in part] == some
    others = sorted(set(range(len(read_alone))) - set(part))
    assert [everything[i] for i in others] == [read_alone[i] for i in others]
    # the corpus has files of every pass, and files of none
    changed = [i for i in part if everything[i] != read_alone[i]]
    assert len(changed) >= 5 and len(others) > len(part), (len(changed), len(part), len(others))


PASSES = {
    "argo": (argo_refs.resolve, argo_refs.takes_part),
    "services": (service_refs.link, lambda r, data: service_refs.takes_part(r, data)),
    "ray": (ray_refs.link, lambda r, data: ray_refs.takes_part(r)),
    "spark": (spark_refs.mark, spark_refs.takes_part),
    "kueue": (kueue_refs.link, kueue_refs.takes_part),
}


@pytest.mark.parametrize("name", sorted(PASSES))
def test_each_pass_changes_only_files_that_take_part_in_it(read_alone: list[FileResult], name: str) -> None:
    run, takes_part = PASSES[name]
    everything = run(read_alone)
    part = [i for i, r in enumerate(read_alone) if takes_part(r, _bytes(r))]
    assert [everything[i] for i in part] == run([read_alone[i] for i in part])
    changed = {i for i, (new, old) in enumerate(zip(everything, read_alone, strict=True)) if new != old}
    assert changed and changed <= set(part), (name, sorted(changed - set(part)))


def _expected(results: list[FileResult]) -> list[tuple[str, str, FileFacts, FileRows]]:
    views = []
    for f in results:
        sizes = job_sizes(f)
        rows = FileRows.of(f, sizes, linked=False)
        views.append((f.path, str(f.format), FileFacts.of(f, sizes), rows))
    return views


def _seen(views: list[scan_overview.FileView]) -> list[tuple[str, str, FileFacts, FileRows]]:
    # lists from the cache's JSON, tuples when made here: compared as lists; `linked` is the view's own
    return [
        (
            v.path,
            str(v.format),
            v.facts,
            v.rows._replace(
                jobs=[list(r) for r in v.rows.jobs], diagnostics=list(v.rows.diagnostics), linked=False
            ),
        )
        for v in views
    ]


def _as_lists(
    expected: list[tuple[str, str, FileFacts, FileRows]],
) -> list[tuple[str, str, FileFacts, FileRows]]:
    return [
        (p, f, facts, rows._replace(jobs=[list(r) for r in rows.jobs], diagnostics=list(rows.diagnostics)))
        for p, f, facts, rows in expected
    ]


def test_the_view_is_what_the_resolved_results_show(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _as_lists(_expected(scanner.scan(CORPUS, ScanOptions(jobs=1)).files))
    assert _seen(scanner.overview(CORPUS, ScanOptions(jobs=1))) == expected  # no cache
    cached = ScanOptions(jobs=1, cache=str(tmp_path / "cache"))
    assert _seen(scanner.overview(CORPUS, cached)) == expected  # the cache filled
    calls: list[int] = []
    real = scan_overview._passes
    monkeypatch.setattr(scan_overview, "_passes", lambda *a: calls.append(1) or real(*a))
    assert _seen(scanner.overview(CORPUS, cached)) == expected  # read back: no pass runs
    assert calls == []


def test_a_changed_linked_file_runs_the_passes_again(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for path in (REPO / "corpus" / "cases" / "run" / "ray-on-cluster").glob("*.yaml"):
        (site / path.name).write_bytes(path.read_bytes())
    options = ScanOptions(jobs=1, cache=str(tmp_path / "cache"))
    first = scanner.overview([str(site)], options)
    assert all(v.rows.linked for v in first)
    cluster = site / "raycluster.yaml"
    cluster.write_text(cluster.read_text().replace("name: ray-shared", "name: ray-other"))
    again = scanner.overview([str(site)], options)
    assert _seen(again) == _as_lists(_expected(scanner.scan([str(site)], ScanOptions(jobs=1)).files))
    job = [v.rows for v in again if v.path.endswith("rayjob.yaml")]
    assert job and any("K8S-RAY-CLUSTER-UNRESOLVED" in line for line in job[0].diagnostics)


def test_a_warm_table_reads_the_json_of_no_file_but_those_the_passes_need(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cached JSON is most of the cache's bytes and the table shows none of it: only a linked file
    whose passes' outcome is not kept yet is read back with it."""
    from migrate.scan import cache

    expected = _as_lists(_expected(scanner.scan(CORPUS, ScanOptions(jobs=1)).files))
    cached = ScanOptions(jobs=1, cache=str(tmp_path / "cache"))
    list(scanner.iter_rendered(CORPUS, cached))  # the cache filled by a JSON scan: no linked outcome kept
    whole: list[int] = []
    fragments: list[int] = []
    real_many, real_fragments = cache.ScanCache.get_many, cache.ScanCache.get_fragments
    monkeypatch.setattr(
        cache.ScanCache, "get_many", lambda self, keys: whole.append(len(keys)) or real_many(self, keys)
    )
    monkeypatch.setattr(
        cache.ScanCache,
        "get_fragments",
        lambda self, keys: fragments.append(len(keys)) or real_fragments(self, keys),
    )
    assert _seen(scanner.overview(CORPUS, cached)) == expected
    linked = sum(1 for v in scanner.overview(CORPUS, ScanOptions(jobs=1)) if v.rows.linked)
    assert whole == fragments and sum(fragments) == linked  # the linked files' JSON only, once
    whole.clear()
    fragments.clear()
    assert _seen(scanner.overview(CORPUS, cached)) == expected  # the passes' outcome kept: no JSON read
    assert fragments == []


def test_json_gone_from_the_cache_meanwhile_reads_the_scan_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from migrate.scan import cache

    expected = _as_lists(_expected(scanner.scan(CORPUS, ScanOptions(jobs=1)).files))
    cached = ScanOptions(jobs=1, cache=str(tmp_path / "cache"))
    list(scanner.iter_rendered(CORPUS, cached))
    monkeypatch.setattr(cache.ScanCache, "get_fragments", lambda self, keys: {})  # as if replaced
    assert _seen(scanner.overview(CORPUS, cached)) == expected


def test_the_passes_make_rows_again_only_for_the_files_they_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A linked file the passes leave as it was keeps the rows made where it was read."""
    expected = _as_lists(_expected(scanner.scan(CORPUS, ScanOptions(jobs=1)).files))
    read_alone = list(scanner.iter_scan(CORPUS, ScanOptions(jobs=1)))
    part = [r for r in read_alone if links.takes_part(r, _bytes(r))]
    changed = sum(1 for new, old in zip(links.resolve(part), part, strict=True) if new is not old)
    assert 0 < changed < len(part), (changed, len(part))
    made: list[int] = []
    real = FileRows.of
    monkeypatch.setattr(FileRows, "of", lambda *a, **k: made.append(1) or real(*a, **k))
    views = scanner.overview(CORPUS, ScanOptions(jobs=1))
    assert _seen(views) == expected
    assert len(made) == len(views) + changed  # each file where it was read, then the changed ones


def test_the_linked_files_are_read_for_the_passes_where_they_are_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A linked file's Services and Kueue objects are taken from its bytes where it is read, while
    the files after it are still being read: no file is read again from disk, and the passes after
    the last file have nothing to read."""
    from migrate.scan import pool

    streamed = 0
    real_run = pool.run

    def counting(*args: object, **kwargs: object) -> object:
        nonlocal streamed
        for rendered in real_run(*args, **kwargs):  # type: ignore[arg-type]
            streamed += 1
            yield rendered

    read_at: list[int] = []
    from_disk: list[str] = []
    queues_read: list[str] = []
    real_services, real_queues = service_refs.services_in, kueue_refs.objects_in

    def services_in(
        path: str, values: tuple[tuple[str, str], ...] = (), data: bytes | None = None
    ) -> list[service_refs.Service]:
        read_at.append(streamed)
        if data is None:
            from_disk.append(path)
        return real_services(path, values, data)

    def objects_in(
        path: str, values: tuple[tuple[str, str], ...] = (), data: bytes | None = None
    ) -> list[kueue_refs.KueueObject]:
        queues_read.append(path)
        if data is None:
            from_disk.append(path)
        return real_queues(path, values, data)

    monkeypatch.setattr(pool, "run", counting)
    monkeypatch.setattr(service_refs, "services_in", services_in)
    monkeypatch.setattr(kueue_refs, "objects_in", objects_in)
    expected = _as_lists(_expected(scanner.scan(CORPUS, ScanOptions(jobs=1)).files))
    read_at.clear()
    from_disk.clear()
    queues_read.clear()
    views = scanner.overview(CORPUS, ScanOptions(jobs=1))
    assert _seen(views) == expected
    assert not from_disk
    assert read_at and max(read_at) < streamed - 1, (read_at, streamed)  # not after the last file
    assert min(read_at) < streamed // 2
    linked_manifests = [v.path for v in views if v.rows.linked and v.format == "kubernetes"]
    assert sorted(set(queues_read)) == sorted(linked_manifests)


_QUEUED_WITH_ITS_QUEUES = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels:
    kueue.x-k8s.io/queue-name: team-a
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: pytorch/pytorch:2.3.0
          command: ["python", "train.py"]
---
apiVersion: v1
kind: Service
metadata:
  name: metrics
spec:
  selector:
    app: exporter
  ports:
    - port: 9100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: team-a
spec:
  clusterQueue: gpu
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: gpu
spec:
  resourceGroups:
    - coveredResources: ["nvidia.com/gpu"]
      flavors:
        - name: p5
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: p5
spec:
  nodeLabels:
    node.kubernetes.io/instance-type: p5.48xlarge
"""


def test_a_linked_file_is_parsed_once_for_its_jobs_and_the_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker that reads a file takes its Services and Kueue objects from the documents it
    parsed for the jobs: each document is parsed once, and the passes find what a read from disk
    finds."""
    from migrate import yamlload
    from migrate.scan import pool

    path = tmp_path / "train.yaml"
    path.write_text(_QUEUED_WITH_ITS_QUEUES)
    parsed: list[str] = []
    real_load = yamlload._load_chunk

    def load_chunk(chunk: yamlload._Chunk, *args: object) -> object:
        parsed.append(chunk.text)
        return real_load(chunk, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(yamlload, "_load_chunk", load_chunk)
    miss = pool.Miss(str(path), path.read_bytes(), False, None)
    outcome = pool.compute(miss)
    assert outcome is not None and outcome.ahead is not None
    assert len(parsed) == 5 and len(set(parsed)) == 5, parsed
    result = scanner.scan([str(path)], ScanOptions(jobs=1)).files[0]
    assert outcome.ahead == links.ahead_of(result)  # read again from disk: the same
    assert [s.name for s in outcome.ahead.services or []] == ["metrics"]
    assert [kind for kind, *_ in outcome.ahead.kueue] == ["LocalQueue", "ClusterQueue", "ResourceFlavor"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(_JSON)
def test_what_the_tool_wrote_reads_back_as_json_loads_reads_it(value: object) -> None:
    text = json.dumps(value)
    assert read_json(text) == json.loads(text)


@pytest.mark.parametrize("text", ["", "not json", "[1, 2", "{'a': 1}"])
def test_a_text_that_is_not_json_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        read_json(text)
