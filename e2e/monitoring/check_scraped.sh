#!/usr/bin/env bash
# The e2e half of e2e/monitoring/check.sh: scrapes /metrics of the running modelplane binaries
# and checks that every metric the chart's alert rules and Grafana dashboard name is among what
# they export (with the labels the queries match on). Run it while the binaries run, after they
# have done some work (labelled series appear with their first sample).
#
#   e2e/monitoring/check_scraped.sh LOGS_DIR [OUT_DIR]
#
# LOGS_DIR holds the binaries' logs as modelplane-<component>[-<node>].log (e2e/scenario.sh's
# $state/logs): each one's `admin_server_started ... port=N` line says where its /metrics is; a
# process that is gone is skipped. The operator, the extender and at least one node agent must
# be among them. The expositions are kept in OUT_DIR as <log name>.prom (default
# LOGS_DIR/../metrics) for a look afterwards.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
logs=${1:?usage: $0 LOGS_DIR [OUT_DIR]}
out=${2:-$logs/../metrics}
python=$root/.venv/bin/python
[[ -x $python ]] || python=python3
PATH=$("$root/e2e/tools.sh" bindir):$PATH
export PATH

mkdir -p "$out"
rm -f "$out"/*.prom
"$python" "$here/chart_monitoring.py" scrape --logs "$logs" --out "$out"
for component in modelplane-operator modelplane-scheduler-extender modelplane-node-agent; do
  compgen -G "$out/$component*.prom" >/dev/null || {
    echo "no /metrics scraped from $component: not running, or no admin_server_started line in $logs" >&2
    exit 1
  }
done
rules=$(mktemp /tmp/modelplane-rules.XXXXXX.yaml)
trap 'rm -f "$rules"' EXIT
"$python" "$here/chart_monitoring.py" render-rules --chart "$root/charts/modelplane" --out "$rules"
"$python" "$here/chart_monitoring.py" check --rules "$rules" \
  --dashboard "$root/charts/modelplane/dashboards/storage.json" --scraped "$out"
