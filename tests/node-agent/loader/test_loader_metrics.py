"""The loader's Prometheus metrics against the stats of real loads.

A Llama-shaped checkpoint written by the real `safetensors` package (bench/loader/
make_checkpoint.py) is loaded rank by rank through the Python package; the collector, read
through a prometheus_client registry, must show exactly what each load's stats counted. The
CLI's --metrics-file is parsed with prometheus_client's text parser and compared with the CLI's
own --json stats. Loads of other tests in this process are recorded too, so values are compared
as differences across the loads made here.

Run by ctest (node_agent_loader_python) with MODELPLANE_LOADER_LIBRARY and MODELPLANE_NODE_AGENT
set (any binary with the `stream` subcommand: modelplane-node-agent or modelplane-stream).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

import modelplane_loader
import modelplane_loader.metrics

ROOT = Path(__file__).resolve().parents[3]
AGENT = os.environ.get("MODELPLANE_NODE_AGENT", "")
RULES = [
    "*.q_proj.weight=split:0",
    "*.gate_proj.weight=split:0",
    "*.o_proj.weight=split:1",
    "*.down_proj.weight=split:1",
]
OPTIONS = dict(io="direct", request_bytes=64 << 10, queue_depth=4)
# LoadStats' request-size buckets as the histogram's `le` bounds: 4 KiB << i, then +Inf.
BOUNDS = [float(4096 << i) for i in range(15)] + [float("inf")]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("llama-shaped")
    subprocess.run(
        [sys.executable, str(ROOT / "bench/loader/make_checkpoint.py"), "--out", str(folder),
         "--size", "0.004", "--shards", "2", "--hidden", "256"],
        check=True, capture_output=True, timeout=120)
    return folder


@pytest.fixture()
def registry():
    registry = CollectorRegistry()
    modelplane_loader.metrics.register(registry)
    return registry


def value(registry, name, **labels) -> float:
    found = registry.get_sample_value(name, labels)
    return 0.0 if found is None else found


def histogram(registry, name, **labels):
    """Cumulative bucket counts by `le`, sum and count."""
    buckets = [value(registry, name + "_bucket", le=_le(bound), **labels) for bound in BOUNDS]
    return buckets, value(registry, name + "_sum", **labels), value(registry, name + "_count", **labels)


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else str(int(bound))  # as core/metrics writes it


def stats_histogram(stats):
    """The stats' request-size histogram as cumulative counts over BOUNDS, and its byte sum."""
    per_bucket = [0] * len(BOUNDS)
    total = 0
    for entry in stats["request_size_histogram"]:
        limit = entry["max_bytes"]
        index = len(BOUNDS) - 1 if limit is None else BOUNDS.index(float(limit))
        per_bucket[index] += entry["requests"]
        total += entry["bytes"]
    cumulative, running = [], 0
    for count in per_bucket:
        running += count
        cumulative.append(running)
    return cumulative, total


