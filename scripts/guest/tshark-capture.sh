#!/bin/bash
# Captures the TCP traffic of one command on the guest's loopback with tshark.
#
#   scripts/guest/tshark-capture.sh FILE.pcapng 'capture filter' -- command [args...]
#   e.g. scripts/guest/tshark-capture.sh /tmp/rping.pcapng 'tcp port 7174' -- \
#          sh -c 'rping -s -a 10.77.0.1 -C 2 & sleep 1; rping -c -a 10.77.0.1 -C 2'
#
# Traffic between two endpoints on the guest's own addresses (10.77.0.1 on
# dummy0, 10.78.0.1 on dummy1) is routed over lo, not over the dummy device,
# so lo is where it is seen. Waits until tshark reports the capture started,
# runs the command, stops tshark and exits with the command's status (or 3 if
# tshark failed). Needs tshark (scripts/setup-guest-deps --tshark).
set -u
file=${1:?usage: tshark-capture.sh FILE FILTER -- command...}
filter=${2:?usage: tshark-capture.sh FILE FILTER -- command...}
shift 2
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "tshark-capture: no command given" >&2; exit 2; }
command -v tshark >/dev/null || { echo "tshark-capture: tshark is not installed (scripts/setup-guest-deps --tshark)" >&2; exit 3; }

log=$(mktemp)
tshark -i lo -f "$filter" -w "$file" > "$log" 2>&1 &
ts=$!
ready=
for _ in $(seq 1 240); do      # tshark takes several seconds to start under emulation
  if grep -q 'Capture started' "$log"; then ready=1; break; fi
  kill -0 "$ts" 2>/dev/null || break
  sleep 0.25
done
if [ -z "$ready" ]; then
  echo "tshark-capture: FAILED: tshark did not start capturing:" >&2
  cat "$log" >&2; kill "$ts" 2>/dev/null; rm -f "$log"; exit 3
fi
"$@"
rc=$?
sleep 0.5                      # let the last segments reach the capture
kill -INT "$ts"
for _ in $(seq 1 120); do         # bounded: a tshark that does not stop must not hang the guest
  kill -0 "$ts" 2>/dev/null || break
  sleep 0.25
done
if kill -0 "$ts" 2>/dev/null; then
  echo "tshark-capture: FAILED: tshark did not stop within 30 s of SIGINT" >&2
  kill -KILL "$ts" 2>/dev/null; wait "$ts" 2>/dev/null; cat "$log" >&2; rm -f "$log"; exit 3
fi
wait "$ts"; trc=$?
packets=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured$/\1/p' "$log")
if [ "$trc" -ne 0 ] || [ -z "$packets" ]; then
  echo "tshark-capture: FAILED: tshark exit $trc:" >&2; cat "$log" >&2; rm -f "$log"; exit 3
fi
echo "tshark-capture: $packets packets in $file" >&2
rm -f "$log"
exit "$rc"
