"""Tests of chart_monitoring.py: which metric names a query reads, what an exposition exports,
what the sources register, and what the check reports.

    .venv/bin/python -m pytest -q e2e/monitoring/test_chart_monitoring.py
"""

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import chart_monitoring as cm  # noqa: E402


def names(expr):
    return cm.parse_query(expr)[0]


def test_functions_aggregations_grouping_and_keywords_are_not_metrics():
    assert names(
        'histogram_quantile(0.95, sum by (le, tier) (rate(a_bucket{tier="peer"}[5m])))'
    ) == {"a_bucket"}
    assert names("sum(rate(a_total[5m])) by (source) / ignoring (level) group_left b") == {
        "a_total", "b"}
    assert names("a unless a offset 30m > bool 0 and on (instance) (c == 1)") == {"a", "c"}
    assert names("max without (pod) (x) or vector(1) + Inf * NaN") == {"x"}


def test_strings_durations_numbers_and_grafana_variables_are_not_metrics():
    assert names('a{source=~"$source", kind="not_a_metric"}[$__rate_interval]') == {"a"}
    assert names('label_replace(a, "dst", "$1", "src", "(.*)") * 1e3 + 0x1f') == {"a"}
    assert names("rate(a[${__range}]) / 5m_typo") == {"a"}


def test_selectors_give_their_label_names():
    _, selectors = cm.parse_query('a{tier="peer", source!~"x"} / b{level = "limit"} + c')
    assert [(s.metric, set(s.labels)) for s in selectors] == [
        ("a", {"tier", "source"}), ("b", {"level"})]


def test_grafana_variable_queries():
    assert cm.grafana_variable_query("label_values(a{b=\"c,d\"}, instance)") == 'a{b="c,d"}'
    assert cm.grafana_variable_query("label_values(instance)") is None
    assert cm.grafana_variable_query("query_result(sum(a))") == "sum(a)"
    assert cm.grafana_variable_query("metrics(modelplane_)") is None
    assert cm.grafana_variable_query("up") == "up"


EXPOSITION = """\
# HELP modelplane_fetch_bytes_total Bytes fetched.
# TYPE modelplane_fetch_bytes_total counter
modelplane_fetch_bytes_total{tier="peer",source="peer/a \\"b\\", c"} 12
# HELP modelplane_fetch_request_bytes Sizes.
# TYPE modelplane_fetch_request_bytes histogram
modelplane_fetch_request_bytes_bucket{tier="peer",le="65536"} 1
modelplane_fetch_request_bytes_bucket{tier="peer",le="+Inf"} 1
modelplane_fetch_request_bytes_sum{tier="peer"} 4
modelplane_fetch_request_bytes_count{tier="peer"} 1
# HELP modelplane_fetch_quarantines_total None yet.
# TYPE modelplane_fetch_quarantines_total counter
# HELP modelplane_cache_used_bytes Used.
# TYPE modelplane_cache_used_bytes gauge
modelplane_cache_used_bytes 5
"""


def exported_from_text(text=EXPOSITION):
    exported = cm.Exported()
    cm.parse_exposition(text, "agent", exported)
    return exported


def test_exposition_series_and_labels():
    exported = exported_from_text()
    series = exported.series()
    assert set(series) == {
        "modelplane_fetch_bytes_total", "modelplane_fetch_request_bytes_bucket",
        "modelplane_fetch_request_bytes_sum", "modelplane_fetch_request_bytes_count",
        "modelplane_fetch_quarantines_total", "modelplane_cache_used_bytes"}
    assert exported.families["modelplane_fetch_bytes_total"].labels == {"tier", "source"}
    assert exported.families["modelplane_fetch_request_bytes"].labels == {"tier"}
    # A family without samples yet: exported, labels unknown.
    assert exported.families["modelplane_fetch_quarantines_total"].labels is None
    assert exported.families["modelplane_cache_used_bytes"].labels == set()


def test_a_sample_without_a_type_line_is_an_error():
    try:
        exported_from_text("modelplane_x 1\n")
    except ValueError as error:
        assert "no # TYPE" in str(error)
    else:
        raise AssertionError("accepted a sample without # TYPE")


def test_check_reports_unknown_metrics_bare_histograms_and_unknown_labels():
    exported = exported_from_text()
    problems = cm.check([
        ("ok", 'histogram_quantile(0.5, sum by (le) (rate(modelplane_fetch_request_bytes_bucket{tier="peer", instance=~".*"}[5m])))'),
        ("ok counter", "rate(modelplane_fetch_bytes_total[5m])"),
        ("no samples yet", 'modelplane_fetch_quarantines_total{anything="x"}'),
        ("bare", "rate(modelplane_fetch_request_bytes[5m])"),
        ("missing", "modelplane_fetch_bytes"),
        ("label", 'modelplane_cache_used_bytes{level="limit"}'),
        ("nothing", "vector(1)"),
    ], exported)
    assert problems == [
        "bare: modelplane_fetch_request_bytes is a histogram; query one of "
        "modelplane_fetch_request_bytes_bucket, modelplane_fetch_request_bytes_sum, "
        "modelplane_fetch_request_bytes_count",
        "missing: modelplane_fetch_bytes is not exported by any binary",
        "label: modelplane_cache_used_bytes has no label level (it has none)",
        "nothing: names no metric: vector(1)",
    ]


