#!/usr/bin/env bash
# Screenshots under Xvfb (TAP): the default scene (the hexapod touched by the hand) and a stack
# (the column), each checked pixel by pixel by pixcheck against its own projection of the logged
# state: bodies in their colours, the ground, the pointer and the felt-force arrow. The default
# scene again with another camera (--set viewer.camera...) must match its projection, and its
# pointer must have moved in the picture. Skips (exit 77) without Xvfb.
set -u
FURERU=$1
PIXCHECK=$2
ROOT=${FR_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! command -v xvfb-run >/dev/null || ! command -v Xvfb >/dev/null; then
  echo "1..0 # SKIP no Xvfb (scripts/deps.sh installs xvfb)"
  exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
xrun() { xvfb-run -a -s "-screen 0 1280x1024x24" "$@"; }

shot() { # name, scene, time, ground point GX,GY, sets...
  local name=$1 scene=$2 t=$3 g=$4
  shift 4
  local args=()
  for s in "$@"; do args+=(--set "$s"); done
  if xrun "$FURERU" run "$scene" --screenshot "$name.png" --screenshot-at "$t" --log "$name.csv" \
      "${args[@]}" >"$name.out" 2>"$name.err" && [ -s "$name.png" ]; then
    ok "$name: screenshot written ($(grep screenshot "$name.out" | xargs))"
  else
    bad "$name: no screenshot: $(tail -3 "$name.err")"
    return
  fi
  local sp=()
  for s in "$@"; do sp+=(--set "$s"); done
  if "$PIXCHECK" "$name.png" "$name.csv" "$ROOT/config/scenes/$scene.yaml" "$g" "${sp[@]}" >"$name.tap"; then
    ok "$name: pixels where the projection says ($(grep -c '^ok' "$name.tap") checks)"
  else
    bad "$name: pixel checks failed"
  fi
  sed 's/^/# /' "$name.tap"
}

shot default default 3 -0.3,-0.1
shot column column 1 -4,-6
shot default-cam2 default 3 0.3,-0.25 viewer.camera.yaw=-70 viewer.camera.pitch=40 \
  viewer.camera.distance=0.5 "viewer.camera.target=[0.05,-0.05,0.05]"
# the robot moved in the picture with the camera
p1=$(grep ' - body hexapod/thorax at' default.tap | sed 's/.* at \([0-9]*\) \([0-9]*\).*/\1 \2/')
p2=$(grep ' - body hexapod/thorax at' default-cam2.tap | sed 's/.* at \([0-9]*\) \([0-9]*\).*/\1 \2/')
if [ -n "$p1" ] && [ -n "$p2" ] && awk -v a="$p1" -v b="$p2" 'BEGIN { split(a, x, " "); split(b, y, " ");
    exit !(sqrt((x[1]-y[1])^2 + (x[2]-y[2])^2) > 40) }'; then
  ok "another camera moves the robot in the picture ($p1 -> $p2)"
else
  bad "the camera change did not move the robot ($p1 / $p2)"
fi
# without a display, --screenshot fails clearly
if env -u DISPLAY -u WAYLAND_DISPLAY "$FURERU" run default --screenshot x.png --screenshot-at 0.01 \
    >/dev/null 2>nodisp.err; then
  bad "--screenshot without a display succeeded"
else
  grep -q "display" nodisp.err && ok "no display: $(tail -1 nodisp.err)" || bad "no display: $(cat nodisp.err)"
fi
echo "1..$n"
exit $fail
