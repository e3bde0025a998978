#!/usr/bin/env bash
# Real-window desktop smoke test: the Tauri app under Xvfb, driven by WebKitWebDriver.
#
#   tests/e2e/desktop/run.sh /abs/path/to/target/debug/inkstone [--shots DIR] [--fake-model PATH]
#
# With --fake-model (the scripted TEST server `inkstone-fake-model`, never a model), the
# run also sends one task from the AI panel and accepts a hunk of the proposal it makes.
# Re-execs itself under xvfb-run + dbus-run-session (so GTK/WebKit daemons die with the
# session bus), uses throwaway XDG dirs and INKSTONE_DATA_DIR, and prints
# `desktop-e2e: N passed, M failed`. Every step is bounded; nothing is left running.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"

usage() { echo "usage: $0 /abs/path/to/inkstone-app [--shots DIR] [--fake-model PATH]" >&2; exit 2; }
[ $# -ge 1 ] || usage
APP="$1"; shift
case "$APP" in /*) ;; *) APP="$PWD/$APP" ;; esac
SHOTS=""
FAKE_MODEL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --shots) [ $# -ge 2 ] || usage; SHOTS="$2"; shift 2 ;;
    --fake-model) [ $# -ge 2 ] || usage; FAKE_MODEL="$2"; shift 2 ;;
    *) usage ;;
  esac
done
if [ -n "$FAKE_MODEL" ]; then
  case "$FAKE_MODEL" in /*) ;; *) FAKE_MODEL="$PWD/$FAKE_MODEL" ;; esac
  [ -x "$FAKE_MODEL" ] || { echo "run.sh: not an executable: $FAKE_MODEL" >&2; exit 2; }
fi
[ -x "$APP" ] || { echo "run.sh: not an executable: $APP" >&2; exit 2; }
for tool in xvfb-run dbus-run-session WebKitWebDriver node import python3; do
  command -v "$tool" >/dev/null || { echo "run.sh: missing $tool (apt: xvfb dbus webkit2gtk-driver nodejs imagemagick python3)" >&2; exit 2; }
done

if [ -z "${INKSTONE_E2E_INNER:-}" ]; then
  # Outer: start a private X server and session bus, then run the inner part inside them.
  # `timeout` kills its whole process group if anything hangs.
  export INKSTONE_E2E_INNER=1
  args=("$APP")
  [ -n "$SHOTS" ] && args+=(--shots "$SHOTS")
  [ -n "$FAKE_MODEL" ] && args+=(--fake-model "$FAKE_MODEL")
  exec timeout -k 10 300 xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" \
    dbus-run-session -- "$HERE/run.sh" "${args[@]}"
fi

# ---------------------------------------------------------------------------
# Inner: we are on the Xvfb display with a private session bus.

TMP="$(mktemp -d "${TMPDIR:-/tmp}/inkstone-desktop-e2e.XXXXXX")"
export XDG_DATA_HOME="$TMP/data" XDG_CONFIG_HOME="$TMP/config" XDG_CACHE_HOME="$TMP/cache"
export INKSTONE_DATA_DIR="$TMP/inkstone"
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$INKSTONE_DATA_DIR"
[ -n "$SHOTS" ] || SHOTS="$(mktemp -d "${TMPDIR:-/tmp}/inkstone-desktop-shots.XXXXXX")"
mkdir -p "$SHOTS"

DRIVER_PID=""
MODEL_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if [ -n "$MODEL_PID" ]; then
    kill -TERM -- "-$MODEL_PID" 2>/dev/null || true
  fi
  if [ -n "$DRIVER_PID" ]; then
    # The driver runs in its own process group together with the app it launched.
    kill -TERM -- "-$DRIVER_PID" 2>/dev/null || true
    for _ in $(seq 1 30); do
      kill -0 -- "-$DRIVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$DRIVER_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

PORT="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
echo "# display $DISPLAY, WebKitWebDriver on 127.0.0.1:$PORT, data $INKSTONE_DATA_DIR"
echo "# screenshots in $SHOTS"

# setsid: own process group, so cleanup can kill the driver and the app it spawns at once.
TAURI_WEBVIEW_AUTOMATION=true setsid WebKitWebDriver --port="$PORT" --host=local \
  >"$TMP/driver.log" 2>&1 &
DRIVER_PID=$!

SMOKE_ARGS=(--app "$APP" --webdriver "http://127.0.0.1:$PORT" --shots "$SHOTS")
if [ -n "$FAKE_MODEL" ]; then
  # On Ollama's usual port when it is free, so the first-run check sees it detected as a
  # local server; elsewhere when a real server holds it.
  MODEL_ADDR=127.0.0.1:0
  node -e 'const s=require("net").createServer();s.once("error",()=>process.exit(1));s.listen(11434,"127.0.0.1",()=>s.close())' 2>/dev/null && MODEL_ADDR=127.0.0.1:11434
  setsid "$FAKE_MODEL" --addr "$MODEL_ADDR" >"$TMP/model.out" 2>"$TMP/model.err" &
  MODEL_PID=$!
  MODEL_URL=""
  for _ in $(seq 1 100); do
    MODEL_URL="$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$TMP/model.out" | head -n 1)"
    [ -n "$MODEL_URL" ] && break
    sleep 0.1
  done
  [ -n "$MODEL_URL" ] || { echo "run.sh: the fake model server did not start: $(tail -c 400 "$TMP/model.err")" >&2; exit 1; }
  echo "# fake model at $MODEL_URL"
  SMOKE_ARGS+=(--model-url "$MODEL_URL")
fi

set +e
timeout -k 5 200 node "$HERE/smoke.mjs" "${SMOKE_ARGS[@]}"
rc=$?
set -e
if [ "$rc" -ne 0 ] && [ -s "$TMP/driver.log" ]; then
  echo "# WebKitWebDriver log (tail):"
  tail -n 20 "$TMP/driver.log" | sed 's/^/#   /'
fi
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "desktop-e2e: 0 passed, 1 failed"
fi
exit "$rc"
