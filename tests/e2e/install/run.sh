#!/usr/bin/env bash
# Install test: the desktop .deb as a person gets it.
#
#   tests/e2e/install/run.sh PATH/inkstone_<version>_amd64.deb [--server-deb PATH/inkstone-server_….deb] [--shots DIR]
#
# Installs the package with `apt-get install ./….deb` (needs root, as in CI), starts the
# installed `inkstone` from PATH under Xvfb with a fresh HOME (no INKSTONE_DATA_DIR, no
# XDG overrides), checks through WebKitWebDriver that the window shows the first-run
# screen and that the store goes to ~/.local/share/Inkstone, runs the installed
# `inkstone-cli --version` and one command on the same data folder, removes the package
# and checks that nothing of it is left on the system while the person's data folder is.
# With --server-deb, also the workspace server's package: installed, its service user,
# data folder and unit (disabled), a workspace made as that user, purged (data kept).
# Refuses to run where Inkstone is already installed (it would replace a real install).
# Prints `install-e2e: N passed, M failed`.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage() { echo "usage: $0 PATH/inkstone_VERSION_ARCH.deb [--server-deb PATH] [--shots DIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
DEB="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; shift
SHOTS=""
SERVER_DEB=""
while [ $# -gt 0 ]; do
  case "$1" in
    --shots) [ $# -ge 2 ] || usage; SHOTS="$2"; shift 2 ;;
    --server-deb) [ $# -ge 2 ] || usage; SERVER_DEB="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
    *) usage ;;
  esac
