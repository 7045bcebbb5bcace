"""e2e/free_ports.py: ports are never handed out twice while a claim lasts, across calls and
processes, and a stale claim is taken over."""

import os
import subprocess
import sys
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "e2e"))
import free_ports  # noqa: E402


@pytest.fixture(autouse=True)
def claims(tmp_path, monkeypatch):
    monkeypatch.setattr(free_ports, "CLAIMS_DIR", str(tmp_path))
    monkeypatch.setenv("MODELPLANE_PORT_CLAIMS", str(tmp_path))
    return tmp_path


def test_one_port_at_a_time_never_repeats():
    # The fleet benchmark's pattern: one call per port, nothing bound in between.
    ports = [free_ports.free_ports(1)[0] for _ in range(300)]
    assert len(set(ports)) == len(ports)
    low, high = free_ports.LOWEST_PORT, free_ports.ephemeral_range_start()
    assert all(low <= port < high for port in ports)


def test_other_processes_do_not_get_a_claimed_port():
    mine = set(free_ports.free_ports(50))
    script = os.path.join(ROOT, "e2e", "free_ports.py")
    theirs = set()
    for _ in range(5):
        output = subprocess.run([sys.executable, script, "20"], check=True, capture_output=True,
                                text=True).stdout
        theirs.update(int(port) for port in output.split())
    assert len(theirs) == 100
    assert not mine & theirs


def test_a_claim_lasts_its_time_and_a_stale_one_is_taken_over(claims):
    assert free_ports.claim(20000)
    assert not free_ports.claim(20000)
    old = time.time() - free_ports.CLAIM_SECONDS - 1
    os.utime(os.path.join(claims, "20000"), (old, old))
    assert free_ports.claim(20000)
    assert not free_ports.claim(20000)
