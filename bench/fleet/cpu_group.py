"""One CPU control group for all of the fleet's node agents.

In a cluster every agent has its node's CPUs and the control plane has machines of its own; here
34 agents and the control plane share two. Linux schedules each session as a group of its own
(sched_autogroup): every agent, started in a session of its own, weighed as much as the whole
control plane, which e2e/cluster.sh starts in one session. With 32 agents hashing, kube-apiserver,
etcd and the scheduler got about a 35th of the CPU between them: requests waited past the API
server's 60 s handler timeout and the operator lost its Lease (docs/fleet.md). In one group the
agents together weigh as one session, so the control plane keeps about a share of its own while
they saturate the rest.

cgroup v1 (a `cpu` hierarchy) or v2 (the `cpu` controller enabled at the root); needs root. Where
neither can be used, `path` is None and the agents run as before (the run says so)."""

import os
import time

V1_ROOT = "/sys/fs/cgroup/cpu"
V2_ROOT = "/sys/fs/cgroup"


def _read(path):
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read()
    except OSError:
        return ""


def _writable_root():
    if os.path.isfile(os.path.join(V1_ROOT, "cpu.shares")):
        return V1_ROOT
    if "cpu" in _read(os.path.join(V2_ROOT, "cgroup.controllers")).split():
        control = os.path.join(V2_ROOT, "cgroup.subtree_control")
        if "cpu" not in _read(control).split():
            try:
                with open(control, "w", encoding="ascii") as handle:
                    handle.write("+cpu")
            except OSError:
                return None
        return V2_ROOT
    return None


class CpuGroup:
    def __init__(self, name):
        self.path = None
        self.why_not = ""
        root = _writable_root()
        if root is None:
            self.why_not = "no writable cpu controller (cgroup v1 cpu or v2 +cpu)"
            return
        path = os.path.join(root, name)
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as error:
            self.why_not = f"cannot create {path}: {error}"
            return
        self.path = path

    def add(self, pid):
        """Moves the process (all its threads) into the group; False where it cannot."""
        if self.path is None:
            return False
        try:
            with open(os.path.join(self.path, "cgroup.procs"), "w", encoding="ascii") as handle:
                handle.write(str(pid))
            return True
        except OSError as error:
            self.why_not = f"cannot move {pid} into {self.path}: {error}"
            return False

    def remove(self, timeout_seconds=10.0):
        """Removes the group once its processes have exited (call after stopping them)."""
        if self.path is None:
            return
        deadline = time.monotonic() + timeout_seconds
        while True:
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() >= deadline:
                    return
                time.sleep(0.2)
