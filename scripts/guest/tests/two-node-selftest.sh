#!/usr/bin/env bash
# Self-test of scripts/siw-guest --nodes 2 (two guests joined by two virtual Ethernet links):
#   run 1, --mtu 9000 with both captures: node 1 pings node 2 on the siw and the rxe link with
#     8000-byte payloads (no fragmentation: the MTU is really 9000), both nodes see siw0/rxe0 on
#     their link, node 2's output comes back prefixed "[node2] ", the host's captures decode
#     (tshark) with the pings in them;
#   run 2: node 2's command fails while node 1's still runs: the run fails with node 2's status
#     and stops node 1 early;
#   run 3: node 1's guest powers itself off without an exit status: the run fails at once and
#     stops node 2 instead of waiting for it (or the timeout).
#
#   scripts/guest/tests/two-node-selftest.sh [runner options]
#
# Prints PASS/FAIL per check and a closing "N passed, N failed" line.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
runner="$here/../../siw-guest"

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1" >&2; }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

work=$(mktemp -d "${TMPDIR:-/tmp}/siw-guest-2node.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
cd "$work" || exit 1

t0=$SECONDS
"$runner" "$@" --nodes 2 --mtu 9000 --capture "$work/siw.pcap" --capture-rxe "$work/rxe.pcap" \
  --node2 'echo "N2 node=$JWARP_NODE ip=$JWARP_SIW_IP peer=$JWARP_SIW_PEER_IP mtu=$(cat /sys/class/net/$JWARP_SIW_NETDEV/mtu)"; rdma link show' \
  'echo "N1 node=$JWARP_NODE ip=$JWARP_SIW_IP peer=$JWARP_SIW_PEER_IP rxe=$JWARP_RXE_IP mtu=$(cat /sys/class/net/$JWARP_SIW_NETDEV/mtu)"
   rdma link show
   busybox ping -c 2 -s 8000 "$JWARP_SIW_PEER_IP" && busybox ping -c 2 -s 8000 "$JWARP_RXE_PEER_IP" && echo PINGS_OK' \
  > "$work/out1" 2> "$work/err1"
rc=$?
t1=$SECONDS
grep -h '^\[siw-guest\] timings' "$work/err1" | sed 's/^/       /'
check "run 1 exit status 0 (got $rc, ${SECONDS}s)" test "$rc" -eq 0
check "node 1: JWARP_* addresses and MTU 9000" grep -qxF 'N1 node=1 ip=10.80.0.1 peer=10.80.0.2 rxe=10.81.0.1 mtu=9000' "$work/out1"
check "node 2: output returned with the [node2] prefix" grep -qxF '[node2] N2 node=2 ip=10.80.0.2 peer=10.80.0.1 mtu=9000' "$work/out1"
check "node 1: siw0 and rxe0 on their own links" grep -qE '^link siw0/1 state ACTIVE .*netdev eth' "$work/out1"
check "node 2: siw0 and rxe0 on their own links" grep -qE '^\[node2\] link rxe0/1 state ACTIVE .*netdev eth' "$work/out1"
check "8000-byte pings across both links" grep -qxF PINGS_OK "$work/out1"
if command -v tshark >/dev/null; then
  n80=$(tshark -r "$work/siw.pcap" -Y 'icmp.type == 0 && ip.src == 10.80.0.2' 2>/dev/null | wc -l)
  n81=$(tshark -r "$work/rxe.pcap" -Y 'icmp.type == 0 && ip.src == 10.81.0.2' 2>/dev/null | wc -l)
  big=$(tshark -r "$work/siw.pcap" -Y 'icmp && frame.len > 8000 && ip.flags.mf == 0 && ip.frag_offset == 0' 2>/dev/null | wc -l)
  check "host capture of the siw link: node 2's echo replies ($n80)" test "$n80" -ge 2
  check "host capture of the rxe link: node 2's echo replies ($n81)" test "$n81" -ge 2
  check "host capture: unfragmented 8000-byte frames at MTU 9000 ($big)" test "$big" -ge 4
else
  fail "tshark is not installed (scripts/setup-guest-deps --tshark): captures not decoded"
fi

"$runner" "$@" --nodes 2 --node2 'echo node2 fails; exit 7' 'sleep 300; echo NODE1_RAN_ON' > "$work/out2" 2> "$work/err2"
rc=$?
t2=$SECONDS
check "run 2: node 2's failure fails the run with its status (got $rc)" test "$rc" -eq 7
check "run 2: node 1 was stopped early ($((t2 - t1))s)" test "$((t2 - t1))" -lt 200
check "run 2: the runner says why" grep -q "node 2's command failed (exit 7); node 1 was stopped" "$work/err2"
check "run 2: node 1's command did not finish" test "$(grep -c NODE1_RAN_ON "$work/out2")" -eq 0
"$runner" "$@" --nodes 2 --node2 'sleep 150; echo NODE2_RAN_ON' 'busybox poweroff -f' > "$work/out3" 2> "$work/err3"
rc=$?
t3=$SECONDS
check "run 3: a guest gone without an exit status fails the run (got $rc)" test "$rc" -ne 0
check "run 3: node 2 was stopped early ($((t3 - t2))s)" test "$((t3 - t2))" -lt 140
check "run 3: the runner says why" grep -q "node 1's guest ended without an exit status" "$work/err3"
check "run 3: node 2's command did not finish" test "$(grep -c NODE2_RAN_ON "$work/out3")" -eq 0
if [ "$failed" -gt 0 ]; then
  for f in out1 err1 out2 err2 out3 err3; do echo "----- $f -----" >&2; tail -40 "$work/$f" >&2; done
fi
echo "two-node-selftest: $passed passed, $failed failed (run 1 $((t1 - t0))s, run 2 $((t2 - t1))s, run 3 $((t3 - t2))s)"
[ "$failed" -eq 0 ]
