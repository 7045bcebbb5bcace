# Process bookkeeping for scripts that start long-running components as plain processes
# (e2e/cluster.sh, e2e/node.sh). Sourced; the caller sets LOGS and PIDS (folders) and `die`.
#
# Each started process is recorded as "<pid> <start time>"; `stop_components` kills only a PID
# whose start time still matches, so a recycled PID is never touched.

# Never fails: an exited process simply has no start time.
proc_start_time() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null || true; }

# start NAME BINARY ARGS...: runs the binary in the background, logs to LOGS/NAME.log.
start() {
  local name="$1"; shift
  nohup "$@" >"${LOGS}/${name}.log" 2>&1 </dev/null &
  local pid=$! started
  started="$(proc_start_time "${pid}")"
  echo "${pid} ${started}" >"${PIDS}/${name}"
  # No start time: it already exited (e.g. the binary is missing); its log says why.
  [[ -n "${started}" ]] || { cat "${LOGS}/${name}.log" >&2; die "${name} exited at once"; }
  log "started ${name} pid=${pid}"
}

# alive NAME: true if the recorded process is still the one we started and has not exited
# (a child that exited but was not reaped yet is a zombie: state Z, same start time).
alive() {
  local file="${PIDS}/$1" pid started
  [[ -f "${file}" ]] || return 1
  read -r pid started <"${file}"
  [[ -n "${pid}" && -n "${started}" && "$(proc_start_time "${pid}")" == "${started}" ]] || return 1
  [[ "$(awk '{print $3}' "/proc/${pid}/stat" 2>/dev/null || true)" != Z ]]
}

recorded_pid() { local pid _; read -r pid _ <"${PIDS}/$1"; echo "${pid}"; }

# stop_components NAME...: SIGTERM to each that is alive, in the order given (clients before
# the servers they talk to), 10 s to exit, then SIGKILL to whichever of ours is left.
stop_components() {
  local c
  for c in "$@"; do
    alive "${c}" && kill -TERM "$(recorded_pid "${c}")" 2>/dev/null || true
  done
  local deadline=$((SECONDS + 10)) pid left
  while :; do
    left=()
    for c in "$@"; do alive "${c}" && left+=("${c}"); done
    (( ${#left[@]} == 0 )) && break
    if (( SECONDS >= deadline )); then
      for c in "${left[@]}"; do
        pid="$(recorded_pid "${c}")"
        log "killing ${c} pid=${pid} with SIGKILL"
        kill -KILL "${pid}" 2>/dev/null || true
      done
      sleep 0.5
      break
    fi
    sleep 0.2
  done
}

# wait_for WHAT SECONDS COMMAND...: polls COMMAND every 0.2 s; fails after SECONDS.
wait_for() {
  local what="$1" seconds="$2"; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if (( SECONDS >= deadline )); then
      log "timed out after ${seconds}s waiting for ${what}"
      return 1
    fi
    sleep 0.2
  done
}
