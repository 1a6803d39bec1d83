#!/usr/bin/env bash
# fureru with robots, end to end: `check` on a URDF reports every error with file:line:column
# (exit 2), warnings (exit 0) that --strict turns into errors, package:// through --package-path
# and ROS_PACKAGE_PATH, `mesh`, and a diverging run that names body, quantity and time (exit 1).
set -u
FURERU=$1
ROOT=${FR_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
expect_rc() { # expected-rc description command...
  local want=$1 what=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then ok "$what (exit $rc)"; else bad "$what: exit $rc, expected $want"; cat "$TMP/err"; fi
}
R=$ROOT/tests/robots

# six different errors, all in one run, each at its file:line:column
six=$R/bad-multi/six-errors.urdf
expect_rc 2 "check six-errors.urdf" "$FURERU" check "$six"
all=1
while read -r _ _ loc _; do
  grep -qF "$six:$loc: error:" "$TMP/err" || { all=0; bad "six-errors: $loc not reported"; }
done < <(grep '^<!-- expect:' "$six")
[ $all -eq 1 ] && [ "$(grep -c ': error:' "$TMP/err")" -eq 6 ] && ok "all 6 errors reported, each located" \
  || bad "six errors: $(grep -c ': error:' "$TMP/err") reported"
grep -q "6 errors" "$TMP/err" && ok "error count summed up" || bad "no error count"

# warnings: exit 0; --strict: the same places, as errors, exit 2
w=$R/repairs/08-unknown-elements.urdf
expect_rc 0 "check with warnings" "$FURERU" check "$w"
[ "$(grep -c ': warning:' "$TMP/err")" -eq 2 ] && grep -q "2 warnings" "$TMP/out" && ok "2 warnings printed" || bad "warnings: $(cat "$TMP/err")"
expect_rc 2 "check --strict" "$FURERU" check --strict "$w"
[ "$(grep -c ': error:.*\[--strict\]' "$TMP/err")" -eq 2 ] && ok "--strict: warnings became errors" || bad "--strict: $(cat "$TMP/err")"

# package:// elsewhere: not found (every place listed), then through --package-path, ROS_PACKAGE_PATH
p=$R/pkgs/pkg_robot.urdf
expect_rc 2 "package not found" env -u ROS_PACKAGE_PATH "$FURERU" check "$p"
grep -q "$p:8:.*error:.*looked at" "$TMP/err" && [ "$(grep -c ': note:.*looked for' "$TMP/err")" -ge 3 ] \
  && ok "the error lists the places looked at" || bad "package error: $(cat "$TMP/err")"
expect_rc 0 "--package-path" env -u ROS_PACKAGE_PATH "$FURERU" check --package-path "$R/pkgs/ws" "$p"
expect_rc 0 "ROS_PACKAGE_PATH" env ROS_PACKAGE_PATH="$R/pkgs/ws/src" "$FURERU" check "$p"

# a joint that moves only a point mass on its axis: `check` of the URDF and `check`/`run` of a
# scene refuse it at the same place (check said ok, the scene failed naming no link); a robot
# armature makes it loadable
pm=$R/bad/24-point-mass-on-axis.urdf
pms=$R/bad-scenes/18-point-mass-on-axis.yaml
expect_rc 2 "check: point mass on a revolute axis" "$FURERU" check "$pm"
grep -q "$pm:10:3: error: field '/robot/joint\[@name='j'\]': joint 'j' turns link 'tip'" "$TMP/err" \
  && ok "check names the joint and link, located" || bad "point mass: $(cat "$TMP/err")"
expect_rc 2 "check of its scene" "$FURERU" check "$pms"
grep -q "24-point-mass-on-axis.urdf:10:3: error: field '/robot/joint\[@name='j'\]'" "$TMP/err" \
  && ok "the scene's error is the URDF's" || bad "point mass scene: $(cat "$TMP/err")"
expect_rc 2 "run of its scene" "$FURERU" run "$pms" --fast --duration 0.1
grep -q "24-point-mass-on-axis.urdf:10:3: error:" "$TMP/err" && ok "run refuses it at the same place" \
  || bad "point mass run: $(cat "$TMP/err")"
expect_rc 0 "with an armature it runs" "$FURERU" run "$pms" --fast --duration 0.5 \
  --set robots.0.armature=0.001

# a mesh and what it becomes
expect_rc 0 "mesh" "$FURERU" mesh "$R/good/meshes/prism_mm_yup.dae" --write "$TMP/hull.stl"
grep -q "convex hull 6 vertices, 1953.12 cm^3" "$TMP/out" && ok "Collada in mm, y up: the prism's volume" || bad "mesh: $(cat "$TMP/out")"
expect_rc 0 "written hull reads back" "$FURERU" mesh "$TMP/hull.stl"
grep -q "1953.12 cm^3" "$TMP/out" && ok "same volume" || bad "hull: $(cat "$TMP/out")"
# a hull that cannot be written names the file and the system's reason, and no summary is
# printed as if it had been (a new user's trial got "input/output error" after the summary)
expect_rc 1 "--write into a missing folder" "$FURERU" mesh "$R/good/meshes/tetra.obj" --write "$TMP/none/hull.stl"
grep -qF "cannot write '$TMP/none/hull.stl': No such file or directory" "$TMP/err" && [ ! -s "$TMP/out" ] \
  && ok "unwritable --write: file and reason named, no summary" || bad "unwritable: $(cat "$TMP/out" "$TMP/err")"
# an extension it does not write is refused, listing those it does (.xyz was written as an STL)
expect_rc 2 "--write .xyz" "$FURERU" mesh "$R/good/meshes/tetra.obj" --write "$TMP/hull.xyz"
grep -q "\.stl (binary STL), \.obj or \.dae (Collada)" "$TMP/err" && [ ! -e "$TMP/hull.xyz" ] \
  && ok "unknown --write extension: refused, the formats listed" || bad "xyz: $(cat "$TMP/err")"
# a flat mesh is named as the URDF loader names it
expect_rc 2 "flat mesh" "$FURERU" mesh "$R/good/meshes/flat.stl"
grep -q "flat.stl': cannot build a convex hull of its [0-9]* vertices (flat or degenerate)" "$TMP/err" \
  && ok "flat mesh: flat or degenerate" || bad "flat: $(cat "$TMP/err")"
# a binary STL whose face count disagrees with its size: the count and the size, not assimp's
# "Failed to determine STL storage representation"
cp "$R/good/meshes/cube_bin.stl" "$TMP/trailing.stl" && printf '0123456789' >>"$TMP/trailing.stl"
cp "$R/good/meshes/cube_bin.stl" "$TMP/count.stl"
printf '\xe8\x03\x00\x00' | dd of="$TMP/count.stl" bs=1 seek=80 conv=notrunc 2>/dev/null
expect_rc 2 "binary STL with 10 bytes more" "$FURERU" mesh "$TMP/trailing.stl"
grep -q "header declares 12 faces in 694 bytes" "$TMP/err" && ok "trailing bytes: count and size said" \
  || bad "trailing: $(cat "$TMP/err")"
expect_rc 2 "binary STL declaring 1000 faces" "$FURERU" mesh "$TMP/count.stl"
grep -q "header declares 1000 faces in 684 bytes" "$TMP/err" && ok "wrong count: count and size said" \
  || bad "count: $(cat "$TMP/err")"

# a mesh that is not convex, or whose size says millimetres, is warned of (an L's hull 40 % beyond
# it and a 100 m box went by without a word: a new user's trial)
expect_rc 0 "mesh of an L" "$FURERU" mesh "$R/good/meshes/L.obj"
grep -q "L.obj: warning: the mesh is not convex: its convex hull, which is what collides, has 40 % more volume than the mesh (7000 against 5000 cm³)" \
  "$TMP/err" && ok "a non-convex mesh: warned, by how much" || bad "L: $(cat "$TMP/err")"
expect_rc 0 "mesh in millimetres" "$FURERU" mesh "$R/good/meshes/box_mm.stl"
grep -q "box_mm.stl: warning: its hull is 100 m across: a mesh in millimetres read as metres? (--scale 0.001" \
  "$TMP/err" && ok "a 100 m mesh: millimetres suspected, --scale named" || bad "mm: $(cat "$TMP/err")"
expect_rc 0 "mesh in millimetres, scaled" "$FURERU" mesh "$R/good/meshes/box_mm.stl" --scale 0.001
[ ! -s "$TMP/err" ] && ok "scaled to metres: no warning" || bad "mm scaled: $(cat "$TMP/err")"
cat >"$TMP/mm.urdf" <<XML
<robot name="mm"><link name="body"><inertial><mass value="1"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial>
  <collision><geometry><mesh filename="$R/good/meshes/box_mm.stl"/></geometry></collision></link></robot>
XML
cat >"$TMP/mm.yaml" <<YAML
name: mm
world: {dt: 0.001, duration: 0.01}
bodies:
  - {name: ground, type: static, position: [0, 0, -60], shapes: [{type: box, size: [400, 400, 1]}]}
robots:
  - {name: r, urdf: $TMP/mm.urdf, position: [0, 0, 0]}
YAML
"$FURERU" run "$TMP/mm.yaml" --fast --headless >"$TMP/out" 2>"$TMP/err"
grep -q "mm.urdf:2:.*: warning: .*its hull is 100 m across, beyond 20 m: .*scale=\"0.001 0.001 0.001\"" "$TMP/err" \
  && ok "run: a URDF mesh in millimetres warned, its scale attribute named" || bad "mm run: $(cat "$TMP/err")"

# a corpus robot in a scene: its URDF warnings printed by run, and it runs
expect_rc 0 "run a corpus robot" "$FURERU" run "$R/corpus/drop.yaml" --fast --duration 0.5 \
  --set robots.0.urdf=$ROOT/config/robots/example-robot-data/robots/go1_description/urdf/go1.urdf
[ "$(grep -c 'go1.urdf:[0-9]*:[0-9]*: warning:' "$TMP/err")" -eq 5 ] && ok "run prints the URDF's warnings" || bad "run warnings: $(cat "$TMP/err")"
grep -q "none diverged" "$TMP/out" && ok "summary: faults line" || bad "no faults line: $(cat "$TMP/out")"
expect_rc 2 "run --strict refuses it" "$FURERU" run "$R/corpus/drop.yaml" --fast --duration 0.1 --strict \
  --set robots.0.urdf=$ROOT/config/robots/example-robot-data/robots/go1_description/urdf/go1.urdf

# divergence: exit 1, and the message names the body, the quantity and the simulated time (the
# energy audit, which catches it a tick earlier, set out of the way)
expect_rc 1 "diverging run" "$FURERU" run "$R/good/diverges.yaml" --fast --energy-tolerance 1e300
grep -q "run failed at t = 0.00[0-9]* s (simulated): body 'bob' diverged: velocity" "$TMP/err" \
  && ok "divergence named: $(cat "$TMP/err")" || bad "divergence message: $(cat "$TMP/err")"
grep -q "faults .*diverged at t = " "$TMP/out" && ok "summary: diverged" || bad "summary: $(cat "$TMP/out")"
# the energy audit: the first tick's gain exceeds the bound; exit 1 naming the body and the time
expect_rc 1 "energy audit" "$FURERU" run "$R/good/diverges.yaml" --fast
grep -q "run failed at t = 0.0010 s (simulated): body 'bob' gained energy" "$TMP/err" \
  && ok "energy gain named: $(cat "$TMP/err")" || bad "energy message: $(cat "$TMP/err")"
grep -q "energy .* -- EXCEEDED" "$TMP/out" && ok "summary: energy exceeded" || bad "summary: $(cat "$TMP/out")"

# the walking hexapod of the default scene passes the audit with a user's changes (the robots'
# kinetic energy left out their rotors', which the joint work spins: a gait phase change at 2 ms
# steps, a faster gait or stiffer legs failed it as a numerical failure)
for s in world.dt=0.002 robots.0.controller.period=0.4 robots.0.controller.leg_kp=400; do
  expect_rc 0 "default scene, $s" "$FURERU" run "$ROOT/config/scenes/default.yaml" --fast --headless \
    --duration 2 --set "$s"
done

# a box dropped onto the standing hexapod's back passes the audit: the tree's step takes the box's
# motion along the pair's normal and tilts into its Newton step (src/world/robots.c); taken as
# moving at its start velocity, the box was a wall to the link, and all but the lightest of
# these gained 2.5-27 J in one tick
for mz in "0.05 0.65" "0.2 0.65" "1 0.4" "1 0.65" "3 0.4" "3 0.65"; do
  set -- $mz
  expect_rc 0 "box of $1 kg dropped from z $2 onto the hexapod" "$FURERU" run \
    "$R/good/hexapod-box.yaml" --fast --headless --duration 0.6 --set "bodies.box.mass=$1" \
    --set "bodies.box.position=[0,0,$2]"
done

# a box landing on a link with a second box within reach (their pair speculative, then loaded) is
# no wall to the link's tree: a pair of two free bodies, or a link's pair with a gap, does not hold
# a body as the ground does (src/world/robots.c, pair_holds). Taken as a wall, the lift's platform
# followed the boxes down into its limit: at 1 ms a one-tick rise of 19.1 J (0.15 of the audit's
# scale; with this tolerance the run stopped at 0.318 s on 5.2 J), 9.3 J at 5 ms; now 0.018 and
# 0.089 J
for dt in 0.001 0.005; do
  expect_rc 0 "two stacked boxes land on a lift (dt $dt, energy tolerance 0.01)" "$FURERU" run \
    "$R/good/lift-pair.yaml" --fast --headless --set "world.dt=$dt" --energy-tolerance 0.01
done

# a one-link robot spun to ~100 rad/s by a spring off its centre: its base's gyroscopic term
# linearly implicit, the run keeps its energy as the same free body does (before: the audit failed
# at 0.74 s at 1 ms, at 0.15 s at 5 ms)
for dt in 0.001 0.005; do
  expect_rc 0 "a spring-spun one-link robot (dt $dt)" "$FURERU" run "$R/good/spin-spring.yaml" \
    --fast --headless --set "world.dt=$dt"
done

# a robot's pelvis (a sphere's polytope) landing vertex-first while its foot stands (40 heights
# 0.13 mm apart: the landing's phase within the step): the step finds a vertex tip, then the
# face 1.2 mm deep. The link pair takes the band that can close within the step when it closes
# by more than the link law's rest depth, and a link step out of iterations with its forces
# settled keeps its last iterate (src/world/contacts.c, robots.c). Before, one height rose by
# 3.89 J (0.0061 of the scale) in one tick, which the audit let pass within the tick's joint
# work; now at most 7.4e-5 of it, and the bound is 2e-4
worst=0
for i in $(seq 0 39); do
  z=$(awk -v i="$i" 'BEGIN { printf "%.5f", 0.70 + i * 0.00013 }')
  r=$("$FURERU" run "$R/good/squat-fall.yaml" --fast --headless --set "robots.r.position=[0,0,$z]" \
    2>&1 | sed -n 's/.*largest one-tick rise [^(]*(\([^ ]*\) of the scale.*/\1/p')
  worst=$(awk -v a="$worst" -v b="${r:-1}" 'BEGIN { print (b > a ? b : a) }')
done
awk -v w="$worst" 'BEGIN { exit !(w <= 2e-4) }' \
  && ok "a pelvis landing vertex-first: no tick rises by more than 2e-4 of the scale (worst $worst)" \
  || bad "a pelvis landing vertex-first: a tick rose by $worst of the scale"

# the Panda's hand landing on the block of the arm scene, which the ground holds: the tree takes
# the block's velocity as known (taken as free, the hand went deep: 73.7 J in one tick, exit 1)
for t in "0.06 0.001" "0.06 0.002" "0.09 0.001"; do
  set -- $t
  expect_rc 0 "the Panda's hand lands on the block (target z $1, dt $2)" "$FURERU" run \
    "$ROOT/config/scenes/arm.yaml" --fast --headless --duration 1 --set "world.dt=$2" \
    --set "robots.panda.controller.target=[0.5,0,$1]"
done

# the Go1 scene keeps the scenes' touching convention: its four feet touch the ground at the first
# step, none into it (they were 13 mm up, and the robot fell that far as the run started)
"$FURERU" run "$ROOT/config/scenes/quadruped.yaml" --fast --headless --duration 0.001 \
  --set world.settle=false >"$TMP/out" 2>&1
grep -q "contacts *at most 4 at once, max penetration 0 mm" "$TMP/out" \
  && ok "the Go1's feet touch the ground as placed" || bad "Go1 placement: $(grep contacts "$TMP/out")"

# an initial position outside its joint's limits given by --set is named there, not at the file's
# pattern it overrode (`*_ankle`: a new user's trial found the error blamed on the file's line)
expect_rc 2 "a joint's q0 out of its limits by --set" "$FURERU" check \
  "$ROOT/config/scenes/hexapod.yaml" --set robots.hexapod.joints.r2_ankle=3
grep -q "^--set: error: field 'robots\[hexapod\].joints.r2_ankle': initial position 3" "$TMP/err" \
  && ok "the --set that gave it is named" || bad "q0 error: $(grep error "$TMP/err")"

# a hard landing at a long step (docs/robots.md, "Hard landings at long steps"): the hexapod
# dropped 2 m at 5 ms fails the energy audit, and the message names the substeps that hold it;
# taken in them the same drop passes the audit
drop() { "$FURERU" run "$ROOT/config/scenes/hexapod.yaml" --fast --headless --duration 1.5 \
  --set world.dt=0.005 --set "robots.hexapod.position=[0, 0, 2.1123]" "$@"; }
# (should the landing hold at 5 ms one day, the failure and its hint are no longer there to test)
drop >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 0 ]; then
  ok "hexapod dropped 2 m at 5 ms: holds (docs/robots.md is out of date)"
