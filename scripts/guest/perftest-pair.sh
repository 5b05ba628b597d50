#!/bin/bash
# Runs one perftest program as server and client on the same device inside the
# jwarp guest, over rdma_cm, and prints the client's report.
#
#   scripts/guest/perftest-pair.sh TOOL DEVICE [perftest options...]
#   e.g. scripts/guest/perftest-pair.sh ib_send_lat siw0 -n 200
#
# DEVICE is siw0 (client connects to 10.77.0.1) or rxe0 (10.78.0.1). Adds
# -R (rdma_cm) and -F. Use iteration counts (-n), not -D: perftest's clock
# calibration fails under emulation. Each attempt starts a fresh server on a
# fresh port and bounds both sides with PERFTEST_PAIR_TIMEOUT seconds (default
# 120); up to PERFTEST_PAIR_ATTEMPTS (default 3) attempts; PERFTEST_PAIR_CLIENT_CPU=N pins
# the client to CPU N. Exits non-zero, with
# both sides' output on stderr, when no attempt succeeds.
set -u
tool=${1:?usage: perftest-pair.sh TOOL DEVICE [options]}
dev=${2:?usage: perftest-pair.sh TOOL DEVICE [options]}
shift 2
case $dev in
  siw0) ip=${JWARP_SIW_IP:-10.77.0.1} ;;
  rxe0) ip=${JWARP_RXE_IP:-10.78.0.1} ;;
  *) echo "perftest-pair: unknown device $dev (siw0 or rxe0)" >&2; exit 2 ;;
esac
limit=${PERFTEST_PAIR_TIMEOUT:-120}
# PERFTEST_PAIR_CLIENT_CPU=N: the client runs pinned to CPU N (taskset), the server unpinned
pin=()
[ -z "${PERFTEST_PAIR_CLIENT_CPU:-}" ] || pin=(taskset -c "$PERFTEST_PAIR_CLIENT_CPU")
attempts=${PERFTEST_PAIR_ATTEMPTS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

listening() { # listening PORT: the server's rdma_cm listener is up
  local port=$1 hex
  printf -v hex ':%04X ' "$port"
  # siw listens on a kernel TCP socket; rxe has none, so fall back to a pause.
  if [ "$dev" = siw0 ]; then grep -q "$hex.* 0A " /proc/net/tcp 2>/dev/null; else sleep 2; fi
}

for attempt in $(seq 1 "$attempts"); do
  port=$((18515 + RANDOM % 2000))
  timeout "$limit" "$tool" -R -F -d "$dev" -p "$port" "$@" > "$tmp/server" 2>&1 &
  srv=$!
  for _ in $(seq 1 $((limit * 4))); do
    listening "$port" && break
    kill -0 "$srv" 2>/dev/null || break
    sleep 0.25
  done
  timeout "$limit" "${pin[@]}" "$tool" -R -F -d "$dev" -p "$port" "$@" "$ip" > "$tmp/client" 2>&1
  crc=$?
  [ "$crc" -eq 0 ] || kill "$srv" 2>/dev/null
  wait "$srv"; src=$?
  if [ "$crc" -eq 0 ] && [ "$src" -eq 0 ]; then
    cat "$tmp/client"
    exit 0
  fi
  echo "perftest-pair: attempt $attempt of $tool on $dev port $port failed" \
       "(client rc=$crc, server rc=$src; 124 = timed out after ${limit}s)" >&2
  echo "--- client ---" >&2; cat "$tmp/client" >&2
  echo "--- server ---" >&2; cat "$tmp/server" >&2
done
echo "perftest-pair: FAILED: $tool on $dev after $attempts attempts" >&2
exit 1
