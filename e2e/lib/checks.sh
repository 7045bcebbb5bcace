# The step-by-step output and waits of the end-to-end checks (e2e/scenario.sh,
# e2e/real-node.sh, bench/serving/run.sh). Sourced.

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
fail() { printf '\033[31mFAIL: %s\033[0m\n' "$*" >&2; exit 1; }
pass() { printf '  \033[32mok\033[0m %s\n' "$*"; }
# wait_for SECONDS DESCRIPTION COMMAND...: retries COMMAND every half second.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out after ${seconds}s waiting for: $what"
    sleep 0.5
  done
}
