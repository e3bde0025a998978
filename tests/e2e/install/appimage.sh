#!/usr/bin/env bash
# Install test of the AppImage, as a person runs it: no installation, no root.
#
#   tests/e2e/install/appimage.sh PATH/inkstone_<version>_amd64.AppImage [--shots DIR]
#
# Checks the file is an AppImage of type 2 (ELF, `AI\x02` at offset 8, the squashfs
# image at --appimage-offset), that --appimage-extract gives the AppDir (AppRun, the
# desktop entry and icon, the app marked as an AppImage's, inkstone-cli of this version),
# then copies it to a fresh HOME's ~/Applications and starts it with
# --appimage-extract-and-run under Xvfb (no INKSTONE_DATA_DIR, no XDG overrides, TMPDIR
# a fresh folder): the window shows the first-run screen, the store goes to
# ~/.local/share/Inkstone, "Open with" a Markdown file works, and when the app has
# closed nothing is left in TMPDIR and no process of it runs. The AppImage is thin: the
# system's WebKitGTK 4.1 must be installed (it is on a machine that builds Inkstone).
# Prints `appimage-e2e: N passed, M failed`.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage() { echo "usage: $0 PATH/inkstone_VERSION_ARCH.AppImage [--shots DIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
SOURCE="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; shift
SHOTS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --shots) [ $# -ge 2 ] || usage; SHOTS="$2"; shift 2 ;;
    *) usage ;;
  esac
done
[ -f "$SOURCE" ] || { echo "appimage.sh: no such file: $SOURCE" >&2; exit 2; }
for tool in xvfb-run dbus-run-session WebKitWebDriver node import od; do
  command -v "$tool" >/dev/null || { echo "appimage.sh: missing $tool" >&2; exit 2; }
done
VERSION="$(basename "$SOURCE" | sed -n 's/^inkstone_\([^_]*\)_.*\.AppImage$/\1/p')"
[ -n "$VERSION" ] || { echo "appimage.sh: cannot read the version from $(basename "$SOURCE")" >&2; exit 2; }

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   - $*"; }
fail() { failed=$((failed + 1)); echo "FAIL - $*"; }

TMP="$(mktemp -d "${TMPDIR:-/tmp}/inkstone-appimage-e2e.XXXXXX")"
[ -n "$SHOTS" ] || SHOTS="$TMP/shots"
mkdir -p "$SHOTS"
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

TEST_HOME="$TMP/home"
APP_TMP="$TMP/tmp"
mkdir -p "$TEST_HOME/Applications" "$APP_TMP"
APPIMAGE="$TEST_HOME/Applications/Inkstone-$VERSION-x86_64.AppImage"
cp "$SOURCE" "$APPIMAGE"
chmod 0755 "$APPIMAGE"
DATA="$TEST_HOME/.local/share/Inkstone"

# 1. The file's format.
magic="$(od -An -c -j 8 -N 3 "$APPIMAGE" | tr -d ' ')"
offset="$("$APPIMAGE" --appimage-offset 2>&1 || true)"
squashfs="$(od -An -c -j "${offset:-0}" -N 4 "$APPIMAGE" 2>/dev/null | tr -d ' ')"
if [ "$(head -c 4 "$APPIMAGE" | od -An -c | tr -d ' ')" = '177ELF' ] && [ "$magic" = 'AI002' ] && [ "$squashfs" = hsqs ]; then
  ok "an AppImage of type 2: ELF, AI\\x02 at offset 8, the squashfs image at offset $offset"
else
  fail "AppImage format: magic '$magic', --appimage-offset '$offset', there '$squashfs'"
fi
runtime="$("$APPIMAGE" --appimage-version 2>&1 || true)"
[ "$runtime" = "inkstone-appimage-runtime $VERSION" ] && ok "--appimage-version: $runtime" || fail "--appimage-version: '$runtime'"

# 2. What is inside.
mkdir "$TMP/extract"
if (cd "$TMP/extract" && "$APPIMAGE" --appimage-extract >/dev/null 2>"$TMP/extract.log"); then
  root="$TMP/extract/squashfs-root"
  cli_version="$("$root/usr/bin/inkstone-cli" --version 2>&1 || true)"
  if [ -x "$root/AppRun" ] && [ -x "$root/usr/bin/inkstone" ] && [ "$cli_version" = "inkstone-cli $VERSION" ] \
    && grep -q '^MimeType=.*text/markdown' "$root/inkstone.desktop" && grep -q '^Icon=inkstone$' "$root/inkstone.desktop" \
    && [ "$(readlink "$root/.DirIcon")" = inkstone.png ] && [ -f "$root/inkstone.png" ] \
    && [ "$(python3 "$HERE/../../../packaging/linux/bundle-type.py" "$root/usr/bin/inkstone")" = APP ]; then
    ok "--appimage-extract: AppRun, the app marked as an AppImage's, $cli_version, the desktop entry (text/markdown), inkstone.png and .DirIcon"
  else
    fail "the extracted AppDir: $(cd "$root" && ls -A | tr '\n' ' '); inkstone-cli --version '$cli_version'"
  fi
  rm -rf "$TMP/extract"
else
  fail "--appimage-extract: $(tail -n 3 "$TMP/extract.log")"
fi

# 3. The window, from the AppImage with --appimage-extract-and-run, fresh HOME and TMPDIR.
if env -i PATH="/usr/bin:/bin" HOME="$TEST_HOME" LANG=C.UTF-8 TMPDIR="$APP_TMP" \
  timeout -k 10 240 xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" \
  dbus-run-session -- "$HERE/window-inner.sh" "$APPIMAGE" "$DATA" "$SHOTS" "$(command -v node)" --appimage-extract-and-run >"$TMP/window.log" 2>&1; then
  ok "the AppImage (--appimage-extract-and-run) opens on the first-run screen, keeps its data in ~/.local/share/Inkstone, opens a Markdown file"
else
  fail "the AppImage's window (log below)"
fi
sed 's/^/#   /' "$TMP/window.log"

# 4. Nothing left behind but the person's data: no extracted folder, no process.
# xvfb-run ends its Xvfb (whose -auth file is under TMPDIR) without waiting for it, so
# wait for everything the check below looks for, not only the AppImage.
for _ in $(seq 1 100); do pgrep -f "$APPIMAGE|$APP_TMP" >/dev/null || break; sleep 0.1; done
left="$(cd "$APP_TMP" && ls -A)"
running="$(pgrep -af "$APPIMAGE|$APP_TMP" || true)"
if [ -z "$left" ] && [ -z "$running" ]; then
  ok "after the app closed, TMPDIR is empty and nothing of the AppImage runs"
else
  fail "left in TMPDIR: ${left:-nothing}; running: ${running:-nothing}"
fi
if [ -d "$DATA" ] && [ -n "$(ls -A "$DATA")" ]; then
  ok "the person's data folder: ~/.local/share/Inkstone ($(ls "$DATA" | tr '\n' ' '))"
else
  fail "no data in $DATA"
fi

echo "appimage-e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
