#!/bin/bash
# PID 1 of the jwarp guest after switch_root; runs with the host's bash on the
# overlay root. Brings up siw0 and rxe0, runs the user's command and leaves its
# stdout, stderr and exit status in the exchange share for the host.
#
# Exchange share (/run/jwarp-guest), written by the host:
#   params.sh  settings (KVER, MODDIR, RW_DIRS, CMD_CWD, WANT_SIW, WANT_RXE, SIW_INFO)
#   env.sh     the command's environment (export lines)
#   cmd.sh     the command
# and written here: setup.log, stdout, stderr, times, rc.
X=/run/jwarp-guest
# shellcheck source=/dev/null
. "$X/params.sh"

uptime_s() { cut -d' ' -f1 /proc/uptime; }
mark() { echo "$1 $(uptime_s)" >> "$X/times"; }
power_off() {
  sync
  echo o > /proc/sysrq-trigger
  sleep 30
}
fail_setup() {
  echo "JWARP_GUEST_SETUP_FAILED: $*"
  echo "--- dmesg (tail) ---"; dmesg | tail -n 40
  echo "jwarp-guest: setup failed: $*" >> "$X/stderr"
  echo 125 > "$X/rc"
  power_off
}

mark t_stage2
exec > "$X/setup.log" 2>&1
set -x
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb

mkdir -p /dev/pts /dev/shm /run/lock /tmp
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
hostname jwarp-guest
ulimit -l unlimited
ulimit -n 65536 || true

# The kernel's modules (with the out-of-tree siw.ko) come from the host cache.
mkdir -p "/lib/modules/$KVER"
mount --bind "$MODDIR" "/lib/modules/$KVER" || fail_setup "cannot bind the module tree $MODDIR"

modprobe virtio_rng || true
ip link set lo up
modprobe -a ib_core ib_uverbs iw_cm ib_cm rdma_cm rdma_ucm || fail_setup "cannot load the RDMA core modules"
modprobe dummy numdummies=0 || fail_setup "cannot load dummy"

# rdma_cm does not resolve loopback addresses to siw, so each soft device sits
# on its own dummy interface with an address that exists only in the guest.
ip link add dummy0 type dummy && ip addr add 10.77.0.1/24 dev dummy0 && ip link set dummy0 up \
  || fail_setup "cannot create dummy0"
ip link add dummy1 type dummy && ip addr add 10.78.0.1/24 dev dummy1 && ip link set dummy1 up \
  || fail_setup "cannot create dummy1"
if [ "$WANT_SIW" = 1 ]; then
  modprobe siw || fail_setup "cannot load siw.ko"
  rdma link add siw0 type siw netdev dummy0 || fail_setup "cannot create siw0"
fi
if [ "$WANT_RXE" = 1 ]; then
  modprobe rdma_rxe || fail_setup "cannot load rdma_rxe"
  rdma link add rxe0 type rxe netdev dummy1 || fail_setup "cannot create rxe0"
fi
[ "$WANT_SIW" != 1 ] || [ -e /sys/class/infiniband/siw0 ] || fail_setup "siw0 did not appear"
[ "$WANT_RXE" != 1 ] || [ -e /sys/class/infiniband/rxe0 ] || fail_setup "rxe0 did not appear"

i=0
for d in "${RW_DIRS[@]}"; do
  mkdir -p "$d"
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=mmap "rw$i" "$d" \
    || fail_setup "cannot mount the read-write share $d"
  i=$((i + 1))
done
set +x
mark t_ready

# What the command runs against, for reports (stderr of the command).
{
  echo "[siw-guest] kernel: $(uname -r) ($(uname -v))"
  [ "$WANT_SIW" = 1 ] && echo "[siw-guest] siw: $SIW_INFO; vermagic $(modinfo -F vermagic siw 2>/dev/null)"
  echo "[siw-guest] rdma link:"
  rdma link show 2>&1 | sed 's/^/[siw-guest]   /'
  echo "[siw-guest] ibv_devices:"
  ibv_devices 2>&1 | sed 's/^/[siw-guest]   /'
  echo "[siw-guest] addresses: siw0 10.77.0.1 (dummy0), rxe0 10.78.0.1 (dummy1)"
} >> "$X/stderr" 2>&1

echo "running the command in $CMD_CWD"
env -i /bin/bash --noprofile --norc -c '
  . "$1" || exit 125
  cd -- "$2" || { echo "siw-guest: cannot cd to $2 in the guest" >&2; exit 125; }
  exec /bin/bash --noprofile --norc "$3"
' jwarp-guest "$X/env.sh" "$CMD_CWD" "$X/cmd.sh" >> "$X/stdout" 2>> "$X/stderr" < /dev/null
rc=$?
mark t_done
echo "command exit status $rc"
echo "$rc" > "$X/rc.tmp" && mv "$X/rc.tmp" "$X/rc"
power_off
