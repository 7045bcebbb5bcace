#!/usr/bin/env python3
"""Free loopback TCP ports for the test and benchmark harnesses: `free_ports.py [COUNT]` prints
COUNT ports (default 1), space-separated; `free_ports(count)` returns them to Python callers.

Why not bind to port 0 and hand the number on: the kernel picks such ports from its ephemeral
range, the same range it draws the source ports of outgoing connections from. Between the probe
closing and the component binding, any of the hundreds of connections a run opens (agents to
the API server, peers to peers, clients to MinIO) can take the port, and the component then
fails with "Address already in use" (a CI run lost an agent that way). Ports below the
ephemeral range are never given to outgoing connections, so only another listener that picks
the same number can collide. Two picks collide only before the first is bound, and the scripts
pick many ports before starting what binds them (34 agents' ports in the fleet benchmark, one
`free_ports.py` process per port in the shell scripts): a run lost an agent to a port another
agent had drawn a moment before. So every port handed out is claimed machine-wide, a file
created with O_EXCL in CLAIMS_DIR, and not handed out again by any process for CLAIM_SECONDS,
far longer than any pick waits for its bind.
"""

import os
import random
import socket
import sys
import time

LOWEST_PORT = 10000
CLAIMS_DIR = os.environ.get("MODELPLANE_PORT_CLAIMS", "/tmp/modelplane-port-claims")
CLAIM_SECONDS = 600


def claim(port):
    """True when this process now holds the claim on port: no claim, or one older than
    CLAIM_SECONDS that this process was first to take over."""
    os.makedirs(CLAIMS_DIR, exist_ok=True)
    path = os.path.join(CLAIMS_DIR, str(port))
    for _ in range(2):
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return True
        except FileExistsError:
            pass
        try:
            if time.time() - os.stat(path).st_mtime < CLAIM_SECONDS:
                return False
            # Stale: whoever renames it away first may claim it; a rename happens once.
            stale = f"{path}.{os.getpid()}.stale"
            os.rename(path, stale)
            os.unlink(stale)
        except FileNotFoundError:
            return False
    return False


def ephemeral_range_start():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(count=1):
    highest = ephemeral_range_start()
    if highest - LOWEST_PORT < 1000:
        raise RuntimeError(f"the ephemeral port range starts at {highest}: too few ports below it")
    held = []
    try:
        for _ in range(100 * count):
            if len(held) == count:
                break
            port = random.randrange(LOWEST_PORT, highest)
            probe = socket.socket()
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                probe.close()
                continue
            if not claim(port):
                probe.close()
                continue
            held.append(probe)
        if len(held) < count:
            raise RuntimeError(f"found only {len(held)} of {count} free ports below {highest}")
        return [probe.getsockname()[1] for probe in held]
    finally:
        for probe in held:
            probe.close()


if __name__ == "__main__":
    print(" ".join(str(port) for port in free_ports(int(sys.argv[1]) if len(sys.argv) > 1 else 1)))
