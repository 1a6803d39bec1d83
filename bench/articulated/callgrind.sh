#!/bin/sh
# Instructions per call (valgrind callgrind) of each case of bench_articulated: the count of
# a run with N calls less that of a run with none, divided by N.
#   callgrind.sh BENCH_EXE [N]
exe=$1
calls=${2:-500}
count() { # case, calls → total instructions, or nothing when the case is not built
    out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe" --only "$1" \
        --calls "$2" 2>&1) || return 0
    printf '%s\n' "$out" | sed -n 's/.*refs: *//p' | tr -d ,
}
base=$(count fureru 0)
[ -n "$base" ] || { echo "callgrind run failed"; exit 1; }
for c in fureru fureru-kin fk step-euler step-verlet bullet bullet-kin; do
    n=$(count "$c" "$calls")
    [ -n "$n" ] || { echo "$c: not built"; continue; }
    echo "$c: $(( (n - base) / calls )) instructions/call"
done
