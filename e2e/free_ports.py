#!/usr/bin/env python3
"""Free loopback TCP ports for the test and benchmark harnesses: `free_ports.py [COUNT]` prints
COUNT ports (default 1), space-separated; `free_ports(count)` returns them to Python callers.

Why not bind to port 0 and hand the number on: the kernel picks such ports from its ephemeral
range, the same range it draws the source ports of outgoing connections from. Between the probe
closing and the component binding, any of the hundreds of connections a run opens (agents to
the API server, peers to peers, clients to MinIO) can take the port, and the component then
fails with "Address already in use" (a CI run lost an agent that way). Ports below the
ephemeral range are never given to outgoing connections, so only another listener that picks
the same number can collide, and each probe holds its socket until all are picked so one call
never hands out a port twice.
"""

import random
import socket
import sys

LOWEST_PORT = 10000


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
            probe = socket.socket()
            try:
                probe.bind(("127.0.0.1", random.randrange(LOWEST_PORT, highest)))
            except OSError:
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
