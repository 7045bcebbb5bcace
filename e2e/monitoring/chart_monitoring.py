#!/usr/bin/env python3
"""Checks that the chart's alert rules and Grafana dashboard name only metrics the binaries export.

    chart_monitoring.py render-rules --chart DIR --out FILE
        renders the chart's PrometheusRule (default values, rules on) and writes its groups as a
        rules file for `promtool check rules` and `promtool test rules`
    chart_monitoring.py scrape --logs DIR --out DIR
        scrapes /metrics of every modelplane binary whose log in DIR (modelplane-*.log) names its
        admin port (the `admin_server_started ... port=N` line; the last one, if a process was
        restarted); a process no longer listening is skipped
    chart_monitoring.py scrape --endpoint NAME=URL [--endpoint ...] --out DIR
        scrapes the given /metrics URLs
    chart_monitoring.py check --rules FILE --dashboard FILE (--scraped DIR | --sources ROOT)
        every metric a rule or a dashboard query names must be exported: by the scraped binaries
        (the e2e run) or, as a fast stand-in, by a metric registration in the C++ sources

A Prometheus series name is not always a family name: a histogram family `x` exports `x_bucket`,
`x_sum` and `x_count` and no `x`; a counter is exported under its own name (ours end in `_total`).
The check knows the families' types (`# TYPE` lines, or which Add* call registered them) and says
so when a query names a histogram family bare. Label matchers (`x{tier="peer"}`) are checked too,
where the exported label names are known: from scraped samples, or from a registration's
`.label_names`. Labels Prometheus adds at scrape time (instance, job, pod...) are always allowed.

Standard library and PyYAML only; `helm` must be on PATH for render-rules.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field

import yaml

# Labels a scrape or Kubernetes service discovery adds to every series of a target.
TARGET_LABELS = frozenset(
    {"instance", "job", "namespace", "pod", "node", "container", "service", "endpoint"}
)

PROMQL_KEYWORDS = frozenset(
    {
        "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
        "unless", "offset", "inf", "nan", "atan2",
    }
)
GROUPING_CLAUSE = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
# Grafana's variables: $name, ${name...}, [[name]].
GRAFANA_VARIABLE = re.compile(r"\$\{[^}]*\}|\$\w+|\[\[\w+\]\]")
SELECTOR = re.compile(r"(?<![\w:.])([a-zA-Z_:][\w:]*)?\s*\{([^{}]*)\}")
MATCHER_LABEL = re.compile(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)")
IDENTIFIER = re.compile(r"(?<![\w:.])[a-zA-Z_:][\w:]*")


@dataclass
class Selector:
    metric: str | None  # None: a selector without a name, e.g. {__name__=~"..."}
    labels: frozenset[str]


def parse_query(expr: str) -> tuple[set[str], list[Selector]]:
    """The metric names a PromQL expression reads, and its selectors' label names."""
    text = STRING_LITERAL.sub('""', expr)
    text = GRAFANA_VARIABLE.sub("1", text)
    selectors = [
        Selector(match.group(1), frozenset(MATCHER_LABEL.findall(match.group(2))))
        for match in SELECTOR.finditer(text)
    ]
    text = re.sub(r"\{[^{}]*\}", " ", text)
    text = re.sub(r"\[[^\[\]]*\]", " ", text)
    text = GROUPING_CLAUSE.sub(" ", text)
    names = set()
    for match in IDENTIFIER.finditer(text):
        word = match.group(0)
        rest = text[match.end():].lstrip()
        if rest.startswith("("):  # a function or an aggregation
            continue
        if word.lower() in PROMQL_KEYWORDS:
            continue
        names.add(word)
    for selector in selectors:
        if selector.metric is None and "__name__" in selector.labels:
            names.add("{__name__=...}")  # not checkable: reported as unknown on purpose
    return names, selectors


def grafana_variable_query(query: str) -> str | None:
    """The PromQL inside a Grafana Prometheus variable query, or None when it reads no metric."""
    query = query.strip()
    match = re.fullmatch(r"label_values\((.*)\)", query, re.S)
    if match:
        inner = match.group(1)
        # label_values(label) reads no metric; label_values(selector, label) reads the selector.
        depth = 0
        for index, char in enumerate(inner):
            if char in "({[":
                depth += 1
            elif char in ")}]":
                depth -= 1
            elif char == "," and depth == 0:
                return inner[:index]
        return None
    match = re.fullmatch(r"(?:query_result|metrics)\((.*)\)", query, re.S)
    if match:
        return match.group(1) if query.startswith("query_result") else None
    if re.fullmatch(r"label_names\(\)", query):
        return None
    return query


# --- what the rules and the dashboard ask for -------------------------------------------------


