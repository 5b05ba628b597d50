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
PS4='+ ${EPOCHREALTIME} '
set -x
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb

mkdir -p /run/lock /tmp /run/modprobe.d
echo jwarp-guest > /proc/sys/kernel/hostname
ulimit -l unlimited
ulimit -n 65536 || true
# init bound the kernel's module tree (with the out-of-tree siw.ko) from the host cache.
[ -f "/lib/modules/$KVER/modules.dep" ] || fail_setup "module tree for $KVER not mounted (from $MODDIR)"

# One modprobe and one ip/rdma batch each: every program start reads over 9p.
# One node: rdma_cm does not resolve loopback addresses to siw, so each soft
# device sits on its own dummy interface with an address that exists only in
# the guest. Two nodes: each device has its own virtio-net link to the peer,
# found by the MAC the host gave it (52:54:00:80:00:0N siw, :81: rxe).
echo "options dummy numdummies=0" > /run/modprobe.d/jwarp-guest.conf
mods=(virtio_rng ib_core ib_uverbs iw_cm ib_cm rdma_cm rdma_ucm)
if [ "${NODES:-1}" = 2 ]; then mods+=(virtio_net); else mods+=(dummy); fi
[ "$WANT_SIW" = 1 ] && mods+=(siw)
[ "$WANT_RXE" = 1 ] && mods+=(rdma_rxe)
modprobe -a "${mods[@]}" || fail_setup "cannot load modules: ${mods[*]}"
if [ "${NODES:-1}" = 2 ]; then
  echo "jwarp-node$NODE" > /proc/sys/kernel/hostname
  siw_if= rxe_if=
  for n in /sys/class/net/*; do
    case $(< "$n/address") in
      52:54:00:80:00:0$NODE) siw_if=${n##*/} ;;
      52:54:00:81:00:0$NODE) rxe_if=${n##*/} ;;
    esac
  done
  [ -n "$siw_if" ] && [ -n "$rxe_if" ] || fail_setup "the two virtio-net links did not appear ($(ls /sys/class/net))"
  echo "SIW_IF=$siw_if RXE_IF=$rxe_if" > "$X/netdevs"
  ip -batch - <<IP || fail_setup "cannot configure $siw_if/$rxe_if"
link set lo up
link set $siw_if mtu $MTU
address add 10.80.0.$NODE/24 dev $siw_if
link set $siw_if up
link set $rxe_if mtu $MTU
address add 10.81.0.$NODE/24 dev $rxe_if
link set $rxe_if up
IP
  echo "export JWARP_SIW_NETDEV=$siw_if JWARP_RXE_NETDEV=$rxe_if" >> "$X/env.sh"
else
  siw_if=dummy0 rxe_if=dummy1
  ip -batch - <<'IP' || fail_setup "cannot create dummy0/dummy1"
link set lo up
link add dummy0 type dummy
address add 10.77.0.1/24 dev dummy0
link set dummy0 up
link add dummy1 type dummy
address add 10.78.0.1/24 dev dummy1
link set dummy1 up
IP
fi
links=()
[ "$WANT_SIW" = 1 ] && links+=("link add siw0 type siw netdev $siw_if")
[ "$WANT_RXE" = 1 ] && links+=("link add rxe0 type rxe netdev $rxe_if")
if [ ${#links[@]} -gt 0 ]; then
  printf '%s\n' "${links[@]}" | rdma -b - || fail_setup "cannot create the RDMA links"
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

# Two nodes: the command starts once the peer answers on both links (it boots at the same time).
if [ "${NODES:-1}" = 2 ]; then
  peer=$((3 - NODE))
  for a in 10.80.0.$peer 10.81.0.$peer; do
    ok=
    for _ in $(seq 1 300); do
      if busybox ping -c 1 -W 1 "$a" > /dev/null 2>&1; then ok=1; break; fi
    done
    [ -n "$ok" ] || fail_setup "the peer $a did not answer ping within 300 s"
  done
  mark t_link
fi

# What the command runs against, for reports (stderr of the command).
prefix() { local l; while IFS= read -r l; do echo "[siw-guest]   $l"; done; }
{
  echo "[siw-guest] kernel: $(< /proc/sys/kernel/osrelease) ($(< /proc/sys/kernel/version))"
  [ "$WANT_SIW" = 1 ] && echo "[siw-guest] siw: $SIW_INFO"
  echo "[siw-guest] rdma link:"
  rdma link show 2>&1 | prefix
  echo "[siw-guest] ibv_devices:"
  ibv_devices 2>&1 | prefix
  if [ "${NODES:-1}" = 2 ]; then
    echo "[siw-guest] node $NODE of 2: siw0 10.80.0.$NODE ($siw_if), rxe0 10.81.0.$NODE ($rxe_if), MTU $MTU;" \
         "peer 10.80.0.$peer / 10.81.0.$peer answers ping"
  else
    echo "[siw-guest] addresses: siw0 10.77.0.1 (dummy0), rxe0 10.78.0.1 (dummy1)"
  fi
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
# Two nodes: node 2 stays up as node 1's peer after its own command succeeded; the host stops it.
if [ "${NODES:-1}" = 2 ] && [ "$NODE" = 2 ] && [ "$rc" = 0 ]; then
  sync
  while :; do sleep 3600; done
fi
power_off
