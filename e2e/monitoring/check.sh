#!/usr/bin/env bash
# Checks the chart's alerts and Grafana dashboard in seconds, without a cluster:
#
#   1. helm lint --strict with both turned on (the values schema), and the defaults render
#      neither (both are off by default);
#   2. the PrometheusRule's groups, rendered from the default values, pass
#      `promtool check rules` and `promtool test rules` (rules_test.yaml: every alert firing and
#      not firing);
#   3. every metric a rule or a dashboard query names is registered in the C++ sources, with the
#      labels the queries match on, and the dashboard is one Grafana loads (chart_monitoring.py,
#      whose own tests run first).
#
# The e2e scenario checks the same names against the running binaries' /metrics
# (check_scraped.sh): the sources are the fast stand-in, the scrape is the proof.
#
#   e2e/monitoring/check.sh      needs helm and promtool (e2e/tools.sh build) and the venv
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
chart=$root/charts/modelplane
python=$root/.venv/bin/python
[[ -x $python ]] || { echo "no venv at $root/.venv: run scripts/setup.sh" >&2; exit 1; }
bindir=$("$root/e2e/tools.sh" bindir) || exit 1
promtool=$("$root/e2e/tools.sh" promtool) || exit 1
export PATH=$bindir:$PATH
work=$(mktemp -d /tmp/modelplane-monitoring.XXXXXX)
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
check() {
  local name=$1 out=$work/check.out start=$SECONDS
  shift
  if "$@" >"$out" 2>&1; then
    passed=$((passed + 1))
    echo "PASS $name ($((SECONDS - start))s)"
  else
    failed=$((failed + 1))
    echo "FAIL $name ($((SECONDS - start))s)"
    grep -v 'found symbolic link in path' "$out" | sed 's/^/    | /' | tail -n 60
  fi
}

lint_with_monitoring() {
  helm lint --strict "$chart" --set monitoring.prometheusRule.enabled=true \
    --set monitoring.grafanaDashboard.enabled=true
}
off_by_default() {
  local rendered
  rendered=$(helm template off "$chart" 2>/dev/null) || return 1
  if grep -q 'kind: PrometheusRule\|grafana_dashboard' <<<"$rendered"; then
    echo "the defaults render a PrometheusRule or a dashboard ConfigMap"
    return 1
  fi
}
# A misspelt key, a ratio out of range and an alert label that would clash are refused.
schema_refuses() {
  local bad
  for bad in "--set monitoring.prometheusRule.enabld=true" \
             "--set-json monitoring.prometheusRule.cacheFreeRatio=1.5" \
             "--set monitoring.prometheusRule.alertLabels.severity=critical"; do
    # shellcheck disable=SC2086
    if helm lint --strict "$chart" $bad >/dev/null 2>&1; then
      echo "accepted: $bad"
      return 1
    fi
  done
}
render_rules() {
  "$python" "$here/chart_monitoring.py" render-rules --chart "$chart" --out "$work/rules.yaml" &&
    cp "$here/rules_test.yaml" "$work/rules_test.yaml"
}

check "helper tests (chart_monitoring.py)" \
  "$python" -m pytest -q -p no:cacheprovider "$here/test_chart_monitoring.py"
check "helm lint --strict with the rules and the dashboard on" lint_with_monitoring
check "the defaults render neither" off_by_default
check "the values schema refuses bad monitoring values" schema_refuses
check "render the PrometheusRule's groups" render_rules
check "promtool check rules" "$promtool" check rules "$work/rules.yaml"
check "promtool test rules (rules_test.yaml)" "$promtool" test rules "$work/rules_test.yaml"
check "rules and dashboard name only metrics the sources register" \
  "$python" "$here/chart_monitoring.py" check --rules "$work/rules.yaml" \
  --dashboard "$chart/dashboards/storage.json" --sources "$root"

echo "$passed passed, $failed failed"
((failed == 0))
