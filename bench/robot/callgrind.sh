#!/bin/sh
# Instructions per step (valgrind callgrind) of the hexapod world step and of the gait
# controller alone: the count of a run with N steps less that of a run with none, divided by N.
#   callgrind.sh BENCH_EXE SCENE [N]
exe=$1
scene=$2
steps=${3:-2000}
count() { # mode, steps → total instructions
    out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe" "$scene" --only "$1" \
        --steps "$2" 2>&1) || return 0
    printf '%s\n' "$out" | sed -n 's/.*refs: *//p' | tr -d ,
}
for mode in world gait; do
    base=$(count "$mode" 0)
    n=$(count "$mode" "$steps")
    [ -n "$base" ] && [ -n "$n" ] || { echo "$mode: callgrind run failed"; exit 1; }
    echo "$mode: $(( (n - base) / steps )) instructions/step"
done
