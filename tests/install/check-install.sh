#!/usr/bin/env bash
# What a packager and a library user get, checked the way they would use it (scripts/test runs
# this; CI too):
#   1. a release build with -Werror of a copy of the source tree (tests compiled, benchmarks not),
#   2. `meson install --destdir` into a staging tree,
#   3. the source copy moved away, so nothing can fall back on it,
#   4. the installed `fureru`: --version, `device list` (device files found beside the install),
#      `run` of an installed scene by path and by name, the sidecar next to the log,
#   5. examples/box-drop.c built through `pkg-config fureru` against the staged install (shared
#      library, then the static one) and its output checked against free fall and rest,
#   6. the installed tree moved to another prefix still finds its data (relocatable),
#   7. the umbrella header includes every installed header; the man page formats cleanly.
# Usage: tests/install/check-install.sh [WORKDIR]   (default: build-install in the repository)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$root/build-install}
mkdir -p "$work"
work=$(cd "$work" && pwd)
src=$work/src
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
die() { echo "not ok - $*" >&2; exit 1; }

# 1. the copy keeps modification times, so the next run rebuilds only what changed
rm -rf "$src" "$src.away"
mkdir -p "$src"
tar -C "$root" --exclude='./build*' --exclude=./.git --exclude=./out -cf - . | tar -C "$src" -xf -
if [ ! -f "$work/build/build.ninja" ]; then
  meson setup "$work/build" "$src" --prefix=/usr -Dbuildtype=release -Db_lto=true -Dwerror=true \
    -Dtests=enabled -Dbenchmarks=disabled >"$work/setup.log" || { cat "$work/setup.log"; exit 1; }
fi
ninja -C "$work/build" >"$work/build.log" || { tail -50 "$work/build.log"; die "release build"; }
ok "release build with -Werror (tests included, benchmarks off)"

# 2.
stage=$work/stage
rm -rf "$stage" "$work/moved"
DESTDIR=$stage meson install -C "$work/build" --quiet >/dev/null
ok "meson install --destdir"

# 3.
mv "$src" "$src.away"
trap 'mv "$src.away" "$src" 2>/dev/null || true' EXIT
ok "source tree moved away"

