#!/usr/bin/env bash
# Install everything the test suite needs, then run lint, types and the full suite.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${MIGRATE_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[test]'
# The differential tests run torchrun (gloo, CPU) and a Ray cluster on both schedulers: these versions.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'torch==2.13.0' 'ray==2.40.0'
# The pod runner (tests/podrunner) needs ip (iproute2) beside unshare/chroot/mount (util-linux,
# coreutils, mount); the MPI run cases need Open MPI and OpenSSH (sshd in the MPIJob Workers) and
# PMIx for srun.
# As root on Debian, install what is missing.
missing=()
command -v ip >/dev/null || missing+=(iproute2)
command -v mpirun >/dev/null || missing+=(openmpi-bin)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v ssh-keygen >/dev/null || missing+=(openssh-client)
# the sweep's sandbox builds its pyxis stand-in (scripts/pyxis-standin.c) with cc
command -v cc >/dev/null || missing+=(gcc libc6-dev)
# srun --mpi=pmix (the MPIJob translated to Slurm) loads libpmix.so, which only the -dev package links
{ [ -f /etc/debian_version ] && ! dpkg -s libpmix-dev >/dev/null 2>&1; } && missing+=(libpmix-dev)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
    echo "== installing ${missing[*]}"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null; } || echo "${missing[*]} could not be installed; the pod tests will say so"
fi
# The HTML report is checked in a real browser: Debian's chromium, installed when missing (root only;
# elsewhere tests/test_report_browser.py skips and says why).
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
    echo "== installing chromium"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } \
        || echo "chromium could not be installed; the browser test will say so and skip"
fi

echo "== ruff"
"$venv/bin/ruff" check .
"$venv/bin/ruff" format --check .
echo "== mypy"
MYPY="$(cd "$venv" && pwd)/bin/mypy" bash scripts/typecheck.sh
echo "== pytest"
# Bytecode once for the whole run: many tests start the tool as a process of its own, and where
# PYTHONDONTWRITEBYTECODE is set each of those would compile every module again (0.4 s a start).
"$venv/bin/python" -m compileall -q -j 0 migrate translators reports >/dev/null
workers="${MIGRATE_TEST_WORKERS:-2}"  # pytest-xdist workers for the tests that run no generated job
pytest_started=$SECONDS
if [ $# -gt 0 ]; then
    # A selection of one's own: the execution tests among it go to one worker, one at a time
    # (tests/conftest.py groups them).
    "$venv/bin/python" -m pytest -q -p no:cacheprovider -n "$workers" --dist loadgroup "$@"
else
    # The whole suite in two runs at once. The execution tests (the Slurm sandbox, the pod runner)
    # run one at a time at normal priority: torch's rendezvous and the sandbox's timeouts are what a
    # busy core would break. The other tests run on two workers at low priority, in the CPU time the
    # execution tests leave while they wait on their jobs. Job control (set -m) keeps SIGINT as it is
    # in the background run, where the Ctrl-C tests need it.
    others_log="$(mktemp)"
    set -m
    nice -n 15 "$venv/bin/python" -m pytest -q -p no:cacheprovider -n "$workers" -m "not execution" \
        >"$others_log" 2>&1 &
    others=$!
    set +m
    rc=0
    "$venv/bin/python" -m pytest -q -p no:cacheprovider -m execution || rc=$?
    others_rc=0
    wait "$others" || others_rc=$?
    echo "== pytest, the tests that run no generated job"
    cat "$others_log"
    rm -f "$others_log"
    [ "$rc" -ne 0 ] || rc=$others_rc
    echo "pytest: $((SECONDS - pytest_started)) s for the whole suite"
    [ "$rc" -eq 0 ] || exit "$rc"
fi
if [ $# -eq 0 ]; then
    # The differential sweep: every sbatch script of the corpus run on the Slurm sandbox and, translated,
    # in the pod runner, with recording stand-ins (tests/sweep/run.py; about 3 minutes). It needs root on
    # Debian (the sandbox) and unshare (both sides); elsewhere it says why and is left out.
    # Then the other way (tests/sweep/reverse.py, about 2 minutes): every manifest run in the pod runner
    # and, translated to Slurm, on the sandbox.
    echo "== differential sweep"
    if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ] && command -v unshare >/dev/null; then
        "$venv/bin/python" tests/sweep/run.py
        echo "== differential sweep, Kubernetes to Slurm"
        "$venv/bin/python" tests/sweep/reverse.py
    else
        echo "left out: the sweep runs the Slurm sandbox (root on Debian) and the pod runner (unshare)"
    fi
fi
