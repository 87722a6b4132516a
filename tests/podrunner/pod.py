"""One pod attempt: its env as the kubelet computes it, its volumes, its private root, its process."""

from __future__ import annotations

import base64
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from k8s_run import kubelet_expand

from .model import PodPlan

# What the stand-in image has: the host's system folders, each as a copy-on-write overlay.
IMAGE_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/root")
DEFAULT_IMAGE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
}
SHM_DEFAULT = "64m"  # containerd's /dev/shm for a pod sandbox
NODE_NAME = "podrunner-node"


class PodError(RuntimeError):
    pass


def _python_dirs(extra: tuple[str, ...] = ()) -> list[str]:
    """The test's own Python (venv and base) and the folders a test adds, read-only."""
    found = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    found.update(extra)
    return sorted(p for p in found if p and p != "/" and not p.startswith(IMAGE_DIRS))


def _quantity_bytes(text: str) -> int:
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 10**3, "M": 10**6, "G": 10**9}
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(float(text))


def uts_name(pod: PodPlan) -> str:
    """The kernel host name: the pod's host name, or its FQDN with ``setHostnameAsFQDN``."""
    if pod.spec.get("setHostnameAsFQDN") and pod.dns_names:
        return pod.dns_names[0]
    return pod.hostname


def _field(pod: PodPlan, path: str, address: str) -> str:
    if path == "metadata.name":
        return pod.name
    if path == "metadata.namespace":
        return pod.namespace
    if path == "metadata.uid":
        return pod.uid
    if path in ("status.podIP", "status.podIPs"):
        return address
    if path == "status.hostIP":
        return "127.0.0.1"
    if path == "spec.nodeName":
        return NODE_NAME
    if path == "spec.serviceAccountName":
        return str(pod.spec.get("serviceAccountName", "default"))
    for prefix, table in (("metadata.labels", pod.labels), ("metadata.annotations", pod.annotations)):
        if path.startswith(prefix + "['") and path.endswith("']"):
            return table.get(path[len(prefix) + 2 : -2], "")
    raise PodError(f"fieldRef {path!r} is not known to the runner")


def _resource(container: dict[str, Any], ref: dict[str, Any]) -> str:
    kind, _, name = str(ref["resource"]).partition(".")
    value = (container.get("resources") or {}).get(kind, {}).get(name)
    if value is None:
        return "0"
    if name == "cpu":
        cores = float(value[:-1]) / 1000 if str(value).endswith("m") else float(value)
        return str(math.ceil(cores))
    return str(_quantity_bytes(str(value)))


def environment(
    pod: PodPlan,
    container: dict[str, Any],
    objects: dict[tuple[str, str], dict[str, Any]],
    address: str,
    image_env: dict[str, str],
    operator: bool = True,
) -> dict[str, str]:
    """The container's environment: image env, HOSTNAME, envFrom, env (kubelet-expanded), operator env
    (``operator``: the training operator sets its env on the containers, not on init containers)."""
    defined: dict[str, str] = {}
    for source in container.get("envFrom") or ():
        prefix = source.get("prefix", "")
        for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            if key in source:
                defined.update({prefix + k: v for k, v in _data(objects, kind, source[key]["name"]).items()})
    for entry in container.get("env") or ():
        name = entry["name"]
        if "value" in entry:
            defined[name] = kubelet_expand(str(entry["value"]), defined)
            continue
        ref = entry.get("valueFrom") or {}
        if "fieldRef" in ref:
            defined[name] = _field(pod, ref["fieldRef"]["fieldPath"], address)
        elif "resourceFieldRef" in ref:
            defined[name] = _resource(container, ref["resourceFieldRef"])
        elif "configMapKeyRef" in ref or "secretKeyRef" in ref:
            kind, key = ("ConfigMap", "configMapKeyRef")
            if "secretKeyRef" in ref:
                kind, key = "Secret", "secretKeyRef"
            data = _data(objects, kind, ref[key]["name"], optional=bool(ref[key].get("optional")))
            if ref[key]["key"] in data:
                defined[name] = data[ref[key]["key"]]
            elif not ref[key].get("optional"):
                raise PodError(f"{kind} {ref[key]['name']} has no key {ref[key]['key']!r}")
        else:
            defined[name] = ""
    env = {**image_env, "HOSTNAME": uts_name(pod)}
    env.update(defined)
    if operator:
        env.update(pod.operator_env)
    return env


def _data(
    objects: dict[tuple[str, str], dict[str, Any]], kind: str, name: str, optional: bool = False
) -> dict[str, str]:
    obj = objects.get((kind, name))
    if obj is None:
        if optional:
            return {}
        raise PodError(f"{kind} {name!r} is not in the manifests")
    if kind == "Secret":
        out = {k: base64.b64decode(v).decode() for k, v in (obj.get("data") or {}).items()}
        out.update(obj.get("stringData") or {})
        return out
    return {k: str(v) for k, v in (obj.get("data") or {}).items()}