done
[ -f "$DEB" ] || { echo "run.sh: no such package: $DEB" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run.sh: installing a package needs root (CI runs as root)" >&2; exit 2; }
for tool in apt-get dpkg-deb xvfb-run dbus-run-session WebKitWebDriver node import; do
  command -v "$tool" >/dev/null || { echo "run.sh: missing $tool" >&2; exit 2; }
done
PACKAGE="$(dpkg-deb -f "$DEB" Package)"
VERSION="$(dpkg-deb -f "$DEB" Version)"
for p in "$PACKAGE" ${SERVER_DEB:+inkstone-server}; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "installed"; then
    echo "run.sh: $p is already installed here; remove it first (this test installs and removes it)" >&2
    exit 2
  fi
done
if [ -n "$SERVER_DEB" ] && { getent passwd inkstone-server >/dev/null || [ -e /var/lib/inkstone-server ]; }; then
  echo "run.sh: a user inkstone-server or /var/lib/inkstone-server exists here; this test makes and removes them" >&2
  exit 2
fi

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   - $*"; }
fail() { failed=$((failed + 1)); echo "FAIL - $*"; }

TMP="$(mktemp -d "${TMPDIR:-/tmp}/inkstone-install-e2e.XXXXXX")"
[ -n "$SHOTS" ] || SHOTS="$TMP/shots"
mkdir -p "$SHOTS"
TEST_HOME="$TMP/home"
mkdir -p "$TEST_HOME"
DATA="$TEST_HOME/.local/share/Inkstone"
installed=0
server_installed=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if [ "$installed" = 1 ]; then
    apt-get purge -y -q "$PACKAGE" >/dev/null 2>&1 || true
  fi
  if [ "$server_installed" = 1 ]; then
    apt-get purge -y -q inkstone-server >/dev/null 2>&1 || true
  fi
  [ -n "$SERVER_DEB" ] && rm -rf /var/lib/inkstone-server
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# 1. Install. apt resolves the package's dependencies (webkit2gtk, gtk) like for a person.
if apt-get install -y -q --no-install-recommends "$DEB" >"$TMP/apt-install.log" 2>&1; then
  installed=1
  ok "apt-get install ./$(basename "$DEB") ($PACKAGE $VERSION)"
else
  fail "apt-get install ./$(basename "$DEB"): $(tail -n 3 "$TMP/apt-install.log" | tr '\n' ' ')"
  echo "install-e2e: $passed passed, $failed failed"
  exit 1
fi
dpkg-query -L "$PACKAGE" >"$TMP/files"

APP="$(command -v inkstone || true)"
CLI="$(command -v inkstone-cli || true)"
if [ "$APP" = /usr/bin/inkstone ] && [ "$CLI" = /usr/bin/inkstone-cli ]; then
  ok "inkstone and inkstone-cli are on PATH ($APP, $CLI)"
else
  fail "inkstone and inkstone-cli on PATH: got '${APP:-none}' and '${CLI:-none}'"
fi
desktop="$(grep '\.desktop$' "$TMP/files" | head -n 1)"
if [ -n "$desktop" ] && grep -q '^MimeType=.*text/markdown' "$desktop" && grep -q '^Categories=.*Office' "$desktop" \
  && grep -q '^Exec=inkstone %F' "$desktop" && grep -q '/usr/share/icons/hicolor/32x32/apps/inkstone.png' "$TMP/files" \
  && grep -q '/usr/share/icons/hicolor/128x128/apps/inkstone.png' "$TMP/files"; then
  ok "desktop entry $desktop: Office category, opens text/markdown files; icons at 32, 128 and more"
else
  fail "desktop entry and icons: $(cat "$desktop" 2>/dev/null | tr '\n' '|')"
fi

# 2. The installed app's window, with a fresh HOME and nothing pointing elsewhere.
if env -i PATH="/usr/bin:/bin" HOME="$TEST_HOME" LANG=C.UTF-8 TMPDIR="$TMP" \
  timeout -k 10 180 xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" \
  dbus-run-session -- "$HERE/window-inner.sh" "$APP" "$DATA" "$SHOTS" "$(command -v node)" >"$TMP/window.log" 2>&1; then
  ok "the installed app opens on the first-run screen and keeps its data in ~/.local/share/Inkstone"
else
  fail "the installed app's window (log below)"
fi
sed 's/^/#   /' "$TMP/window.log"

# 3. The installed CLI: its version, and one command on the same data folder.
got_version="$(HOME="$TEST_HOME" "$CLI" --version 2>&1 || true)"
if [ "$got_version" = "inkstone-cli $VERSION" ]; then
  ok "inkstone-cli --version says $got_version"
else
  fail "inkstone-cli --version: expected 'inkstone-cli $VERSION', got '$got_version'"
fi
if created="$(env -u INKSTONE_DATA_DIR HOME="$TEST_HOME" XDG_DATA_HOME= "$CLI" project create "安装测试 install check" 2>&1)" \
  && listed="$(env -u INKSTONE_DATA_DIR HOME="$TEST_HOME" XDG_DATA_HOME= "$CLI" project list 2>&1)" \
  && grep -q "安装测试 install check" <<<"$listed"; then
  ok "inkstone-cli project create / list on ~/.local/share/Inkstone"
else
  fail "inkstone-cli project create / list: ${created:-} ${listed:-}"
fi

# 4. Remove: nothing of the package is left; the person's data is.
if apt-get purge -y -q "$PACKAGE" >"$TMP/apt-remove.log" 2>&1; then
  installed=0
  ok "apt-get purge $PACKAGE"
else
  fail "apt-get purge $PACKAGE: $(tail -n 3 "$TMP/apt-remove.log" | tr '\n' ' ')"
fi
left=()
while IFS= read -r path; do
  # Directories the package shares with the system (/usr, /usr/bin, …) stay.
  [ -e "$path" ] && [ ! -d "$path" ] && left+=("$path")
done <"$TMP/files"
status="$(dpkg-query -W -f='${db:Status-Status}' "$PACKAGE" 2>/dev/null || echo not-installed)"
if ((${#left[@]} == 0)) && [ "$status" = not-installed ] && ! command -v inkstone >/dev/null && ! command -v inkstone-cli >/dev/null; then
  ok "after removal no file of the package is left (dpkg status: $status)"
else
  fail "after removal: status '$status', left: ${left[*]:-none}"
fi
if [ -d "$DATA" ] && [ -n "$(ls -A "$DATA")" ]; then
  ok "the person's data folder stays: ~/.local/share/Inkstone ($(ls "$DATA" | tr '\n' ' '))"
else
  fail "the data folder $DATA is gone"
fi
# What else the app left in the home folder: its logs and WebKit's caches, per user, which
# no package manager removes. Listed so a change there is seen.
echo "# also in the fresh HOME: $(cd "$TEST_HOME" && find . -mindepth 3 -maxdepth 3 ! -path './.local/share/Inkstone' | sort | tr '\n' ' ')"

# 5. The workspace server's package.
if [ -n "$SERVER_DEB" ]; then
  if apt-get install -y -q --no-install-recommends "$SERVER_DEB" >"$TMP/apt-server.log" 2>&1; then
    server_installed=1
    ok "apt-get install ./$(basename "$SERVER_DEB")"
  else
    fail "apt-get install ./$(basename "$SERVER_DEB"): $(tail -n 3 "$TMP/apt-server.log" | tr '\n' ' ')"
  fi
  dpkg-query -L inkstone-server >"$TMP/server-files" 2>/dev/null || true
  unit=/lib/systemd/system/inkstone-server.service
  owner="$(stat -c %U:%G /var/lib/inkstone-server 2>/dev/null || echo none)"
  if getent passwd inkstone-server >/dev/null && [ "$owner" = inkstone-server:inkstone-server ] \
    && grep -q '^User=inkstone-server$' "$unit" && grep -q '^ExecStart=/usr/bin/inkstone-server serve' "$unit" \
    && ! ls /etc/systemd/system/*.wants/inkstone-server.service >/dev/null 2>&1; then
    ok "the service user, /var/lib/inkstone-server ($owner) and the unit, installed disabled"
  else
    fail "server user / data folder ($owner) / unit / disabled"
  fi
  # What README.Debian tells the operator to do first, as the service's user.
  if made="$(runuser -u inkstone-server -- inkstone-server --data-dir /var/lib/inkstone-server workspace create "安装测试" 2>&1)" \
    && [ -n "$(ls -A /var/lib/inkstone-server)" ]; then
    ok "inkstone-server workspace create as the service user writes /var/lib/inkstone-server"
  else
    fail "inkstone-server workspace create as inkstone-server: $made"
  fi
  apt-get purge -y -q inkstone-server >"$TMP/apt-server-purge.log" 2>&1 && server_installed=0
  left=()
  while IFS= read -r path; do
    [ -e "$path" ] && [ ! -d "$path" ] && left+=("$path")
  done <"$TMP/server-files"
  if [ "$server_installed" = 0 ] && ((${#left[@]} == 0)) && ! getent passwd inkstone-server >/dev/null \
    && [ -n "$(ls -A /var/lib/inkstone-server 2>/dev/null)" ]; then
    ok "apt-get purge inkstone-server: its files and user are gone, the workspace data stays"
  else
    fail "after purging inkstone-server: left ${left[*]:-no files}; user $(getent passwd inkstone-server >/dev/null && echo kept || echo gone)"
  fi
fi

echo "install-e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
