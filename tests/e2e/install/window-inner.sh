#!/usr/bin/env bash
# Inside run.sh's Xvfb display and session bus, with the fresh HOME: drives the installed
# app through WebKitWebDriver (window.mjs), then stops the driver and the app it started.
#   window-inner.sh APP DATA_DIR SHOTS NODE
set -euo pipefail
APP="$1" DATA="$2" SHOTS="$3" NODE="$4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PORT="$("$NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
LOG="$(mktemp)"
TAURI_WEBVIEW_AUTOMATION=true setsid WebKitWebDriver --port="$PORT" --host=local >"$LOG" 2>&1 &
DRIVER=$!
stop() {
  kill -TERM -- "-$DRIVER" 2>/dev/null || true
  for _ in $(seq 1 30); do kill -0 -- "-$DRIVER" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$DRIVER" 2>/dev/null || true
  rm -f "$LOG"
}
trap stop EXIT
rc=0
"$NODE" "$HERE/window.mjs" --app "$APP" --webdriver "http://127.0.0.1:$PORT" --data-dir "$DATA" --shots "$SHOTS" || rc=$?
[ "$rc" -eq 0 ] || { echo "# WebKitWebDriver log (tail):"; tail -n 15 "$LOG"; }
exit "$rc"
