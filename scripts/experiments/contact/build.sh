#!/bin/sh
# build.sh TOOL [BUILD]: compile TOOL.c here against BUILD's static libraries (default
# build-release), into BUILD/experiments/TOOL. The tools of docs/contact.md §8:
#   csweep < CASES        creep on the slope scene (EVERY=1: each second's too), one line "sx sy sz yaw mass dt deg eps" each;
#                         prints the creep 1 s -> 11 s and whether the settle gave up
#                         (sfail.cases: the 24 bodies whose settle gave up at 5 ms; r2000, a, a3:
#                         the 3280 of the creep sweep)
#   trace  sx sy sz yaw mass dt deg eps NSTEP   per step: the block's turn and its model's points
#   ktest  ... NSTEP      the tilt/normal stiffness of the step's model, of fresh builds and of a
#                         grid over the face (pipe into kev.py for the dt^2/I eigenvalues)
#   kg     ... NSTEP      the same for a 1-D Gauss rule along the thickness' slope
#   note   sx sy sz yaw mass dt deg eps   the settle's note for that case
#   tipb   sx sy sz yaw dt mu [T]          tan θ at which the block tips over its static limit,
#                         by bisection (F=f: whether it tips at that fraction; VERBOSE=1: how)
#   egain  sx sy sz yaw dt mu tan T        the largest one-step rise of energy less work of a
#                         block on the slope (STOP=a: until it has turned a rad; VERBOSE=1: each
#                         rising step with its landings found late, VERBOSE=2: every step;
#                         FROM=, TO=: those steps' energies, rebuild jumps and each contact's
#                         model and bond); tipsweep.py SEED N runs it over N random boxes
#   scount SCENE SECONDS [K=V ...]  pair models advanced and geometry tangents measured per step
#                         (TIME=1: each step's thread CPU time, by tangents measured in it)
#   etrace SCENE SECONDS [K=V ...]  the largest one-step rise of energy less work (FROM=, TO=:
#                         those steps' energies, rebuild jumps and each contact's model)
#   runscene SCENE NSTEP [K=V ...]  the settle's note and how far BODY (default b) moved after it
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=${2:-$root/build-release}
libs=$(find "$B/src" "$B/drivers" -name '*.a' | tr '\n' ' ')
mkdir -p "$B/experiments"
gcc -O2 -g -std=c11 -D_GNU_SOURCE -DROOT="\"$root\"" -I"$root/include" -I"$root/src" \
  -o "$B/experiments/$1" "$here/$1.c" -Wl,--start-group $libs -Wl,--end-group \
  -lyaml -lxml2 -lassimp -lqhull_r -lusb-1.0 -lpng -lm -lpthread -lstdc++
echo "$B/experiments/$1"
