"""Background processes of the fleet benchmark: started with their logs in a folder, stopped
(TERM, then KILL) and inspected (peak memory) by name."""

import os
import signal
import subprocess
import sys
import time

# The harnesses' one port picker lives beside the e2e scripts (it says why it avoids port 0).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e"))
from free_ports import free_ports  # noqa: E402


def free_port():
    return free_ports(1)[0]


class Processes:
    """Named child processes, each logging to <logs>/<name>.log (appended across restarts)."""

    def __init__(self, logs):
        self.logs = logs
        self.running = {}
        os.makedirs(logs, exist_ok=True)

    def start(self, name, command, environment=None):
        if name in self.running:
            raise RuntimeError(f"{name} is already running")
        log = open(os.path.join(self.logs, f"{name}.log"), "ab")
        self.running[name] = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=environment, start_new_session=True)
        log.close()
        return self.running[name]

    def pid(self, name):
        return self.running[name].pid

    def alive(self, name):
        return name in self.running and self.running[name].poll() is None

    def stop(self, *names, grace_seconds=5.0):
        """Stops NAMES (all when none given): TERM to all at once, KILL what is left after grace."""
        chosen = names or tuple(self.running)
        for name in chosen:
            process = self.running.get(name)
            if process and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_seconds
        for name in chosen:
            process = self.running.pop(name, None)
            if process is None:
                continue
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def reset_peak_memory(self, name):
        """Zeroes the process's peak resident set (VmHWM), so a later read covers only what
        came after (Linux: clear_refs 5)."""
        with open(f"/proc/{self.pid(name)}/clear_refs", "w") as handle:
            handle.write("5")

    def peak_memory_bytes(self, name):
        with open(f"/proc/{self.pid(name)}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return 0
