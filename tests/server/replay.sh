#!/usr/bin/env bash
# Record and replay (TAP): a 10 s real-time session of the default scene held by the simulated
# hand replaying a recorded trajectory (config/devices/virtual-recorded.yaml) is recorded; its
# replay, fast and again, writes a byte-identical CSV with the same felt force in every tick
# (replay compares each with the recording). A truncated, corrupt or foreign recording, or a scene
# changed since, is refused with exit 2 and a message saying which; an interrupted recording
# replays the steps it holds.
set -u
FURERU=$1
ROOT=${FR_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
cd "$TMP" || exit 1

# the session, in real time (the tick times are the machine's, not a formula)
if "$FURERU" run default --device virtual-recorded --duration 10 --no-rt --log live.csv \
    --record s.rec >live.out 2>live.err; then
  ok "10 s real-time session recorded ($(wc -c <s.rec) bytes)"
else
  bad "recording run failed: $(cat live.err)"
fi
for k in 1 2; do
  if "$FURERU" replay s.rec --fast --log r$k.csv >r$k.out 2>r$k.err && cmp -s live.csv r$k.csv; then
    ok "fast replay $k: the CSV is byte-identical ($(wc -l <r$k.csv) rows)"
  else
    bad "fast replay $k differs: $(cat r$k.err; cmp live.csv r$k.csv)"
  fi
  grep -q "the felt force equals the recording's in all 10000 ticks" r$k.out &&
    ok "replay $k: felt force identical in all 10000 ticks" || bad "felt forces: $(grep replay r$k.out)"
done
# the device columns (what the hand did and felt) are in the log
head -1 live.csv | grep -q device.fx && ok "the log carries the felt force" || bad "no device.fx column"

expect2() { # name, file, message pattern
  "$FURERU" replay "$2" --fast >/dev/null 2>"$TMP/e"
  rc=$?
  if [ $rc = 2 ] && grep -q "$3" "$TMP/e"; then ok "$1: exit 2: $(cat "$TMP/e")"; else
    bad "$1: exit $rc: $(cat "$TMP/e")"; fi
}
size=$(wc -c <s.rec)
head -c $((size / 2)) s.rec >cut.rec
expect2 "truncated recording" cut.rec "truncated"
head -c $((size - 3)) s.rec >cut3.rec
expect2 "recording missing its last bytes" cut3.rec "truncated"
cp s.rec flip.rec
printf '\x5a' | dd of=flip.rec bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect2 "one byte changed" flip.rec "corrupt"
echo "not a recording" >junk.rec
expect2 "a text file" junk.rec "not a fureru recording"
head -c 40 s.rec >head.rec
expect2 "the head only" head.rec "recording"
: >empty.rec
expect2 "an empty file" empty.rec "not a fureru recording"
"$FURERU" replay missing.rec >/dev/null 2>&1
[ $? = 2 ] && ok "a missing file: exit 2" || bad "a missing file"

# a scene changed after the recording is refused
cp "$ROOT/config/scenes/free-fall.yaml" mine.yaml
"$FURERU" run mine.yaml --fast --duration 0.2 --record mine.rec >/dev/null 2>&1 || bad "free-fall run"
"$FURERU" replay mine.rec --fast >/dev/null 2>&1 && ok "an unchanged scene replays" || bad "free-fall replay"
sed -i 's/dt: /dt: 0.0005 #/' mine.yaml
grep -q 'dt: 0.0005' mine.yaml || bad "could not edit the scene"
expect2 "the scene changed since" mine.rec "changed since"

# an interrupted session (Ctrl-C) replays the steps it has: the same rows, less the tick the
# stop request may have reached (the signal drops the device's force at once)
"$FURERU" run default --duration 30 --no-rt --log int.csv --record int.rec >/dev/null 2>&1 &
pid=$!
sleep 1.5
kill -INT $pid
wait $pid
if "$FURERU" replay int.rec --fast --log int2.csv >int.out 2>&1 &&
  [ "$(wc -l <int.csv)" -le $(($(wc -l <int2.csv) + 1)) ] &&
  cmp -s int2.csv <(head -c "$(wc -c <int2.csv)" int.csv); then
  ok "an interrupted recording replays ($(grep ticks int.out | head -1 | xargs))"
else
  bad "interrupted recording: $(cat int.out)"
fi
echo "1..$n"
exit $fail