def rule_groups(document: dict) -> list[dict]:
    """The rule groups of a rules file or of a PrometheusRule manifest."""
    if document.get("kind") == "PrometheusRule":
        return document["spec"]["groups"]
    return document["groups"]


def rule_queries(path: pathlib.Path) -> list[tuple[str, str]]:
    queries = []
    for document in yaml.safe_load_all(path.read_text()):
        if not document:
            continue
        for group in rule_groups(document):
            for rule in group["rules"]:
                name = rule.get("alert") or rule.get("record")
                queries.append((f"rule {group['name']}/{name}", str(rule["expr"])))
    return queries


def dashboard_queries(path: pathlib.Path) -> list[tuple[str, str]]:
    dashboard = json.loads(path.read_text())
    queries = []

    def panels(items):
        for panel in items:
            yield panel
            yield from panels(panel.get("panels", []))

    for panel in panels(dashboard.get("panels", [])):
        for target in panel.get("targets", []):
            if "expr" in target:
                queries.append((f"panel {panel.get('title')!r} {target.get('refId')}", target["expr"]))
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") != "query":
            continue
        query = variable.get("query")
        if isinstance(query, dict):
            query = query.get("query", "")
        promql = grafana_variable_query(query or "")
        if promql is not None:
            queries.append((f"variable ${variable['name']}", promql))
    return queries


def dashboard_problems(path: pathlib.Path) -> list[str]:
    """What Grafana would load wrongly or not at all: a panel without a unique id, a place on the
    24-column grid or the dashboard's data source variable; a target without refId or expr."""
    try:
        dashboard = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        return [f"{path.name}: not JSON: {error}"]
    problems = [f"{path.name}: no {key}" for key in ("uid", "title", "schemaVersion") if key not in dashboard]
    variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
    if variables.get("datasource", {}).get("type") != "datasource":
        problems.append(f"{path.name}: no datasource variable of type datasource")
    ids = set()
    for panel in dashboard.get("panels", []):
        where = f"{path.name}: panel {panel.get('title')!r}"
        if panel.get("id") in ids or not isinstance(panel.get("id"), int):
            problems.append(f"{where}: id {panel.get('id')!r} missing or not unique")
        ids.add(panel.get("id"))
        grid = panel.get("gridPos", {})
        if not all(isinstance(grid.get(k), int) for k in "hwxy") or grid["x"] + grid["w"] > 24:
            problems.append(f"{where}: gridPos {grid} is not on the 24-column grid")
        if panel.get("type") == "row":
            continue
        if panel.get("datasource", {}).get("uid") != "${datasource}":
            problems.append(f"{where}: data source is not ${{datasource}}")
        targets = panel.get("targets", [])
        if not targets:
            problems.append(f"{where}: no query")
        if len({t.get("refId") for t in targets}) != len(targets):
            problems.append(f"{where}: refIds missing or not unique")
        for target in targets:
            if not target.get("expr"):
                problems.append(f"{where}: target {target.get('refId')} has no expr")
    return problems


# --- what the binaries export ------------------------------------------------------------------


@dataclass
class Family:
    name: str
    type: str
    # Label names of the samples seen (scrape) or registered (sources); None: not known.
    labels: set[str] | None = None
    where: set[str] = field(default_factory=set)

    def series_names(self) -> list[str]:
        if self.type == "histogram":
            return [f"{self.name}_bucket", f"{self.name}_sum", f"{self.name}_count"]
        if self.type == "summary":
            return [self.name, f"{self.name}_sum", f"{self.name}_count"]
        return [self.name]

    def series_labels(self, series: str) -> set[str] | None:
        if self.labels is None:
            return None
        if series.endswith("_bucket") and self.type == "histogram":
            return self.labels | {"le"}
        if self.type == "summary" and series == self.name:
            return self.labels | {"quantile"}
        return set(self.labels)


class Exported:
    """The metric families of one or more binaries, by family name."""

    def __init__(self) -> None:
        self.families: dict[str, Family] = {}

    def add(self, name: str, type_: str, labels: set[str] | None, where: str) -> Family:
        family = self.families.get(name)
        if family is None:
            family = self.families[name] = Family(name, type_, None if labels is None else set(labels))
        elif labels is not None:
            family.labels = set(labels) if family.labels is None else family.labels | labels
        family.where.add(where)
        return family

    def series(self) -> dict[str, Family]:
        return {series: family for family in self.families.values() for series in family.series_names()}


SAMPLE_LINE = re.compile(r"^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+\S+")
SAMPLE_LABEL = re.compile(r'([a-zA-Z_]\w*)="(?:[^"\\]|\\.)*"')


