"""Raw-item keys are a contract: each reader registers the keys it writes, each writer has a row for each.

The Kubernetes reader's keys and the shell analysis' keys (which pods' commands
carry too) meet the Slurm writer's table; the sbatch reader's keys and the shell
analysis' keys meet the Kubernetes writer's table. No key falls through to a
default: a key added to a reader without a row in a writer fails here.
"""

from __future__ import annotations

import pytest
from conftest import CORPUS

from migrate import ir
from migrate.scan import scanner
from migrate.scan.results import ScanOptions
from migrate.translators.argo.raw_keys import RAW_KEYS as ARGO_KEYS
from migrate.translators.katib.raw_keys import RAW_KEYS as KATIB_KEYS
from migrate.translators.kubernetes.coverage import BODY_ITEMS
from migrate.translators.kubernetes.raw_keys import RAW_KEYS as KUBERNETES_KEYS
from migrate.translators.shell.raw_keys import RAW_KEYS as SHELL_KEYS
from migrate.translators.slurm.kube_fields import RAW_FIELDS
from migrate.translators.slurm.raw_keys import RAW_KEYS as SBATCH_KEYS
from migrate.vocab import Format

# Where the sbatch reader's directives come from: their keys are option spellings.
DIRECTIVE_ORIGINS = ("#SBATCH", "#SCRON", "salloc")


def test_every_kubernetes_reader_key_has_a_row_in_the_slurm_writer() -> None:
    assert sorted(set(KUBERNETES_KEYS.meanings) - set(RAW_FIELDS)) == []


def test_every_argo_reader_key_has_a_row_in_the_slurm_writer() -> None:
    assert sorted(set(ARGO_KEYS.meanings) - set(RAW_FIELDS)) == []


def test_every_katib_reader_key_has_a_row_in_the_slurm_writer() -> None:
    assert sorted(set(KATIB_KEYS.meanings) - set(RAW_FIELDS)) == []


def test_every_sbatch_reader_key_has_a_row_in_the_kubernetes_writer() -> None:
    assert sorted(set(SBATCH_KEYS.meanings) - set(BODY_ITEMS)) == []


def test_every_shell_key_has_a_row_in_both_writers() -> None:
    assert sorted(set(SHELL_KEYS.meanings) - set(RAW_FIELDS)) == []
    assert sorted(set(SHELL_KEYS.meanings) - set(BODY_ITEMS)) == []


def test_the_kubernetes_writer_lists_only_keys_a_reader_writes() -> None:
    assert sorted(set(BODY_ITEMS) - set(SBATCH_KEYS.meanings) - set(SHELL_KEYS.meanings)) == []


def test_every_key_says_what_it_holds() -> None:
    for registry in (KUBERNETES_KEYS, ARGO_KEYS, KATIB_KEYS, SHELL_KEYS, SBATCH_KEYS):
        assert all(meaning.strip() for meaning in registry.meanings.values())


def test_a_key_no_registry_lists_is_refused() -> None:
    with pytest.raises(ir.UnregisteredRawKeyError):
        KUBERNETES_KEYS.item("claim", "fsx-pvc")


def test_the_corpus_gives_only_registered_keys_directives_and_unread_fields() -> None:
    """What the readers write on every corpus file: a registered key, a directive (its option's
    spelling) or, from a manifest, a field no reader looks at (named as it is, at its own path)."""
    result = scanner.scan([str(CORPUS / top) for top in ("cases", "sample-site")], ScanOptions(jobs=1))
    strays = []
    for job in result.jobs:
        for item in job.raw:
            if item.key in SHELL_KEYS.meanings:
                continue
            if job.source.format == Format.KUBERNETES:
                known = any(item.key in r.meanings for r in (KUBERNETES_KEYS, ARGO_KEYS, KATIB_KEYS))
                if not known and not item.origin.endswith(item.key):
                    strays.append((job.id, item.key, item.origin))
            elif item.key not in SBATCH_KEYS.meanings and not item.origin.startswith(DIRECTIVE_ORIGINS):
                strays.append((job.id, item.key, item.origin))
    assert strays == []
    keys = {item.key for job in result.jobs for item in job.raw}
    assert {"pvc", "gang-size", "jobflow", "module", "--comment", "argo-task", "katib-primary"} <= keys