def test_collector_shows_each_ranks_load(checkpoint, registry):
    labels = [dict(rank=str(rank), device="cpu") for rank in range(2)]
    names = ["modelplane_loader_read_bytes_total", "modelplane_loader_tensor_bytes_total"]
    before = {(n, l["rank"]): value(registry, n, **l) for n in names for l in labels}
    hist_before = [histogram(registry, "modelplane_loader_read_request_size_bytes", **l) for l in labels]

    all_stats = []
    for rank in range(2):
        tensors = modelplane_loader.load(checkpoint, rank=rank, world_size=2, rules=RULES, **OPTIONS)
        all_stats.append(tensors.stats)

    read_total = 0
    for rank, (stats, label) in enumerate(zip(all_stats, labels)):
        assert stats["requests"] > 1, stats
        read = value(registry, names[0], **label) - before[(names[0], str(rank))]
        needed = value(registry, names[1], **label) - before[(names[1], str(rank))]
        assert read == stats["bytes_read"]
        assert needed == stats["bytes_needed"]
        read_total += read
        # Gauges hold the last load of this rank: this one.
        assert value(registry, "modelplane_loader_read_amplification_ratio", **label) == pytest.approx(
            stats["read_amplification"], rel=1e-12)
        assert value(registry, "modelplane_loader_queue_depth_limit", **label) == 4 == stats["queue_depth"]
        assert value(registry, "modelplane_loader_reads_in_flight_max", **label) == stats["max_in_flight"]
        assert value(registry, "modelplane_loader_reads_in_flight_mean", **label) == pytest.approx(
            stats["mean_in_flight"])
        for kind in ("pinned", "staging", "output"):
            assert value(registry, "modelplane_loader_host_memory_high_water_bytes", kind=kind,
                         **label) == stats[f"host_{kind}_bytes"]
        assert value(registry, "modelplane_loader_files_total", mode="direct", **label) >= stats["files_direct"]
        assert value(registry, "modelplane_loader_loads_total", engine=stats["engine"], **label) >= 1
        # The request-size histogram: the same buckets and byte sum as the stats.
        buckets, total, count = histogram(registry, "modelplane_loader_read_request_size_bytes", **label)
        old_buckets, old_total, old_count = hist_before[rank]
        expected_buckets, expected_total = stats_histogram(stats)
        assert [b - o for b, o in zip(buckets, old_buckets)] == expected_buckets
        assert count - old_count == stats["requests"]
        assert total - old_total == expected_total
        assert stats["bytes_read"] <= expected_total  # every byte read was asked for
    # Bytes per rank add up to what the two loads read; with column splits through O_DIRECT
    # each rank reads more than it needs, and the gauges say by how much.
    assert read_total == sum(s["bytes_read"] for s in all_stats)
    assert all(s["read_amplification"] >= 1 for s in all_stats)


def test_failures_are_counted_by_code(tmp_path, registry):
    labels = dict(rank="1", device="cpu", code="not_found")
    before = value(registry, "modelplane_loader_load_failures_total", **labels)
    with pytest.raises(modelplane_loader.LoadError) as raised:
        modelplane_loader.load(tmp_path / "missing.safetensors", rank=1, world_size=2)
    assert raised.value.code == "not_found"
    assert value(registry, "modelplane_loader_load_failures_total", **labels) == before + 1



def test_default_registry_and_reexposition(checkpoint):
    collector = modelplane_loader.metrics.register()  # prometheus_client.REGISTRY
    try:
        modelplane_loader.load(checkpoint, rank=0, world_size=2, rules=RULES, **OPTIONS)
        # A second collector with the same names is refused, as for any duplicate metric.
        with pytest.raises(ValueError):
            modelplane_loader.metrics.register()
        text = generate_latest(REGISTRY).decode()
    finally:
        REGISTRY.unregister(collector)
    # What the engine's /metrics serves parses back to the loader's own exposition.
    served = {f.name: f for f in text_string_to_metric_families(text) if f.name.startswith("modelplane_loader_")}
    own = {f.name: f for f in text_string_to_metric_families(modelplane_loader.metrics.exposition())}
    assert set(served) == set(own)
    for name, family in own.items():
        assert served[name].type == family.type
        assert served[name].documentation == family.documentation
    assert "# TYPE modelplane_loader_read_bytes_total counter" in text
    assert 'modelplane_loader_read_bytes_total{device="cpu",rank="0"}' in text


def test_textfile_from_a_worker_process(checkpoint, tmp_path):
    # A process that loads weights but serves no /metrics writes them for node-exporter.
    from prometheus_client import write_to_textfile  # noqa: PLC0415

    registry = CollectorRegistry()
    modelplane_loader.metrics.register(registry)
    stats = modelplane_loader.load(checkpoint, rank=1, world_size=2, rules=RULES, **OPTIONS).stats
    path = tmp_path / "loader.prom"
    write_to_textfile(str(path), registry)
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(path.read_text()) for s in f.samples}
    label = (("device", "cpu"), ("rank", "1"))
    assert samples[("modelplane_loader_read_amplification_ratio", label)] == pytest.approx(
        stats["read_amplification"], rel=1e-12)
    assert samples[("modelplane_loader_read_bytes_total", label)] >= stats["bytes_read"]


