#!/bin/bash
# Runs one perftest program as server and client on the same device inside the
# jwarp guest, over rdma_cm, and prints the client's report.
#
#   scripts/guest/perftest-pair.sh TOOL DEVICE [perftest options...]
#   e.g. scripts/guest/perftest-pair.sh ib_send_lat siw0 -n 200
#
# DEVICE is siw0 (client connects to 10.77.0.1) or rxe0 (10.78.0.1). Adds
# -R (rdma_cm) and -F. Use iteration counts (-n), not -D: perftest's clock
# calibration fails under emulation. Exits non-zero if either side fails.
set -u
tool=${1:?usage: perftest-pair.sh TOOL DEVICE [options]}
dev=${2:?usage: perftest-pair.sh TOOL DEVICE [options]}
shift 2
case $dev in
  siw0) ip=${JWARP_SIW_IP:-10.77.0.1} ;;
  rxe0) ip=${JWARP_RXE_IP:-10.78.0.1} ;;
  *) echo "perftest-pair: unknown device $dev (siw0 or rxe0)" >&2; exit 2 ;;
esac
port=$((18515 + RANDOM % 1000))
slog=$(mktemp)
"$tool" -R -F -d "$dev" -p "$port" "$@" > "$slog" 2>&1 &
srv=$!
rc=1
for attempt in $(seq 1 30); do
  sleep 1
  kill -0 "$srv" 2>/dev/null || break
  if "$tool" -R -F -d "$dev" -p "$port" "$@" "$ip"; then rc=0; break; fi
  echo "perftest-pair: $tool client attempt $attempt on $dev failed, retrying" >&2
done
if [ "$rc" -ne 0 ]; then kill "$srv" 2>/dev/null; fi
wait "$srv"; src=$?
if [ "$src" -ne 0 ] || [ "$rc" -ne 0 ]; then
  echo "perftest-pair: FAILED: $tool on $dev (client rc=$rc, server rc=$src); server output:" >&2
  cat "$slog" >&2
  rm -f "$slog"
  exit 1
fi
rm -f "$slog"
