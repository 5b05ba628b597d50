#!/usr/bin/env bash
# Self-test of scripts/siw-guest: boots the guest a few times and checks that
# the runner returns stdout and stderr separately and exactly, propagates the
# command's exit status, passes the environment, writes through read-write
# shares, enforces its timeout, brings up siw0 and rxe0, and that perftest
# send latency runs over rdma_cm on both devices.
#
#   scripts/guest/tests/runner-selftest.sh [runner options, e.g. --kvm]
#
# Prints PASS/FAIL per check and a closing "N passed, N failed" line; exits
# non-zero on any failure. Takes 1-2 minutes under TCG with a warm cache.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
runner="$here/../../siw-guest"
guest_scripts="$(cd "$here/.." && pwd)"
runner_opts=("$@")

passed=0 failed=0 failures=()
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() {
  failed=$((failed + 1)); failures+=("$1")
  echo "FAIL: $1" >&2
  [ $# -lt 2 ] || { echo "----- $2 -----" >&2; cat "$2" >&2; echo "-----" >&2; }
}
check() { # check NAME FILE-FOR-DIAGNOSTICS COMMAND...
  local name=$1 diag=$2; shift 2
  if "$@"; then pass "$name"; else fail "$name" "$diag"; fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/siw-guest-selftest.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
mkdir -p "$work/rw"
cd "$work" || exit 1

# --- run 1: output, stderr, env, rw share, devices, perftest, exit status ---------
cat > "$work/cmd1.sh" <<EOF
printf 'out-line-1\\nout \$weird "chars"\\n'
echo 'err-line-1' >&2
echo "env FOO=[\$FOO] HOSTVAR=[\$HOSTVAR] GUEST=[\$JWARP_GUEST] PWD=[\$PWD]"
echo "memlock=\$(ulimit -l)"
seq 1 100000 > "$work/rw/seq.txt"
echo "IBV_BEGIN"; ibv_devices; echo "IBV_END"
echo "RDMA_BEGIN"; rdma link show; echo "RDMA_END"
for dev in siw0 rxe0; do
  echo "PERF_BEGIN \$dev"
  "$guest_scripts/perftest-pair.sh" ib_send_lat "\$dev" -n 200; echo "PERF_RC \$dev \$?"
  echo "PERF_END \$dev"
done
exit 7
EOF
echo "selftest: run 1 (devices, perftest on siw0 and rxe0, exit 7)"
HOSTVAR='from host' "$runner" "${runner_opts[@]}" --no-rw --rw "$work/rw" -e FOO='x y$z' -e HOSTVAR \
  "$(cat "$work/cmd1.sh")" > "$work/out1" 2> "$work/err1"
rc1=$?
grep -h '^\[siw-guest\] timings' "$work/err1" | sed 's/^/       /'
check "exit status 7 propagates (got $rc1)" "$work/err1" test "$rc1" -eq 7
check "stdout returned exactly" "$work/out1" \
  grep -qxF 'out $weird "chars"' "$work/out1"
check "stderr returned on stderr" "$work/err1" grep -qxF 'err-line-1' "$work/err1"
check "stderr kept out of stdout" "$work/out1" bash -c "! grep -q err-line-1 '$work/out1'"
check "environment passed (-e K=V, -e K, JWARP_GUEST, cwd)" "$work/out1" \
  grep -qxF "env FOO=[x y\$z] HOSTVAR=[from host] GUEST=[1] PWD=[$work]" "$work/out1"
check "memlock unlimited" "$work/out1" grep -qxF 'memlock=unlimited' "$work/out1"
check "read-write share writes reach the host" "$work/out1" \
  bash -c "[ \"\$(seq 1 100000 | md5sum)\" = \"\$(md5sum < '$work/rw/seq.txt')\" ]"
ibv=$(sed -n '/^IBV_BEGIN$/,/^IBV_END$/p' "$work/out1")
rdma=$(sed -n '/^RDMA_BEGIN$/,/^RDMA_END$/p' "$work/out1")
check "ibv_devices lists siw0" "$work/out1" grep -qE '^\s+siw0\s' <<< "$ibv"
check "ibv_devices lists rxe0" "$work/out1" grep -qE '^\s+rxe0\s' <<< "$ibv"
check "rdma link: siw0 ACTIVE on dummy0" "$work/out1" \
  grep -qE '^link siw0/1 state ACTIVE .*netdev dummy0' <<< "$rdma"
check "rdma link: rxe0 ACTIVE on dummy1" "$work/out1" \
  grep -qE '^link rxe0/1 state ACTIVE .*netdev dummy1' <<< "$rdma"
check "guest reports kernel and siw build on stderr" "$work/err1" \
  grep -qE '^\[siw-guest\] siw: siw.ko .*linux-source-' "$work/err1"
check "runner prints timings" "$work/err1" grep -qE '^\[siw-guest\] timings: setup .*boot .*command ' "$work/err1"
for dev in siw0 rxe0; do
  perf=$(sed -n "/^PERF_BEGIN $dev\$/,/^PERF_END $dev\$/p" "$work/out1")
  # Result row: bytes iterations t_min t_max t_typical ... The figures come from
  # perftest's own clock calibration, which can fail on a loaded emulated CPU
  # ("inf"); the run itself (all 200 iterations, both sides exit 0) is the check.
  row=$(awk '$1 == 2 && $2 == 200 && NF >= 5 { print }' <<< "$perf")
  check "ib_send_lat over rdma_cm on $dev (2 B x 200)" "$work/out1" \
    bash -c "[ -n '$row' ] && grep -qxF 'PERF_RC $dev 0' <<< '$perf'"
  if [ -n "$row" ]; then
    typ=$(awk '{ print $5 }' <<< "$row")
    if [[ $typ =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
      echo "       $dev send latency typical $typ us (TCG)"
    else
      echo "       $dev send latency not measured: perftest clock calibration gave '$typ' (loaded host)"
    fi
  fi
done

# --- run 2: argv form and another exit status ---------------------------------------
echo "selftest: run 2 (argv form, exit 3)"
"$runner" "${runner_opts[@]}" -q --no-rw -- sh -c 'printf "[%s]" "$@"; echo; exit 3' sh 'a b' "c'd" '$e' \
  > "$work/out2" 2> "$work/err2"
rc2=$?
grep -h '^\[siw-guest\] timings' "$work/err2" | sed 's/^/       /'
check "argv form: exit status 3 propagates (got $rc2)" "$work/err2" test "$rc2" -eq 3
check "argv form: arguments arrive unchanged" "$work/out2" grep -qxF "[a b][c'd][\$e]" "$work/out2"

# --- run 3: timeout ------------------------------------------------------------------
# The limit leaves room for a boot as slow as run 2's, so the command has
# started (and printed) before the guest is killed, even on a loaded machine.
boot_wall=$(sed -n 's/.*qemu wall \([0-9]*\)\..*/\1/p' "$work/err2" | head -n1)
limit=$(( ${boot_wall:-20} * 2 + 15 ))
echo "selftest: run 3 (timeout ${limit} s against sleep 3600)"
start=$SECONDS
"$runner" "${runner_opts[@]}" -q --no-rw -t "$limit" 'echo started; sleep 3600; echo not-reached' \
  > "$work/out3" 2> "$work/err3"
rc3=$? took=$((SECONDS - start))
grep -h '^\[siw-guest\] timings' "$work/err3" | sed 's/^/       /'
check "timeout: exit status 124 (got $rc3)" "$work/err3" test "$rc3" -eq 124
check "timeout: fails loudly" "$work/err3" grep -q 'siw-guest: TIMEOUT' "$work/err3"
check "timeout: guest killed at the limit (${took}s for ${limit}s)" "$work/err3" test "$took" -lt $((limit + 30))
check "timeout: output before the kill returned" "$work/out3" grep -qxF started "$work/out3"
check "timeout: command did not finish" "$work/out3" bash -c "! grep -q not-reached '$work/out3'"

# --- usage errors need no guest --------------------------------------------------------
"$runner" --no-such-option true > /dev/null 2> "$work/err4"; rc4=$?
check "bad option: exit status 2 (got $rc4)" "$work/err4" test "$rc4" -eq 2

echo
if [ "$failed" -gt 0 ]; then
  echo "runner-selftest: FAILED: ${failures[*]}" >&2
fi
echo "runner-selftest: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