# 4. run from an unrelated folder so no relative path can reach the repository
bin=$stage/usr/bin/fureru
libdir=$(cd "$stage/usr" && ls -d lib/*/pkgconfig lib/pkgconfig 2>/dev/null | head -1 || true)
libdir=$stage/usr/${libdir%/pkgconfig}
data=$stage/usr/share/fureru
tmp=$(mktemp -d)
trap 'mv "$src.away" "$src" 2>/dev/null || true; rm -rf "$tmp"' EXIT
cd "$tmp"
unset FURERU_DATA_DIR FURERU_DEVICE_DIR
[ -x "$bin" ] || die "no installed fureru"
"$bin" --version | grep -q "^fureru [0-9]" && ok "installed fureru --version"
"$bin" device list >dev.out 2>&1 || { cat dev.out; die "installed device list"; }
grep -q "Device files ($data/devices)" dev.out && grep -q "spidar-4" dev.out \
  && ok "device list reads the installed device files" || { cat dev.out; die "device list"; }
"$bin" run "$data/scenes/stick-slip.yaml" --fast --headless --duration 0.5 --log runs/ss.csv \
  >run.out 2>&1 || { cat run.out; die "installed scene by path"; }
[ "$(wc -l < runs/ss.csv)" -eq 502 ] && [ -s runs/ss.csv.meta.yaml ] \
  && ok "run of an installed scene by path: 501 rows and a sidecar in a folder --log created" \
  || die "log of the installed run"
"$bin" run default --fast --headless --duration 0.2 >run2.out 2>&1 \
  || { cat run2.out; die "installed scene by name"; }
grep -q "$data/scenes/default.yaml" run2.out && ok "run of an installed scene by name (default)" \
  || { cat run2.out; die "scene by name"; }

# 5. the example through pkg-config, against the staged tree
export PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
[ "$(pkg-config --modversion fureru)" = "$("$bin" --version | cut -d' ' -f2)" ] \
  && ok "pkg-config fureru: version $(pkg-config --modversion fureru)"
[ "$(pkg-config --variable=pkgdatadir fureru)" = "$data" ] \
  && ok "pkg-config names the data directory" || die "pkgdatadir"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -pedantic "$src.away/examples/box-drop.c" \
  $(pkg-config --cflags --libs fureru) -o box-drop || die "example against the install"
readelf -d box-drop | grep -q "NEEDED.*libfureru.so" && ok "example linked with libfureru.so"
LD_LIBRARY_PATH=$libdir ./box-drop >drop.out || die "example run"
# semi-implicit Euler free fall: z_n = z0 − g·dt²·n(n+1)/2 (n = 250 at t = 0.25 s, before the
# landing at 0.286 s); at rest the centre sits at the half height, 0.1 m, to the penalty depth
awk 'NR > 2 { z[$1 + 0] = $4 } END {
  zf = 0.5 - 9.81 * 1e-6 * 250 * 251 / 2
  e1 = z[0.25] - zf; e2 = z[2] - 0.1
  printf "z(0.25 s) %.6f m (free fall %.6f), z(2 s) %.6f m\n", z[0.25], zf, z[2]
  exit !(e1 < 1e-5 && e1 > -1e-5 && e2 < 0.002 && e2 > -0.002) }' drop.out >drop.chk \
  && ok "example output: $(cat drop.chk)" || { cat drop.out drop.chk; die "example output"; }
# shellcheck disable=SC2046
cc -std=c11 "$src.away/examples/box-drop.c" $(pkg-config --cflags fureru) \
  "$libdir/libfureru.a" $(pkg-config --libs $(pkg-config --print-requires-private fureru)) \
  -lm -pthread -ldl -o box-drop-static
! readelf -d box-drop-static | grep -q "libfureru" && ./box-drop-static | cmp -s - drop.out \
  && ok "example linked with libfureru.a gives the same output" || die "static example"
readelf -d "$libdir/libfureru.so" | grep -q "SONAME.*libfureru.so.[0-9]" \
  && ok "soname $(readelf -d "$libdir/libfureru.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')"
nm -D --defined-only "$libdir/libfureru.so" | awk '$3 !~ /^fr_/ { bad = bad " " $3 } END {
  if (bad != "") { print "exported non-API symbols:" bad; exit 1 } }' \
  && ok "libfureru.so exports only fr_* symbols"

# 6. relocate the whole installed tree: data is found relative to the binary
mkdir -p "$work/moved"
mv "$stage/usr" "$work/moved/opt"
"$work/moved/opt/bin/fureru" device list >dev2.out 2>&1 && grep -q "Device files ($work/moved/opt/share/fureru/devices)" dev2.out \
  && ok "relocated install finds its own data" || { cat dev2.out; die "relocated install"; }
mv "$work/moved/opt" "$stage/usr"

# 7. every public header of the source is installed, and the umbrella includes them all
for h in "$src.away"/include/fureru/*.h; do
  [ -e "$stage/usr/include/fureru/$(basename "$h")" ] || die "$(basename "$h") is not installed"
done
for h in "$stage"/usr/include/fureru/*.h; do
  b=$(basename "$h")
  [ "$b" = fureru.h ] || grep -q "#include \"fureru/$b\"" "$stage/usr/include/fureru/fureru.h" \
    || die "fureru/fureru.h does not include $b"
done
ok "fureru/fureru.h includes all $(ls "$stage"/usr/include/fureru/*.h | wc -l) installed headers"
man=$(ls "$stage"/usr/share/man/man1/fureru.1*)
groff -man -Tutf8 -ww "$man" >man.txt 2>man.err && [ ! -s man.err ] && grep -q "fureru run" man.txt \
  && ok "man page fureru(1) formats without warnings" || { cat man.err; die "man page"; }
echo "1..$n"