def test_names_follow_prometheus_conventions():
    families = list(text_string_to_metric_families(modelplane_loader.metrics.exposition()))
    assert len(families) == 13
    for family in families:
        assert family.name.startswith("modelplane_loader_")
        assert family.documentation
        for sample in family.samples:
            assert set(sample.labels) <= {"rank", "device", "engine", "mode", "kind", "code", "le"}
            if family.type == "counter":
                assert sample.name.endswith("_total")


@pytest.mark.skipif(not os.access(AGENT, os.X_OK), reason="MODELPLANE_NODE_AGENT not set")
def test_cli_metrics_file_matches_its_stats(checkpoint, tmp_path):
    metrics_file = tmp_path / "textfile" / "loader.prom"
    metrics_file.parent.mkdir()
    command = [AGENT, "stream", str(checkpoint), "--world-size", "2", "--all-ranks", "--io", "direct",
               "--request-kib", "64", "--queue-depth", "4", "--json", "--metrics-file", str(metrics_file)]
    for rule in RULES:
        command += ["--rule", rule]
    result = subprocess.run(command, check=True, capture_output=True, timeout=120)
    stats = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [s["rank"] for s in stats] == [0, 1]
    # Replaced by rename: only the file itself is left in the folder.
    assert [p.name for p in metrics_file.parent.iterdir()] == ["loader.prom"]
    families = {f.name: f for f in text_string_to_metric_families(metrics_file.read_text())}
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples}
    for s in stats:
        label = (("device", "cpu"), ("rank", str(s["rank"])))
        assert samples[("modelplane_loader_read_bytes_total", label)] == s["bytes_read"]
        assert samples[("modelplane_loader_tensor_bytes_total", label)] == s["bytes_needed"]
        assert samples[("modelplane_loader_read_request_size_bytes_count", label)] == s["requests"]
        assert samples[("modelplane_loader_read_request_size_bytes_sum", label)] == stats_histogram(s)[1]
        assert samples[("modelplane_loader_read_amplification_ratio", label)] == pytest.approx(
            s["read_amplification"], rel=1e-12)
        assert samples[("modelplane_loader_loads_total", (("device", "cpu"), ("engine", s["engine"]),
                                                          ("rank", str(s["rank"]))))] == 1
    # A failed run still writes the file, with the failure counted.
    failed = subprocess.run([AGENT, "stream", str(tmp_path / "absent"), "--metrics-file", str(metrics_file)],
                            capture_output=True, timeout=60)
    assert failed.returncode != 0
    families = {f.name: f for f in text_string_to_metric_families(metrics_file.read_text())}
    failures = {tuple(sorted(s.labels.items())): s.value for s in families["modelplane_loader_load_failures"].samples}
    assert failures == {(("code", "not_found"), ("device", "cpu"), ("rank", "0")): 1.0}


def test_package_works_without_prometheus_client(checkpoint):
    # prometheus_client made unimportable: loads and the text exposition still work; only the
    # collector needs it.
    script = f"""
import sys
sys.modules["prometheus_client"] = None
import modelplane_loader, modelplane_loader.metrics
tensors = modelplane_loader.load({str(checkpoint)!r})
assert tensors.stats["bytes_read"] > 0
assert "modelplane_loader_read_bytes_total{{rank=\\"0\\",device=\\"cpu\\"}}" in modelplane_loader.metrics.exposition()
try:
    modelplane_loader.metrics.register()
except ImportError:
    print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120, env=os.environ)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == "ok"
