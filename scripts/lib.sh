# Shared by scripts/run and scripts/test: install what is missing, say what is done.
# Sourced, not run.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export DEBIAN_FRONTEND=noninteractive CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Debian packages for building the Tauri app (webkit/gtk dev), running its window
# headless (Xvfb, dbus), driving it (WebKitWebDriver), the browser tests (chromium),
# screenshots (imagemagick's import), the keychain tests (gnome-keyring's Secret
# Service, keyutils' kernel keyring), and the workspace server's PostgreSQL tests
# (postgresql: they start a throwaway cluster in a temporary folder; no service needed).
APT_PACKAGES=(
  build-essential pkg-config curl file libssl-dev
  libwebkit2gtk-4.1-dev libxdo-dev libayatana-appindicator3-dev librsvg2-dev
  xvfb xauth dbus webkit2gtk-driver chromium imagemagick fonts-noto-cjk
  gnome-keyring libsecret-tools keyutils
  postgresql
)

ensure_apt_packages() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    say "system packages: all present"
    return
  fi
  say "installing system packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "need root or sudo to install: ${missing[*]}"
    sudo="sudo"
  fi
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

ensure_toolchains() {
  command -v cargo >/dev/null || die "cargo is missing. Install Rust ${RUST_MIN:-1.90} or newer with rustup (https://rustup.rs), then run this again."
  cargo fmt --version >/dev/null 2>&1 || die "rustfmt is missing. Add it with \`rustup component add rustfmt\`, then run this again."
  cargo clippy --version >/dev/null 2>&1 || die "clippy is missing. Add it with \`rustup component add clippy\`, then run this again."
  command -v node >/dev/null || die "node is missing. Install Node.js 20.19 or newer (Vite 8 needs it), then run this again."
  local node_major
  node_major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$node_major" -ge 20 ] || die "Node.js $(node --version) is too old; Vite 8 needs 20.19 or newer."
}

# npm ci when node_modules is missing or older than the lockfile.
ensure_node_modules() {
  if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
    say "installing UI packages (npm ci)"
    npm --prefix ui ci --no-fund --no-audit
  else
    say "UI packages: up to date"
  fi
}

build_ui() {
  say "building the UI (ui/dist)"
  npm --prefix ui run build
}

# Runs "$@" with a real, unlocked Secret Service (gnome-keyring on a private D-Bus
# session bus, its keyring files in a temporary XDG_DATA_HOME, so there is no prompt
# and nothing is left behind) inside a fresh kernel session keyring, and tells the
# keychain tests they may run (INKSTONE_TEST_SECRET_SERVICE, INKSTONE_TEST_KEYUTILS).
with_test_keychain() {
  local keyring_home status=0
  keyring_home="$(mktemp -d)"
  XDG_DATA_HOME="$keyring_home" INKSTONE_TEST_SECRET_SERVICE=1 INKSTONE_TEST_KEYUTILS=1 \
    dbus-run-session -- keyctl session - bash -c \
      'printf inkstone-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$@"' _ "$@" \
    || status=$?
  rm -rf "$keyring_home"
  return "$status"
}
