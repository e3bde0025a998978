#!/usr/bin/env bash
# Inside run.sh's Xvfb display and session bus, with the fresh HOME: drives the installed
# app through WebKitWebDriver (window.mjs), then stops the driver and the app it started.
#   window-inner.sh APP DATA_DIR SHOTS NODE [APP_ARG…]
# Then launches it again with a Markdown file, as a file manager's "Open with" does.
# APP_ARGs come first on both launches (an AppImage's --appimage-extract-and-run).
set -euo pipefail
APP="$1" DATA="$2" SHOTS="$3" NODE="$4"
shift 4
FIRST=()
for arg in "$@"; do FIRST+=(--app-arg "$arg"); done
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
"$NODE" "$HERE/window.mjs" --app "$APP" --webdriver "http://127.0.0.1:$PORT" --data-dir "$DATA" --shots "$SHOTS" ${FIRST[@]+"${FIRST[@]}"} || rc=$?
if [ "$rc" -eq 0 ]; then
  # The first window's app makes its exit backup and gives up the folder; a launch while
  # it still runs would hand the file over to it instead of opening a window.
  for _ in $(seq 1 100); do pgrep -f "^$APP( |$)" >/dev/null || break; sleep 0.1; done
  NOTE="$HOME/Documents/spring-walk.md"
  mkdir -p "$(dirname "$NOTE")"
  printf '# 河边散步 opened\n\n三月的第一个周末。\n' >"$NOTE"
  "$NODE" "$HERE/window.mjs" --app "$APP" --webdriver "http://127.0.0.1:$PORT" --data-dir "$DATA" --shots "$SHOTS" \
    ${FIRST[@]+"${FIRST[@]}"} --app-arg "$NOTE" --expect-project "河边散步 opened" || rc=$?
fi
[ "$rc" -eq 0 ] || { echo "# WebKitWebDriver log (tail):"; tail -n 15 "$LOG"; }
exit "$rc"
