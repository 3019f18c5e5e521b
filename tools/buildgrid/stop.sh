#!/usr/bin/env bash
# Stops the BuildGrid server that tools/buildgrid/start.sh started (its pid file), and
# only that one. Its in-memory cache is lost.
#
# Environment: BUILDGRID_STATE_DIR (default <repo>/.tools/buildgrid), BUILDGRID_STOP_WAIT
# (seconds to wait after SIGTERM before SIGKILL, default 10).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
STATE_DIR="${BUILDGRID_STATE_DIR:-$ROOT/.tools/buildgrid}"
PID_FILE="$STATE_DIR/bgd.pid"
PORT_FILE="$STATE_DIR/bgd.port"
STOP_WAIT="${BUILDGRID_STOP_WAIT:-10}"

log() { echo "buildgrid: $*" >&2; }

if [ ! -f "$PID_FILE" ]; then
  log "not running (no $PID_FILE)"
  exit 0
fi
pid="$(cat "$PID_FILE")"
case "$pid" in ''|*[!0-9]*) log "error: $PID_FILE holds no pid"; rm -f "$PID_FILE" "$PORT_FILE"; exit 1 ;; esac

if ! kill -0 "$pid" 2>/dev/null; then
  log "not running (stale pid $pid)"
  rm -f "$PID_FILE" "$PORT_FILE"
  exit 0
fi
# Make sure the pid is still a bgd, not a recycled pid of something else.
if ! tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "bgd.* server start"; then
  log "pid $pid is no longer bgd; removing the stale pid file"
  rm -f "$PID_FILE" "$PORT_FILE"
  exit 0
fi

# start.sh runs bgd as the leader of its own session: signal that group (bgd and its children).
signal() { kill "-$1" -- "-$pid" 2>/dev/null || kill "-$1" "$pid" 2>/dev/null || true; }
signal TERM
deadline=$((SECONDS + STOP_WAIT))
while kill -0 "$pid" 2>/dev/null; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    log "pid $pid ignored SIGTERM for ${STOP_WAIT}s; sending SIGKILL"
    signal KILL
    break
  fi
  sleep 0.2
done
rm -f "$PID_FILE" "$PORT_FILE"
log "stopped (pid $pid)"