class Mounts:
    """The lines of the setup script that build the pod's root, in order."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.lines: list[str] = []

    def run(self, *words: str) -> None:
        self.lines.append(" ".join(shlex.quote(w) for w in words))

    def at(self, path: str) -> str:
        return self.root + path


def _volume_source(
    volume: dict[str, Any],
    pod_dir: Path,
    objects: dict[tuple[str, str], dict[str, Any]],
    shared: Any,
) -> tuple[str, str | None]:
    """(host folder or file, tmpfs size) that backs a volume."""
    name = volume["name"]
    here = pod_dir / "volumes" / name
    if "configMap" in volume or "secret" in volume:
        kind, key = ("ConfigMap", "configMap") if "configMap" in volume else ("Secret", "secret")
        ref = volume[key]
        data = _data(objects, kind, ref.get("name") or ref.get("secretName"), bool(ref.get("optional")))
        mode = int(ref.get("defaultMode", 0o644))
        items = ref.get("items") or [{"key": k, "path": k} for k in data]
        here.mkdir(parents=True, exist_ok=True)
        for item in items:
            target = here / item["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(data[item["key"]])
            target.chmod(int(item.get("mode", mode)))
        return str(here), None
    if "emptyDir" in volume:
        spec = volume["emptyDir"] or {}
        if spec.get("medium") == "Memory":
            return "", str(_quantity_bytes(str(spec["sizeLimit"]))) if spec.get("sizeLimit") else "50%"
        here.mkdir(parents=True, exist_ok=True)
        return str(here), None
    if "hostPath" in volume:
        return str(shared.host_path(volume["hostPath"]["path"])), None
    if "persistentVolumeClaim" in volume:
        return str(shared.claim(volume["persistentVolumeClaim"]["claimName"])), None
    raise PodError(f"volume {name}: {sorted(set(volume) - {'name'})} is not known to the runner")


def setup_script(
    pod: PodPlan,
    container: dict[str, Any],
    pod_dir: Path,
    objects: dict[tuple[str, str], dict[str, Any]],
    shared: Any,
    image_dirs: tuple[str, ...] = (),
    image_files: tuple[tuple[str, str], ...] = (),
    init: tuple[tuple[str, dict[str, str], list[str]], ...] = (),
    node_binds: tuple[tuple[str, str], ...] = (),
) -> str:
    """The shell that runs inside the new namespaces and ends by exec'ing the container's command.

    ``init``: (working folder, env, argv) of each init container, run in order to completion
    first; the first that fails fails the pod, as the kubelet does with restartPolicy Never. They
    share the pod's namespaces and see the union of the containers' mounts (a difference from the
    kubelet, where each container mounts only its own volumeMounts)."""
    root = str(pod_dir / "root")
    layers = str(pod_dir / "layers")
    m = Mounts(root)
    m.run("mount", "-t", "tmpfs", "-o", "mode=0755", "podroot", root)
    m.run("mount", "-t", "tmpfs", "-o", "mode=0755", "podlayers", layers)
    for d in IMAGE_DIRS:
        if os.path.islink(d):
            m.run("ln", "-s", os.readlink(d), m.at(d))
        elif os.path.isdir(d):
            name = d.strip("/")
            m.run("mkdir", "-p", m.at(d), f"{layers}/{name}.up", f"{layers}/{name}.work")
            options = f"lowerdir={d},upperdir={layers}/{name}.up,workdir={layers}/{name}.work"
            m.run("mount", "-t", "overlay", "overlay", "-o", options, m.at(d))
    for d in _python_dirs(image_dirs):
        m.run("mkdir", "-p", m.at(d))
        m.run("mount", "--bind", d, m.at(d))
        m.run("mount", "-o", "remount,bind,ro", m.at(d))
    m.run("mkdir", "-p", m.at("/proc"), m.at("/dev"), m.at("/sys"), m.at("/tmp"), m.at("/run/sshd"))
    m.run("chmod", "1777", m.at("/tmp"))
    m.run("mount", "--bind", "/dev", m.at("/dev"))
    m.run("mount", "--bind", "/sys", m.at("/sys"))
    m.run("mount", "-t", "proc", "proc", m.at("/proc"))
    volumes = {v["name"]: v for v in pod.spec.get("volumes") or ()}
    sources = {name: _volume_source(v, pod_dir, objects, shared) for name, v in volumes.items()}
    mounts = sorted(container.get("volumeMounts") or (), key=lambda vm: vm["mountPath"].count("/"))
    if not any(vm["mountPath"] == "/dev/shm" for vm in mounts):
        m.run("mount", "-t", "tmpfs", "-o", f"size={SHM_DEFAULT},mode=1777", "shm", m.at("/dev/shm"))
    for vm in mounts:
        source, tmpfs_size = sources[vm["name"]]
        target = m.at(vm["mountPath"])
        if tmpfs_size is not None:
            m.run("mkdir", "-p", target)
            m.run("mount", "-t", "tmpfs", "-o", f"size={tmpfs_size},mode=1777", vm["name"], target)
            continue
        if vm.get("subPath"):
            source = os.path.join(source, vm["subPath"])
            if not os.path.exists(source):
                os.makedirs(source)
        if os.path.isdir(source):
            m.run("mkdir", "-p", target)
        else:
            m.run("mkdir", "-p", os.path.dirname(target))
            m.run("touch", target)
        m.run("mount", "--bind", source, target)
        if vm.get("readOnly"):
            m.run("mount", "-o", "remount,bind,ro", target)
    for number, (path, text) in enumerate(image_files):  # files the stand-in image has
        source = pod_dir / f"image-file-{number}"
        source.write_text(text)
        m.run("mkdir", "-p", os.path.dirname(m.at(path)))
        m.run("touch", m.at(path))
        m.run("mount", "--bind", str(source), m.at(path))
    for path, folder in node_binds:  # a node's folders every pod sees, writable (a test's recorders)
        m.run("mkdir", "-p", m.at(path))
        m.run("mount", "--bind", folder, m.at(path))
    for name in ("hosts", "hostname"):
        m.run("mount", "--bind", str(pod_dir / name), m.at(f"/etc/{name}"))
    m.run("hostname", uts_name(pod))
    workdir = container.get("workingDir") or "/"
    m.run("mkdir", "-p", m.at(workdir))
    run = f'exec chroot {shlex.quote(root)} /usr/bin/env -i -C {shlex.quote(workdir)} "$@"'
    before = []
    for folder, env, argv in init:
        m.run("mkdir", "-p", m.at(folder))
        words = [f"{k}={v}" for k, v in env.items()] + argv
        quoted = " ".join(shlex.quote(w) for w in words)
        before.append(
            f"chroot {shlex.quote(root)} /usr/bin/env -i -C {shlex.quote(folder)} {quoted} || exit $?"
        )
    lines = ["set -eu", *m.lines, *before, run]
    return "\n".join(lines) + "\n"


def command(container: dict[str, Any], env: dict[str, str]) -> list[str]:
    words = [*(container.get("command") or ()), *(container.get("args") or ())]
    if not container.get("command"):
        raise PodError(f"container {container.get('name')}: no command, and the image is not run")
    return [kubelet_expand(str(w), env) for w in words]


def start(
    pod: PodPlan,
    pod_dir: Path,
    netns: str,
    objects: dict[tuple[str, str], dict[str, Any]],
    shared: Any,
    address: str,
    image_env: dict[str, str],
    hosts_text: str,
    image_dirs: tuple[str, ...] = (),
    image_files: tuple[tuple[str, str], ...] = (),
    node_binds: tuple[tuple[str, str], ...] = (),
) -> tuple[subprocess.Popen[bytes], IO[bytes], IO[bytes]]:
    """Prepare the pod's folder and start its first container (the runner uses one container per pod)."""
    containers = pod.spec.get("containers") or ()
    if len(containers) != 1:
        raise PodError(f"pod {pod.name}: the runner runs pods with exactly one container")
    container = containers[0]
    pod_dir.mkdir(parents=True, exist_ok=True)
    for d in ("root", "layers"):
        (pod_dir / d).mkdir(exist_ok=True)
    (pod_dir / "hosts").write_text(hosts_text)
    (pod_dir / "hostname").write_text(uts_name(pod) + "\n")
    env = environment(pod, container, objects, address, image_env)
    inits = list(pod.spec.get("initContainers") or ())
    init = tuple(
        (
            c.get("workingDir") or "/",
            environment(pod, c, objects, address, image_env, operator=False),
            command(c, environment(pod, c, objects, address, image_env, operator=False)),
        )
        for c in inits
    )
    mounted = {vm["mountPath"]: vm for c in (*inits, container) for vm in c.get("volumeMounts") or ()}
    merged = {**container, "volumeMounts": list(mounted.values())}
    script = pod_dir / "setup.sh"
    script.write_text(
        setup_script(pod, merged, pod_dir, objects, shared, image_dirs, image_files, init, node_binds)
    )
    argv = command(container, env)
    stdout = open(pod_dir / "stdout", "wb")  # noqa: SIM115 - closed by the runner when the pod ends
    stderr = open(pod_dir / "stderr", "wb")  # noqa: SIM115
    namespaces = ["unshare", "--mount", "--uts", "--pid", "--fork", "--kill-child", "--propagation=private"]
    proc = subprocess.Popen(
        [
            "ip",
            "netns",
            "exec",
            netns,
            *namespaces,
            "/bin/bash",
            str(script),
            *[f"{k}={v}" for k, v in env.items()],
            *argv,
        ],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )
    return proc, stdout, stderr


__all__ = ["DEFAULT_IMAGE_ENV", "PodError", "environment", "setup_script", "start"]
