#!/usr/bin/env bash
# Install the Debian 12 packages fureru needs, only those missing. Sourced by scripts/run and
# scripts/test; idempotent. Needs root (or sudo) only when something is missing.
set -euo pipefail

FR_PACKAGES=(
  build-essential meson ninja-build pkg-config
  check                       # unit tests
  libyaml-dev                 # scene and device files
  libxml2-dev                 # URDF robots
  libqhull-dev                # convex hulls of point sets at load time
  libassimp-dev               # robot meshes: Collada, OBJ, STL, PLY, glTF (URDF <mesh>)
  libusb-1.0-0-dev            # SPIDAR USB transport
  umockdev libumockdev-dev    # emulated USB devices in tests
  libglfw3-dev libgl-dev libpng-dev libfreetype-dev fonts-dejavu-core  # viewer, screenshots
  libgl1-mesa-dri             # software OpenGL under Xvfb (tests/render)
  xvfb xauth                  # viewer tests without a display
  gnuplot-nox                 # experiment plots
  groff-base                  # checks the man page (tests/install)
  libode-dev                  # benchmarks against ODE
  rt-tests                    # cyclictest, the loop-latency reference
  valgrind                    # instruction counts in benchmarks
  libbullet-dev               # benchmark: btMultiBody next to our ABA
  clang libclang-rt-14-dev     # libFuzzer harnesses (tests/fuzz), run by scripts/test
)

fr_install_deps() {
  local missing=()
  for p in "${FR_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "fureru: installing missing Debian packages: ${missing[*]}" >&2
  local SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if ! $SUDO apt-get install -y -q -o DPkg::Lock::Timeout=300 "${missing[@]}"; then
    $SUDO apt-get update -q -o DPkg::Lock::Timeout=300
    $SUDO apt-get install -y -q -o DPkg::Lock::Timeout=300 "${missing[@]}"
  fi
}

# Configure (once) and build a Meson build directory: fr_build DIR [meson options...]
fr_build() {
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@"
  fi
  ninja -C "$dir"
}

# The release build that scripts/run and scripts/bench use: -O3, link-time optimisation (the
# hexapod's step 6 % faster, results bit for bit the same), -Werror, no tests. Builds only the
# fureru command unless called with `all` (the benchmarks too).
fr_build_release() {
  if [ ! -f build-release/build.ninja ]; then
    meson setup build-release -Dbuildtype=release -Dwerror=true -Dtests=disabled \
      -Dbenchmarks=enabled -Db_lto=true
  elif ! grep -q -- '-flto' build-release/build.ninja; then
    meson configure build-release -Db_lto=true # a build dir set up before LTO was chosen
  fi
  if [ "${1:-}" = all ]; then ninja -C build-release; else ninja -C build-release src/server/fureru; fi
}
