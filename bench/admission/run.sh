#!/usr/bin/env bash
# The admission and fan-out benchmark (docs/benchmarks.md, "Admission and fan-out"): a
# revision staged on every node of a 16-node local cluster (2 zones) behind a throttling
# origin, four times:
#   on              admission and fan-out on
#   off             the anchor: no admission, no peers, every agent straight to the origin
#   on, seeder      on, with a zone's seeder killed (kill -9) mid-fetch
#   on, operator    on, with the operator killed (kill -9) mid-rollout
# Each run is e2e/admission.sh with the release build (build/e2e); their JSON lines go to
# bench/admission/results.jsonl and a table is printed.
#   bench/admission/run.sh [--nodes 16] [--size 512MiB] [--cap 64MiB] [--max-concurrent 16]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
nodes=16
size=512MiB
cap=64MiB
max_concurrent=16
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --size) size=$2; shift ;;
    --cap) cap=$2; shift ;;
    --max-concurrent) max_concurrent=$2; shift ;;
    *) echo "usage: $0 [--nodes N] [--size S] [--cap BYTES] [--max-concurrent C]" >&2; exit 2 ;;
  esac
  shift
done
results=$root/bench/admission/results.jsonl
: >"$results"
common=(--nodes "$nodes" --size "$size" --cap "$cap" --max-concurrent "$max_concurrent" --out "$results")
e2e/admission.sh "${common[@]}" --phases on,off
e2e/admission.sh "${common[@]}" --phases on --kill-seeder
e2e/admission.sh "${common[@]}" --phases on --kill-operator
"$root/.venv/bin/python" - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print(f"{'run':<22}{'ready':>7}{'s':>5}{'origin copies/zone':>20}{'503s':>7}{'p50 s':>8}{'p99 s':>8}{'p99/p50':>9}{'busiest s / cap':>17}")
for row in rows:
    name = row["phase"] + (f" ({row['killed']})" if row["killed"] else "")
    p50, p99 = row["bytes_to_ready_p50"] or 0, row["bytes_to_ready_p99"] or 0
    print(f"{name[:22]:<22}{row['ready_nodes']:>4}/{row['nodes']:<2}{row['seconds']:>5}"
          f"{row['origin_copies_per_zone']:>20.3f}{row['slowdown_503']:>7}{p50:>8.1f}{p99:>8.1f}"
          f"{(p99 / p50 if p50 else 0):>9.2f}{row['origin_busiest_second_after_5s'] / row['cap_bytes_per_second']:>17.3f}")
PY