else
  sub=$(sed -n 's/.*a hard landing may be found late.*world.substeps \([0-9]*\) (steps of.*/\1/p' "$TMP/err")
  [ "$rc" -eq 1 ] && [ -n "$sub" ] && grep -q "gained energy" "$TMP/err" \
    && ok "the audit's failure at 5 ms names world.substeps $sub" || bad "landing hint (exit $rc): $(cat "$TMP/err")"
  expect_rc 0 "the same drop in ${sub:-?} substeps" drop --set "world.substeps=${sub:-1}"
fi

# a robot fixed to the world placed with a link in the ground: the settle cannot move it, so its
# note names the link, the body and the depth, and the first tick's failure is the placement's
# (it said "the energy audit: a numerical failure" and no settle note, a new user's UR5)
pend() { "$FURERU" run "$R/good/pendulum-ground.yaml" --fast --headless "$@" >"$TMP/out" 2>"$TMP/err"; }
pend --set "robots.p.position=[0,0,-0.0673]"
rc=$?
[ "$rc" -eq 1 ] && grep -q "settle .*link 'p/bob' of a robot fixed to the world was placed 0.00[0-9]* m into 'ground'" "$TMP/out" \
  && ok "fixed robot's overlap named by the settle" || bad "fixed robot's overlap (exit $rc): $(grep settle "$TMP/out")"
grep -q "gained energy.*the placement overlaps" "$TMP/err" && ok "its failure blames the placement" \
  || bad "fixed robot's failure: $(cat "$TMP/err")"
pend --set "robots.p.position=[0,0,-0.0413]"
rc=$?
[ "$rc" -eq 0 ] && ! grep -q "placed .* into" "$TMP/out" && ! grep -q "^  placement" "$TMP/out" \
  && ok "placed clear: no overlap reported" || bad "placed clear (exit $rc): $(cat "$TMP/out")"

echo "1..$n"
exit $fail
