# shellcheck shell=bash
# Shared settings of the jwarp guest runner (sourced by scripts/siw-guest and
# scripts/setup-guest-deps). Changing this file changes the cache key.

# Debian kernel ABI the guest boots. Pinned so every machine and CI run tests
# against the same kernel; linux-source-6.1 must be the same upload (6.1.176-1)
# because siw.ko is built from it. Override with JWARP_GUEST_KVER; the value
# "auto" follows whatever linux-image-amd64 depends on.
JWARP_GUEST_KVER_PINNED=6.1.0-50-amd64

# Debian packages the runner needs on the host.
JWARP_GUEST_BASE_PKGS=(
  qemu-system-x86 busybox-static cpio kmod xz-utils gzip util-linux coreutils
  rdma-core ibverbs-utils rdmacm-utils perftest iproute2
  gcc-12 make
)
# Extra packages for the project's own CI: JNI headers and tshark for captures.
JWARP_GUEST_DEV_PKGS=(libibverbs-dev librdmacm-dev)
JWARP_GUEST_TSHARK_PKGS=(tshark)

# Resolve the kernel ABI to use; prints it on stdout. An explicit
# JWARP_GUEST_KVER is used as given. The pinned ABI is used while apt still
# offers it; once it has left the archive, this warns loudly and follows
# linux-image-amd64 instead, so a user's CI keeps working (the guest prints the
# kernel it booted).
jwarp_guest_resolve_kver() {
  local want=${JWARP_GUEST_KVER:-}
  if [ -z "$want" ]; then
    want=$JWARP_GUEST_KVER_PINNED
    if ! apt-cache show "linux-image-$want" >/dev/null 2>&1 \
       && apt-cache show linux-image-amd64 >/dev/null 2>&1; then
      echo "siw-guest: WARNING: pinned kernel linux-image-$want is not available from apt;" \
           "using the one linux-image-amd64 depends on (set JWARP_GUEST_KVER to choose)" >&2
      want=auto
    fi
  fi
  if [ "$want" = auto ]; then
    want=$(apt-cache depends linux-image-amd64 2>/dev/null \
             | sed -n 's/^ *Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -n1)
    [ -n "$want" ] || { echo "siw-guest: cannot resolve linux-image-amd64 (run apt-get update)" >&2; return 1; }
  fi
  printf '%s\n' "$want"
}
