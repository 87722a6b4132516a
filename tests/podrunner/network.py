"""One network namespace per pod, joined through a private switch namespace; loopback addresses only.

Each pod's namespace has ``lo`` with 127.0.0.1 only and a veth with its own
alias (127.0.0.2, 127.0.0.3, ...); the switch namespace routes each alias to
its pod. So every pod has its own ports (two pods can both listen on 29500),
and nothing is on any real network: the host's namespace is not touched, the
addresses are loopback ones (``route_localnet``), and both veth ends share one
MAC address with ARP off, so no neighbour discovery is needed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess

_COUNTER = itertools.count()


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30)


def _sysctl(ns: str, *settings: str) -> None:
    for setting in settings:
        key, value = setting.split("=")
        subprocess.run(
            ["ip", "netns", "exec", ns, "sh", "-c", f"echo {value} > /proc/sys/{key.replace('.', '/')}"],
            check=True,
            capture_output=True,
            timeout=30,
        )


def _loopback_only(ns: str) -> None:
    """lo keeps 127.0.0.1 alone, so the other 127/8 addresses are routed out, not taken as local."""
    _ip("-n", ns, "link", "set", "lo", "up")
    _ip("-n", ns, "addr", "del", "127.0.0.1/8", "dev", "lo")
    _ip("-n", ns, "addr", "add", "127.0.0.1/32", "dev", "lo")
    _sysctl(
        ns,
        "net.ipv4.conf.all.route_localnet=1",
        "net.ipv4.conf.all.rp_filter=0",
        "net.ipv4.conf.default.rp_filter=0",
    )


def _name_servers() -> list[str]:
    """The IPv4 name servers of the host's resolv.conf, which the pods' image copies."""
    try:
        with open("/etc/resolv.conf") as fh:
            words = [line.split() for line in fh]
    except OSError:
        return []
    found = [w[1] for w in words if len(w) > 1 and w[0] == "nameserver" and w[1].count(".") == 3]
    return [s for s in found if not s.startswith("127.")]


class Network:
    def __init__(self) -> None:
        self.prefix = f"mpr{os.getpid() % 100000}x{next(_COUNTER)}"
        self.switch = f"{self.prefix}-sw"
        self.pods: list[str] = []
        _ip("netns", "add", self.switch)
        _loopback_only(self.switch)
        _sysctl(self.switch, "net.ipv4.ip_forward=1")

    def add_pod(self) -> tuple[str, str]:
        """A new pod namespace and its address."""
        n = len(self.pods)
        ns = f"{self.prefix}-{n}"
        number = n + 2
        address = f"127.0.{number // 256}.{number % 256}"
        mac = f"02:7f:00:00:{number // 256:02x}:{number % 256:02x}"
        pod_if, switch_if = f"p{n}", f"s{n}"
        _ip("netns", "add", ns)
        self.pods.append(ns)
        _loopback_only(ns)
        _ip("link", "add", pod_if, "netns", ns, "address", mac, "type", "veth", "peer", "name", switch_if,
            "netns", self.switch, "address", mac)  # fmt: skip
        for where, dev in ((ns, pod_if), (self.switch, switch_if)):
            _ip("-n", where, "link", "set", dev, "arp", "off")
            _ip("-n", where, "link", "set", dev, "up")
            _sysctl(where, f"net.ipv4.conf.{dev}.route_localnet=1", f"net.ipv4.conf.{dev}.rp_filter=0")
        _ip("-n", ns, "addr", "add", f"{address}/32", "dev", pod_if)
        _ip("-n", ns, "route", "add", "127.0.0.0/8", "dev", pod_if, "src", address)
        # a pod has a default route: programs that find their address by routing (Ray) get the pod's;
        # the cluster DNS is the hosts file, so the host's name servers stay unreachable (a name the
        # file lacks fails at once, as a cluster DNS answers at once)
        _ip("-n", ns, "route", "add", "default", "dev", pod_if, "src", address)
        for server in _name_servers():
            _ip("-n", ns, "route", "add", "unreachable", f"{server}/32")
        _ip("-n", self.switch, "route", "add", f"{address}/32", "dev", switch_if)
        return ns, address

    def close(self) -> None:
        for ns in [*self.pods, self.switch]:
            # A pod's processes end with it, as a container's cgroup is killed: a program that left
            # the pod's process group (ray start --block's daemons) would live on in the namespace.
            left = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=30)
            for pid in left.stdout.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30, check=False)
        self.pods = []


__all__ = ["Network"]