def parse_exposition(text: str, where: str, exported: Exported) -> None:
    """Reads the Prometheus text format 0.0.4: `# TYPE` lines name every registered family, even
    one without samples yet; sample lines give the label names."""
    sample_labels: dict[str, set[str]] = {}
    types: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, type_ = line.split(maxsplit=3)
            types[name] = type_.strip()
        elif line and not line.startswith("#"):
            match = SAMPLE_LINE.match(line)
            if not match:
                raise ValueError(f"{where}: not a sample line: {line!r}")
            labels = set(SAMPLE_LABEL.findall(match.group(2) or ""))
            sample_labels.setdefault(match.group(1), set()).update(labels)
    for name, type_ in types.items():
        family = Family(name, type_)
        seen = [sample_labels[s] for s in family.series_names() if s in sample_labels]
        labels = set().union(*seen) - {"le", "quantile"} if seen else None
        exported.add(name, type_, labels, where)
    for sample in sample_labels:
        if not any(sample in Family(name, type_).series_names() for name, type_ in types.items()):
            raise ValueError(f"{where}: sample {sample} has no # TYPE line")


def scrape(url: str, timeout: float = 10.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}")
        return response.read().decode()


ADMIN_STARTED_KEYVALUE = re.compile(r"event=admin_server_started\b.*?\baddress=(\S+).*?\bport=(\d+)")


def admin_endpoint(log_text: str) -> str | None:
    """http://address:port/metrics from the last admin_server_started line of a binary's log."""
    endpoint = None
    for line in log_text.splitlines():
        if "admin_server_started" not in line:
            continue
        match = ADMIN_STARTED_KEYVALUE.search(line)
        if match:
            address, port = match.group(1).strip('"'), match.group(2)
        else:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            address, port = event.get("address"), event.get("port")
        if address in ("0.0.0.0", "::", "[::]"):
            address = "127.0.0.1"
        if ":" in address and not address.startswith("["):
            address = f"[{address}]"
        endpoint = f"http://{address}:{port}/metrics"
    return endpoint


# The call a registered name is the first argument of: Add*({.name = "..." or a file's local
# gauge("...") / counter("...") helper.
REGISTRATION_CALL = re.compile(
    r"(AddHistogram|AddCounter|AddGauge)\s*\(\s*\{\s*\.name\s*=\s*$|\b(gauge|counter)\s*\(\s*$"
)
MARKER_TYPE = {"AddHistogram": "histogram", "AddCounter": "counter", "AddGauge": "gauge",
               "gauge": "gauge", "counter": "counter"}
SOURCE_NAME = re.compile(r'"(modelplane_[a-z0-9_]+)"')


def statement_end(text: str, start: int) -> int:
    """The index of the first `;` from start that is not inside a string literal."""
    in_string = False
    index = start
    while index < len(text):
        char = text[index]
        if in_string:
            if char == "\\":
                index += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == ";":
            return index
        index += 1
    return len(text)


