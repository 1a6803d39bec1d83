#!/usr/bin/env bash
# Run a test under a virtual X server; skip (77) without Xvfb (scripts/deps.sh installs it).
command -v xvfb-run >/dev/null && command -v Xvfb >/dev/null || {
  echo "no Xvfb: skipped"
  exit 77
}
exec xvfb-run -a -s "-screen 0 1280x1024x24" "$@"
