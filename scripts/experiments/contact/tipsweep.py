#!/usr/bin/env python3
"""tipsweep.py SEED N: N random boxes tipped over their static limit on the slope scene (egain):
half-sizes 5 mm-1 m, w/h 0.15-0.9, a third yawed up to 45 degrees, tan theta 1.01-1.25 of w/h,
mu 1.5, dt 1 or 5 ms, 2 s each. Prints the 15 worst one-step rises (of m g h) and how many runs
rose by more than 1e-6 and 1e-4 of m g h (docs/contact.md section 3, "A bond read again").
EG: the egain binary (default build-release/experiments/egain; build.sh egain builds it);
CASES: a file each run's "rise sx sy sz yaw dt tan" line is appended to."""
import math, os, random, subprocess, sys

root = os.path.dirname(os.path.abspath(__file__)) + "/../../.."
EG = os.environ.get("EG", root + "/build-release/experiments/egain")
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
N = int(sys.argv[2]) if len(sys.argv) > 2 else 300
rows = []
for i in range(N):
    sx = math.exp(random.uniform(math.log(0.005), math.log(1)))
    sy = sx * math.exp(random.uniform(math.log(0.3), math.log(3)))
    r = random.uniform(0.15, 0.9)
    sz = sx / r
    yaw = random.choice([0, 0, random.uniform(0, 0.785)])
    dt = random.choice([0.001, 0.005])
    tn = random.uniform(1.01, 1.25) * r
    args = [repr(v) for v in (sx, sy, sz, yaw, dt, 1.5, tn, 2)]
    out = subprocess.run([EG] + args, capture_output=True, text=True).stdout.strip().split("\n")[-1]
    rel = float(out.split()[4].strip("("))
    rows.append((rel, sx, sy, sz, yaw, dt, tn, out))
    if "CASES" in os.environ:
        with open(os.environ["CASES"], "a") as f:
            f.write("%r %r %r %r %r %r %r\n" % (rel, sx, sy, sz, yaw, dt, tn))
rows.sort(reverse=True)
for row in rows[:15]:
    print("%.3e sx %.4f sy %.4f sz %.4f yaw %.3f dt %g tan %.4f | %s" % row)
print("n", N, ">1e-6:", sum(1 for r in rows if r[0] > 1e-6), ">1e-4:",
      sum(1 for r in rows if r[0] > 1e-4))