def exported_from_sources(root: pathlib.Path, exported: Exported) -> None:
    """Every metric family the C++ sources register: a name in quotes as the first argument of an
    Add* call or of the files' local gauge()/counter() helpers. Label names come from
    `.label_names = {...}` in the same statement; a helper's are not known."""
    for folder in ("core", "operator", "scheduler-extender", "node-agent"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cc", ".h"):
                continue
            text = path.read_text()
            for match in SOURCE_NAME.finditer(text):
                line_start = text.rfind("\n", 0, match.start()) + 1
                if "//" in text[line_start:match.start()]:
                    continue
                call = REGISTRATION_CALL.search(text[max(0, match.start() - 200):match.start()])
                if not call:
                    continue
                marker = call.group(1) or call.group(2)
                statement = text[match.end():statement_end(text, match.end())]
                labels: set[str] | None
                if marker.startswith("Add"):
                    found = re.search(r"\.label_names\s*=\s*\{([^}]*)\}", statement)
                    labels = set(re.findall(r'"(\w+)"', found.group(1))) if found else set()
                else:
                    labels = None
                relative = path.relative_to(root)
                exported.add(match.group(1), MARKER_TYPE[marker], labels, str(relative))


# --- the check ---------------------------------------------------------------------------------


def check(queries: list[tuple[str, str]], exported: Exported) -> list[str]:
    series = exported.series()
    problems = []
    for where, expr in queries:
        names, selectors = parse_query(expr)
        if not names:
            problems.append(f"{where}: names no metric: {expr}")
        for name in sorted(names):
            if name in series:
                continue
            family = exported.families.get(name)
            if family is not None:
                problems.append(
                    f"{where}: {name} is a {family.type}; query one of "
                    f"{', '.join(family.series_names())}"
                )
            else:
                problems.append(f"{where}: {name} is not exported by any binary")
        for selector in selectors:
            if selector.metric is None or selector.metric not in series:
                continue
            known = series[selector.metric].series_labels(selector.metric)
            if known is None:
                continue
            unknown = selector.labels - known - TARGET_LABELS
            if unknown:
                problems.append(
                    f"{where}: {selector.metric} has no label {', '.join(sorted(unknown))} "
                    f"(it has {', '.join(sorted(known)) or 'none'})"
                )
    return problems


def render_rules(chart: pathlib.Path, out: pathlib.Path) -> None:
    manifest = subprocess.run(
        ["helm", "template", "monitoring-check", str(chart),
         "--set", "monitoring.prometheusRule.enabled=true",
         "--show-only", "templates/prometheus-rules.yaml"],
        check=True, capture_output=True, text=True,
    ).stdout
    documents = [d for d in yaml.safe_load_all(manifest) if d]
    if len(documents) != 1 or documents[0].get("kind") != "PrometheusRule":
        raise RuntimeError("the chart rendered no single PrometheusRule")
    out.write_text(yaml.safe_dump({"groups": rule_groups(documents[0])}, sort_keys=False))


def scrape_command(args) -> int:
    endpoints = dict(item.split("=", 1) for item in args.endpoint)
    if args.logs:
        # modelplane-*.log: the binaries' own; the cluster's logs (an audit log among them) may
        # share the folder and are large.
        for log in sorted(args.logs.glob("modelplane-*.log")):
            endpoint = admin_endpoint(log.read_text(errors="replace"))
            if endpoint:
                endpoints[log.stem] = endpoint
    if not endpoints:
        print("scrape: no endpoint given and no admin_server_started line in the logs",
              file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, url in sorted(endpoints.items()):
        try:
            text = scrape(url)
        except urllib.error.URLError as error:
            if not isinstance(error.reason, ConnectionRefusedError):
                print(f"scrape: {name} at {url}: {error}", file=sys.stderr)
                failed += 1
                continue
            # A process the run stopped on purpose (a killed seeder); the caller says which
            # components must have been scraped.
            print(f"skipped {name} at {url}: nothing listens there (process gone)")
            continue
        except (OSError, RuntimeError) as error:
            print(f"scrape: {name} at {url}: {error}", file=sys.stderr)
            failed += 1
            continue
        (args.out / f"{name}.prom").write_text(text)
        families = sum(1 for line in text.splitlines() if line.startswith("# TYPE "))
        print(f"scraped {name} at {url}: {families} families")
    return 1 if failed else 0


def check_command(args) -> int:
    exported = Exported()
    if args.scraped:
        files = sorted(args.scraped.glob("*.prom"))
        if not files:
            print(f"check: no *.prom file in {args.scraped}", file=sys.stderr)
            return 1
        for path in files:
            parse_exposition(path.read_text(), path.stem, exported)
        origin = f"{len(files)} scraped binaries"
    else:
        exported_from_sources(args.sources, exported)
        origin = "the C++ sources' registrations"
    queries = [q for path in args.rules for q in rule_queries(path)]
    queries += [q for path in args.dashboard for q in dashboard_queries(path)]
    if not queries:
        print("check: no rule or dashboard query to check", file=sys.stderr)
        return 1
    problems = check(queries, exported)
    problems += [p for path in args.dashboard for p in dashboard_problems(path)]
    for problem in problems:
        print(f"FAIL {problem}")
    named = set().union(*(parse_query(expr)[0] for _, expr in queries))
    print(f"{len(queries)} queries name {len(named)} series; {len(exported.families)} families "
          f"exported by {origin}; {len(problems)} problems")
    return 1 if problems else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser("render-rules")
    render.add_argument("--chart", type=pathlib.Path, required=True)
    render.add_argument("--out", type=pathlib.Path, required=True)
    scraper = commands.add_parser("scrape")
    scraper.add_argument("--logs", type=pathlib.Path)
    scraper.add_argument("--endpoint", action="append", default=[], metavar="NAME=URL")
    scraper.add_argument("--out", type=pathlib.Path, required=True)
    checker = commands.add_parser("check")
    checker.add_argument("--rules", type=pathlib.Path, action="append", default=[])
    checker.add_argument("--dashboard", type=pathlib.Path, action="append", default=[])
    source = checker.add_mutually_exclusive_group(required=True)
    source.add_argument("--scraped", type=pathlib.Path, help="folder of *.prom expositions")
    source.add_argument("--sources", type=pathlib.Path, help="the repository root")
    args = parser.parse_args(argv)
    if args.command == "render-rules":
        render_rules(args.chart, args.out)
        return 0
    if args.command == "scrape":
        return scrape_command(args)
    return check_command(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
