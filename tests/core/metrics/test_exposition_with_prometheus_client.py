"""Parses metrics_exposition_sample's output with prometheus_client's text parser.

The sample binary's path comes from MODELPLANE_METRICS_SAMPLE_BINARY (ctest sets it). The
expected values below mirror metrics_exposition_sample_main.cc.
"""

import math
import os
import subprocess

import pytest
from prometheus_client.parser import text_string_to_metric_families


@pytest.fixture(scope="module")
def exposition():
    binary = os.environ.get("MODELPLANE_METRICS_SAMPLE_BINARY")
    if not binary:
        pytest.fail("MODELPLANE_METRICS_SAMPLE_BINARY is not set; run this test through ctest")
    result = subprocess.run([binary], check=True, capture_output=True, timeout=60)
    return result.stdout.decode("utf-8")


@pytest.fixture(scope="module")
def families(exposition):
    return {family.name: family for family in text_string_to_metric_families(exposition)}


def samples_by_labels(family, sample_name):
    return {
        tuple(sorted(s.labels.items())): s.value for s in family.samples if s.name == sample_name
    }


def test_every_line_is_well_formed(exposition):
    assert exposition.endswith("\n")
    for line in exposition.splitlines():
        assert line, "empty line in exposition"


def test_names_types_and_help(families):
    # The parser stores counters under their name without "_total".
    assert set(families) == {
        "sample_requests",
        "sample_temperature",
        "sample_fetch_seconds",
        "sample_empty_seconds",
    }
    assert families["sample_requests"].type == "counter"
    assert families["sample_temperature"].type == "gauge"
    assert families["sample_fetch_seconds"].type == "histogram"
    assert families["sample_requests"].documentation == (
        "Requests with \\ backslash and\nnewline in help."
    )


def test_label_values_round_trip_exactly(families):
    values = samples_by_labels(families["sample_requests"], "sample_requests_total")
    assert values == {
        (("note", "plain"), ("path", 'C:\\models\\"quoted"')): 3.0,
        (("note", "modèle 😀 模型"), ("path", "line1\nline2")): 1.5,
        (("note", "trailing backslash \\"), ("path", "")): 1.0,
        (("note", "tab\there"), ("path", "{braces},=commas")): 7.0,
    }


def test_special_float_values(families):
    values = {
        s.labels["case"]: s.value
        for s in families["sample_temperature"].samples
    }
    assert values["plus_inf"] == math.inf
    assert values["minus_inf"] == -math.inf
    assert math.isnan(values["nan"])
    assert values["tiny"] == 1e-7
    assert values["huge"] == 1.5e300
    assert values["negative"] == -42.125


def test_histogram_buckets_sum_and_count(families):
    family = families["sample_fetch_seconds"]
    buckets = {}
    for s in family.samples:
        if s.name == "sample_fetch_seconds_bucket":
            buckets.setdefault(s.labels["tier"], []).append((float(s.labels["le"]), s.value))
    # Observations 0.001, 0.005, 0.05, 0.5, 1, 3, 120 against bounds 0.005, 0.1, 1, 2.5, 60.
    assert buckets["peer"] == [
        (0.005, 2.0),
        (0.1, 3.0),
        (1.0, 5.0),
        (2.5, 5.0),
        (60.0, 6.0),
        (math.inf, 7.0),
    ]
    assert buckets['object "store"'] == [
        (0.005, 0.0),
        (0.1, 0.0),
        (1.0, 0.0),
        (2.5, 1.0),
        (60.0, 1.0),
        (math.inf, 1.0),
    ]
    sums = samples_by_labels(family, "sample_fetch_seconds_sum")
    counts = samples_by_labels(family, "sample_fetch_seconds_count")
    assert sums[(("tier", "peer"),)] == pytest.approx(0.001 + 0.005 + 0.05 + 0.5 + 1 + 3 + 120)
    assert counts[(("tier", "peer"),)] == 7.0
    assert sums[(("tier", 'object "store"'),)] == 2.5
    assert counts[(("tier", 'object "store"'),)] == 1.0


def test_unobserved_histogram_exposes_zeros(families):
    samples = [(s.name, s.labels.get("le"), s.value) for s in families["sample_empty_seconds"].samples]
    assert samples == [
        ("sample_empty_seconds_bucket", "1", 0.0),
        ("sample_empty_seconds_bucket", "2", 0.0),
        ("sample_empty_seconds_bucket", "+Inf", 0.0),
        ("sample_empty_seconds_sum", None, 0.0),
        ("sample_empty_seconds_count", None, 0.0),
    ]