def test_admin_endpoint_from_keyvalue_and_json_logs_takes_the_last():
    log = (
        "ts=1 level=info component=operator event=admin_server_started address=127.0.0.1 port=4001\n"
        "ts=2 level=info component=operator event=started\n"
        "ts=3 level=info component=operator event=admin_server_started address=0.0.0.0 port=4002\n"
    )
    assert cm.admin_endpoint(log) == "http://127.0.0.1:4002/metrics"
    json_log = json.dumps({"event": "admin_server_started", "address": "::1", "port": 9090})
    assert cm.admin_endpoint(json_log) == "http://[::1]:9090/metrics"
    assert cm.admin_endpoint("event=started\n") is None


def test_sources_registrations(tmp_path):
    folder = tmp_path / "node-agent"
    folder.mkdir()
    (folder / "m.cc").write_text(
        """
  // e.g. "modelplane_in_a_comment_total"
  auto a = registry.AddHistogram({.name = "modelplane_sizes",
                                  .help = "Sizes; by tier.",
                                  .label_names = {"tier"}}, buckets);
  auto b = registry.AddCounter({.name = "modelplane_plain_total", .help = "x"});
  auto c = gauge("modelplane_helper_bytes", "Through a local helper.");
  logger.Info("modelplane_not_a_metric");
""")
    for other in ("core", "operator", "scheduler-extender"):
        (tmp_path / other).mkdir()
    exported = cm.Exported()
    cm.exported_from_sources(tmp_path, exported)
    got = {f.name: (f.type, f.labels) for f in exported.families.values()}
    assert got == {
        "modelplane_sizes": ("histogram", {"tier"}),
        "modelplane_plain_total": ("counter", set()),
        "modelplane_helper_bytes": ("gauge", None),
    }


def test_dashboard_problems(tmp_path):
    good = {
        "uid": "u", "title": "t", "schemaVersion": 39,
        "templating": {"list": [{"name": "datasource", "type": "datasource"}]},
        "panels": [
            {"type": "row", "id": 1, "gridPos": {"h": 1, "w": 24, "x": 0, "y": 0}},
            {"type": "timeseries", "id": 2, "gridPos": {"h": 8, "w": 12, "x": 12, "y": 1},
             "datasource": {"uid": "${datasource}"}, "targets": [{"refId": "A", "expr": "a"}]},
        ],
    }
    path = tmp_path / "d.json"
    path.write_text(json.dumps(good))
    assert cm.dashboard_problems(path) == []
    bad = json.loads(json.dumps(good))
    bad["panels"][1].update(id=1, gridPos={"h": 8, "w": 16, "x": 12, "y": 1},
                            targets=[{"refId": "A", "expr": ""}])
    path.write_text(json.dumps(bad))
    assert len(cm.dashboard_problems(path)) == 3


def test_the_shipped_rules_and_dashboard_name_only_source_metrics():
    root = pathlib.Path(__file__).resolve().parents[2]
    exported = cm.Exported()
    cm.exported_from_sources(root, exported)
    dashboard = root / "charts/modelplane/dashboards/storage.json"
    assert cm.dashboard_problems(dashboard) == []
    assert cm.check(cm.dashboard_queries(dashboard), exported) == []


def test_scrape_from_logs_skips_a_process_that_is_gone(tmp_path):
    import http.server
    import socket
    import threading

    class Metrics(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = EXPOSITION.encode()
            self.send_response(200 if self.path == "/metrics" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Metrics)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    logs = tmp_path / "logs"
    logs.mkdir()
    started = "ts=1 level=info event=admin_server_started address=127.0.0.1 port={}\n"
    (logs / "modelplane-node-agent-a.log").write_text(started.format(server.server_address[1]))
    (logs / "modelplane-node-agent-b.log").write_text(started.format(dead_port))
    (logs / "kube-apiserver.log").write_text("nothing of ours\n")
    try:
        args = cm.argparse.Namespace(logs=logs, endpoint=[], out=tmp_path / "out")
        assert cm.scrape_command(args) == 0
    finally:
        server.shutdown()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["modelplane-node-agent-a.prom"]
    assert (tmp_path / "out" / "modelplane-node-agent-a.prom").read_text() == EXPOSITION
