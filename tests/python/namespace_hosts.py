"""Hosts made of network namespaces on this machine, each running its own OpenSSH server.

A hub namespace holds a bridge on a private /24 (it exists only inside these
namespaces); every host namespace is joined to it by a veth pair and runs Debian's
/usr/sbin/sshd with a host key and an authorized key generated into a temporary
folder. The test's runner lives in the hub (`hub_command`), so it reaches the hosts
exactly as a runner reaches VMs: `ssh -i KEY root@10.x.y.z` with checked host keys.
All namespaces share this machine's files, so every host's kvlab checkout is this one.

close() tears everything down (sshd processes, any process left in the namespaces, the
namespaces, the keys), also after a failure; use it as a context manager.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"
SUBNET = "10.213.13"
PRIVILEGE_SEPARATION_DIR = Path("/run/sshd")
SSHD_START_TIMEOUT_S = 30


def why_not_possible() -> str | None:
    """Why this machine cannot build these hosts whatever is installed (no root, no
    working `ip netns`), or None: the tests skip, visibly."""
    if os.geteuid() != 0:
        return "needs root (creates network namespaces and starts sshd)"
    if shutil.which("ip") is not None and \
            subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
        return "`ip netns` does not work here"
    return None


def missing_programs() -> str | None:
    """What scripts/install-deps installs and these hosts need, if missing, or None: a
    test fails without it rather than skip."""
    if shutil.which("ip") is None:
        return "needs iproute2's ip"
    for program in (SSHD, shutil.which("ssh"), shutil.which("ssh-keygen")):
        if program is None or not Path(program).exists():
            return "needs openssh-server and openssh-client (sshd, ssh, ssh-keygen)"
    return None


def _ip(*words: str) -> None:
    subprocess.run(["ip", *words], check=True, capture_output=True, text=True)


class NamespaceHosts:
    def __init__(self, names: list[str]):
        self.prefix = f"kvh{os.getpid() % 100000}"
        self.hub = f"{self.prefix}-hub"
        self.names = names
        self.namespaces = {name: f"{self.prefix}-{name}" for name in names}
        self.addresses = {name: f"{SUBNET}.{11 + i}" for i, name in enumerate(names)}
        self.folder = Path(tempfile.mkdtemp(prefix="kvlab-hosts-"))
        self.key = self.folder / "client_key"
        self.known_hosts = self.folder / "known_hosts"
        self._sshd: dict[str, subprocess.Popen] = {}
        self._created: list[str] = []
        self._made_privsep_dir = False

    def __enter__(self) -> "NamespaceHosts":
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- what a test uses ---

    def ssh_options(self) -> list[str]:
        return ["-F", "/dev/null", "-i", str(self.key), "-o", "IdentitiesOnly=yes",
                "-o", f"UserKnownHostsFile={self.known_hosts}",
                "-o", "StrictHostKeyChecking=yes", "-o", "LogLevel=ERROR"]

    def hub_command(self, argv: list[str]) -> list[str]:
        """argv run from the hub: where the runner sits in these tests."""
        return ["ip", "netns", "exec", self.hub, *argv]

    def pids(self, name: str) -> list[int]:
        done = subprocess.run(["ip", "netns", "pids", self.namespaces[name]],
                              capture_output=True, text=True)
        return [int(p) for p in done.stdout.split()]

    def namespace_of(self, pid: int) -> str:
        done = subprocess.run(["ip", "netns", "identify", str(pid)], capture_output=True,
                              text=True)
        return done.stdout.strip()

    def kill_host(self, name: str) -> None:
        """Every process of the host dies at once (sshd and what it runs): a crashed VM."""
        for pid in self.pids(name):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        process = self._sshd.pop(name, None)
        if process is not None:
            process.wait()

    # --- building ---

    def _build(self) -> None:
        if not PRIVILEGE_SEPARATION_DIR.exists():
            PRIVILEGE_SEPARATION_DIR.mkdir(mode=0o755)
            self._made_privsep_dir = True
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)],
                       check=True)
        shutil.copy(self.folder / "client_key.pub", self.folder / "authorized_keys")
        self._add_namespace(self.hub)
        _ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.hub, "addr", "add", f"{SUBNET}.1/24", "dev", "br0")
        _ip("-n", self.hub, "link", "set", "br0", "up")
        known = []
        for index, name in enumerate(self.names):
            namespace = self.namespaces[name]
            self._add_namespace(namespace)
            hub_end = f"{self.prefix}-p{index}"[-15:]
            _ip("-n", namespace, "link", "add", "eth0", "type", "veth", "peer", "name", hub_end,
                "netns", self.hub)
            _ip("-n", namespace, "addr", "add", f"{self.addresses[name]}/24", "dev", "eth0")
            _ip("-n", namespace, "link", "set", "eth0", "up")
            _ip("-n", self.hub, "link", "set", hub_end, "master", "br0", "up")
            host_key = self.folder / f"host_key_{name}"
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)],
                           check=True)
            public = (self.folder / f"host_key_{name}.pub").read_text().split()
            known.append(f"{self.addresses[name]} {public[0]} {public[1]}")
        self.known_hosts.write_text("\n".join(known) + "\n")
        for name in self.names:
            self.start_sshd(name)

    def _add_namespace(self, namespace: str) -> None:
        _ip("netns", "add", namespace)
        self._created.append(namespace)
        _ip("-n", namespace, "link", "set", "lo", "up")

    def start_sshd(self, name: str) -> None:
        config = self.folder / f"sshd_config_{name}"
        config.write_text("\n".join([
            f"ListenAddress {self.addresses[name]}",
            f"HostKey {self.folder / f'host_key_{name}'}",
            f"PidFile {self.folder / f'sshd_{name}.pid'}",
            f"AuthorizedKeysFile {self.folder / 'authorized_keys'}",
            "PermitRootLogin prohibit-password", "PubkeyAuthentication yes",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
            "StrictModes no", "LogLevel ERROR",
            # bash reads ~/.bashrc for every command sshd runs it for, unless it is not the
            # first shell (SHLVL): that rc is this machine's root's, not the emulated host's,
            # and one that runs a version manager's init (pyenv here) cost tens of processes
            # per command, most of this file's tests' CPU.
            "SetEnv SHLVL=1", ""]))
        log = (self.folder / f"sshd_{name}.log").open("w")
        self._sshd[name] = subprocess.Popen(
            ["ip", "netns", "exec", self.namespaces[name], SSHD, "-D", "-e", "-f", str(config)],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + SSHD_START_TIMEOUT_S
        while True:
            probe = subprocess.run(self.hub_command(
                ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=2", *self.ssh_options(),
                 f"root@{self.addresses[name]}", "true"]), capture_output=True, text=True)
            if probe.returncode == 0:
                return
            if self._sshd[name].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sshd in {self.namespaces[name]} did not answer: "
                                   f"{probe.stderr.strip()} | "
                                   f"{(self.folder / f'sshd_{name}.log').read_text().strip()}")
            time.sleep(0.1)

    def close(self) -> None:
        for process in self._sshd.values():
            process.kill()
            process.wait()
        self._sshd.clear()
        for namespace in reversed(self._created):
            done = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True,
                                  text=True)
            for pid in done.stdout.split():
                try:
                    os.kill(int(pid), 9)
                except ProcessLookupError:
                    pass
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
        self._created.clear()
        shutil.rmtree(self.folder, ignore_errors=True)
        if self._made_privsep_dir:
            shutil.rmtree(PRIVILEGE_SEPARATION_DIR, ignore_errors=True)
            self._made_privsep_dir = False
