#!/usr/bin/env bash
# Starts BuildGrid as an in-memory REAPI cache on loopback, for Pants' remote caching
# (see docs/remote-cache.md). Idempotent: the venv is built once, and a server this script
# already started on the same port is reused.
#
#   tools/buildgrid/start.sh [PORT]        # default 50051 (or $BUILDGRID_PORT)
#
# Environment:
#   BUILDGRID_PORT       port on 127.0.0.1 (default 50051; the argument wins)
#   BUILDGRID_INSTANCE   REAPI instance name (default "agentrc")
#   BUILDGRID_STATE_DIR  pid, port and log files (default <repo>/.tools/buildgrid)
#   BUILDGRID_VENV       the Python 3.11 venv holding bgd (default <repo>/.tools/buildgrid-venv)
#   BUILDGRID_WAIT       seconds to wait for the port to accept connections (default 30)
#   AGENTRC_PY311        a python3.11 to build the venv with (else python3.11 on PATH, else pyenv's)
#
# On success it prints the Pants flags to use on stdout (one line), everything else on stderr.
# Exit codes: 0 running, 1 failed to start, 2 bad usage, 3 BuildGrid cannot be installed here.
set -euo pipefail

BUILDGRID_VERSION="0.4.4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
HOST="127.0.0.1"   # loopback only: the config has no TLS and no authorization
PORT="${1:-${BUILDGRID_PORT:-50051}}"
INSTANCE="${BUILDGRID_INSTANCE:-agentrc}"
STATE_DIR="${BUILDGRID_STATE_DIR:-$ROOT/.tools/buildgrid}"
VENV="${BUILDGRID_VENV:-$ROOT/.tools/buildgrid-venv}"
WAIT="${BUILDGRID_WAIT:-30}"
PID_FILE="$STATE_DIR/bgd.pid"
PORT_FILE="$STATE_DIR/bgd.port"
LOG_FILE="$STATE_DIR/bgd.log"

log() { echo "buildgrid: $*" >&2; }

case "$PORT" in
  ''|*[!0-9]*) log "error: port must be a number, got '$PORT'"; exit 2 ;;
esac
if [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then log "error: port $PORT out of range"; exit 2; fi
case "$INSTANCE" in
  *[!A-Za-z0-9._/-]*) log "error: instance name '$INSTANCE' has characters other than [A-Za-z0-9._/-]"; exit 2 ;;
esac
case "$WAIT" in ''|*[!0-9]*) log "error: BUILDGRID_WAIT must be whole seconds"; exit 2 ;; esac

flags() {
  echo "--remote-cache-read --remote-cache-write --remote-store-address=grpc://$HOST:$PORT --remote-instance-name=$INSTANCE"
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; }

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

find_python311() {
  local candidate
  for candidate in "${AGENTRC_PY311:-}" "$(command -v python3.11 || true)" \
      "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11*/bin/python3.11; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

ensure_venv() {
  local stamp="buildgrid==$BUILDGRID_VERSION"
  # A venv's scripts name its interpreter by absolute path: one made under another path
  # (a moved checkout, a worktree whose .tools was a link) has a bgd that cannot start.
  local interpreter
  # (|| true: on a fresh machine there is no bgd yet, and set -e with pipefail would end the
  # script silently here.)
  interpreter="$(head -n 1 "$VENV/bin/bgd" 2>/dev/null | sed -n 's/^#!//p' || true)"
  if [ -x "$VENV/bin/bgd" ] && [ -n "$interpreter" ] && [ -x "$interpreter" ] \
      && [ "$(cat "$VENV/.agentrc-stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  local python
  if ! python="$(find_python311)"; then
    log "error: BuildGrid $BUILDGRID_VERSION needs CPython 3.11, and none was found."
    log "hint: install one (e.g. 'pyenv install 3.11') or point AGENTRC_PY311 at a python3.11 binary."
    exit 3
  fi
  log "installing buildgrid==$BUILDGRID_VERSION into $VENV with $python ..."
  # The stamp is written last, so an interrupted install is redone on the next start.
  if [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ] && [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
    log "error: $VENV exists and is not a venv; refusing to replace it"; exit 1
  fi
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  if ! "$python" -m venv "$VENV"; then
    log "error: could not create a venv with $python"; rm -rf "$VENV"; exit 3
  fi
  local pip_log="$VENV/pip.log"
  if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/pip" install --quiet "buildgrid==$BUILDGRID_VERSION" \
      >"$pip_log" 2>&1 || [ ! -x "$VENV/bin/bgd" ]; then
    grep -v "is ignored: it is neither a file nor a directory" "$pip_log" | tail -20 >&2 || true
    log "error: pip install buildgrid==$BUILDGRID_VERSION failed"
    rm -rf "$VENV"
    exit 3
  fi
  echo "$stamp" > "$VENV/.agentrc-stamp"
}

mkdir -p "$STATE_DIR"

# Already running (started by this script, same port)? Reuse it.
if [ -f "$PID_FILE" ]; then
  old_pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  if alive "$old_pid"; then
    if [ "$(cat "$PORT_FILE" 2>/dev/null)" = "$PORT" ] && port_open; then
      log "already running (pid $old_pid) on $HOST:$PORT"
      flags
      exit 0
    fi
    log "error: a BuildGrid started here is running as pid $old_pid on port $(cat "$PORT_FILE" 2>/dev/null || echo '?');"
    log "       stop it first: tools/buildgrid/stop.sh"
    exit 1
  fi
  rm -f "$PID_FILE" "$PORT_FILE"
fi

if port_open; then
  log "error: $HOST:$PORT already accepts connections (another server?); choose another port"
  exit 1
fi

ensure_venv

log "starting bgd on $HOST:$PORT (instance '$INSTANCE'), log in $LOG_FILE"
# A session of its own, so stop.sh can end the server and any child it spawns together.
BUILDGRID_PORT="$PORT" BUILDGRID_INSTANCE="$INSTANCE" \
  setsid "$VENV/bin/bgd" server start "$HERE/buildgrid.yml" </dev/null >"$LOG_FILE" 2>&1 &
pid=$!
echo "$pid" > "$PID_FILE"
echo "$PORT" > "$PORT_FILE"

deadline=$((SECONDS + WAIT))
until port_open; do
  if ! alive "$pid"; then
    log "error: bgd exited during startup; the end of its log:"
    tail -20 "$LOG_FILE" >&2 || true
    rm -f "$PID_FILE" "$PORT_FILE"
    exit 1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    log "error: bgd did not accept connections on $HOST:$PORT within ${WAIT}s; stopping it"
    tail -20 "$LOG_FILE" >&2 || true
    "$HERE/stop.sh" >&2 || true
    exit 1
  fi
  sleep 0.2
done

log "running (pid $pid). Stop it with tools/buildgrid/stop.sh. Pants flags:"
flags
