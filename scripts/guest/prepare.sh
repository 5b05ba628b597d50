# shellcheck shell=bash
# Builds (once) and finds the cached guest: kernel, module tree with the
# out-of-tree siw.ko, and the busybox initramfs. Sourced by scripts/siw-guest.
#
# Cache layout under $JWARP_GUEST_CACHE_DIR:
#   .jwarp-guest-cache        marker (only such a directory is ever removed)
#   debs/                     downloaded linux-image and linux-source packages
#   <KVER>-<KEY>/             one ready guest; KEY hashes the files that shape it
#     vmlinuz initramfs.cpio.gz root/lib/modules/<KVER>/ siw-info build.log

# Files whose content decides what is in a cache entry.
jwarp_guest_key_files() {
  printf '%s\n' "$JWARP_GUEST_DIR/config.sh" "$JWARP_GUEST_DIR/prepare.sh" "$JWARP_GUEST_DIR/init"
}

jwarp_guest_cache_key() {
  local f
  # shellcheck disable=SC2046
  for f in $(jwarp_guest_key_files); do sha256sum < "$f"; done | sha256sum | cut -c1-12
}

# Modules the initramfs needs to reach the 9p root, in load order.
JWARP_GUEST_INITRD_MODS=(virtio_pci 9pnet_virtio 9p overlay)

_jg_log() { [ -n "${JWARP_GUEST_QUIET:-}" ] || echo "[siw-guest] $*" >&2; }
_jg_die() { echo "siw-guest: ERROR: $*" >&2; exit 125; }

# Removes the cache directory, but only one this runner created.
jwarp_guest_clean() {
  local dir=$1
  [ -e "$dir" ] || return 0
  if [ ! -e "$dir/.jwarp-guest-cache" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    _jg_die "refusing to remove $dir: it is not a jwarp guest cache (no .jwarp-guest-cache marker)"
  fi
  # Runs hold a shared lock on .inuse while their guest is up; wait for them.
  exec 8>>"$dir/.inuse"
  if ! flock -x -n 8; then
    _jg_log "cache $dir is in use by running guests; waiting (up to 30 min) before removing it"
    flock -x -w 1800 8 || _jg_die "cache $dir still in use after 30 min; not removed"
  fi
  _jg_log "removing cache $dir"
  rm -rf -- "$dir"
  exec 8>&-
}

# Marks the cache as in use by this process (and its qemu) until it exits.
jwarp_guest_hold() {
  local dir=$1
  mkdir -p "$dir"
  touch "$dir/.jwarp-guest-cache"
  exec 8>>"$dir/.inuse"
  flock -s 8
}

# jwarp_guest_prepare KVER: makes sure a ready entry exists; sets GUEST_ENTRY.
jwarp_guest_prepare() {
  local kver=$1 cache=$JWARP_GUEST_CACHE_DIR key entry
  key=$(jwarp_guest_cache_key)
  entry=$cache/$kver-$key
  GUEST_ENTRY=$entry
  if [ -f "$entry/ready" ]; then
    touch "$entry/ready"
    return 0
  fi
  mkdir -p "$cache"
  touch "$cache/.jwarp-guest-cache"
  exec 9>"$cache/.lock"
  flock 9
  if [ ! -f "$entry/ready" ]; then
    _jg_log "building guest cache $entry (first run; about a minute)"
    _jg_build "$kver" "$entry" || { exec 9>&-; _jg_die "building the guest cache failed (see above)"; }
  fi
  _jg_prune_old "$cache" "$entry"
  exec 9>&-
}

# Drops entries nobody used for a week.
_jg_prune_old() {
  local cache=$1 keep=$2 d
  for d in "$cache"/*-*/; do
    d=${d%/}
    [ "$d" = "$keep" ] || [ ! -f "$d/ready" ] && continue
    if [ -n "$(find "$d/ready" -mtime +7 2>/dev/null)" ]; then
      _jg_log "removing unused cache entry $d"
      rm -rf -- "$d"
    fi
  done
}

_jg_download() {
  # _jg_download DIR PKG VERSION: prints the path of the .deb
  local dir=$1 pkg=$2 ver=$3 f
  f=$(ls "$dir/${pkg}_${ver//:/%3a}_"*.deb 2>/dev/null | head -n1)
  if [ -z "$f" ]; then
    (cd "$dir" && apt-get download -q "$pkg=$ver") >&2 2>"$dir/apt.log" \
      || { cat "$dir/apt.log" >&2; return 1; }
    f=$(ls "$dir/${pkg}_${ver//:/%3a}_"*.deb 2>/dev/null | head -n1)
  fi
  [ -n "$f" ] || return 1
  printf '%s\n' "$f"
}

# _jg_extract_vmlinux BZIMAGE OUT: writes the uncompressed ELF kernel when the
# payload is xz or gzip and the kernel has a PVH entry note; fails otherwise.
_jg_extract_vmlinux() {
  local bz=$1 out=$2 off magic unpack
  for magic in xz gz; do
    case $magic in
      xz) off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$bz" | head -n1 | cut -d: -f1); unpack=(xz -dc --single-stream) ;;
      gz) off=$(LC_ALL=C grep -obUaP '\x1f\x8b\x08' "$bz" | head -n1 | cut -d: -f1); unpack=(gzip -dc) ;;
    esac
    [ -n "$off" ] || continue
    tail -c +"$((off + 1))" "$bz" | "${unpack[@]}" > "$out" 2>/dev/null
    [ "$(head -c 4 "$out" 2>/dev/null)" = $'\x7fELF' ] || { rm -f "$out"; continue; }
    # XEN_ELFNOTE_PHYS32_ENTRY (18): the PVH entry qemu needs for an ELF -kernel.
    if command -v readelf >/dev/null && ! readelf -n "$out" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; then
      rm -f "$out"; return 1
    fi
    return 0
  done
  return 1
}

_jg_build() {
  local kver=$1 entry=$2 cache=$JWARP_GUEST_CACHE_DIR b ver series img src root moddir t0 log
  t0=$SECONDS
  command -v qemu-system-x86_64 >/dev/null || _jg_die "qemu-system-x86_64 missing: run scripts/setup-guest-deps"
  [ -d "/usr/src/linux-headers-$kver" ] || _jg_die "linux-headers-$kver missing: run scripts/setup-guest-deps"
  [ -x /bin/busybox ] || _jg_die "busybox missing: run scripts/setup-guest-deps (busybox-static)"
  command -v depmod >/dev/null || [ -x /sbin/depmod ] || _jg_die "depmod missing: run scripts/setup-guest-deps (kmod)"
  export PATH="$PATH:/usr/sbin:/sbin"

  ver=$(apt-cache show --no-all-versions "linux-image-$kver" 2>/dev/null | sed -n 's/^Version: //p' | head -n1)
  [ -n "$ver" ] || _jg_die "apt does not know linux-image-$kver (run scripts/setup-guest-deps)"
  series=${kver%%.0-*}                         # 6.1.0-50-amd64 -> 6.1
  mkdir -p "$cache/debs"
  rm -rf "$cache"/.build-*
  b=$(mktemp -d "$cache/.build-XXXXXX")
  chmod 0755 "$b"
  log=$b/build.log

  _jg_log "downloading linux-image-$kver $ver and linux-source-$series $ver"
  img=$(_jg_download "$cache/debs" "linux-image-$kver" "$ver") \
    || img=$(_jg_download "$cache/debs" "linux-image-$kver-unsigned" "$ver") \
    || { echo "siw-guest: cannot download linux-image-$kver=$ver" >&2; return 1; }
  src=$(_jg_download "$cache/debs" "linux-source-$series" "$ver") \
    || { echo "siw-guest: cannot download linux-source-$series=$ver" >&2; return 1; }

  root=$b/root
  moddir=$root/lib/modules/$kver
  dpkg-deb -x "$img" "$root" || return 1
  cp "$root/boot/vmlinuz-$kver" "$b/vmlinuz" || return 1
  # Under TCG, decompressing the bzImage costs the guest 5-10 s per boot; the
  # uncompressed kernel boots at once through its PVH entry point.
  _jg_extract_vmlinux "$b/vmlinuz" "$b/vmlinux" || rm -f "$b/vmlinux"
  # Drivers a headless RDMA guest never loads; saves ~half the disk.
  rm -rf "$moddir/kernel/drivers/gpu" "$moddir/kernel/drivers/media" "$moddir/kernel/sound" \
         "$moddir/kernel/drivers/net/wireless" "$moddir/kernel/drivers/staging" \
         "$moddir/kernel/drivers/bluetooth" "$moddir/kernel/drivers/iio" "$root/usr" "$root/boot"

  _jg_log "building siw.ko from linux-source-$series $ver against linux-headers-$kver"
  mkdir -p "$b/siw"
  dpkg-deb --fsys-tarfile "$src" | tar -x -C "$b" "./usr/src/linux-source-$series.tar.xz" || return 1
  tar -xJf "$b/usr/src/linux-source-$series.tar.xz" -C "$b/siw" --strip-components=5 \
      --wildcards "linux-source-$series/drivers/infiniband/sw/siw/*" || return 1
  rm -rf "$b/usr"
  local cc=gcc
  command -v gcc-12 >/dev/null && cc=gcc-12
  make -C "/usr/src/linux-headers-$kver" M="$b/siw" CONFIG_RDMA_SIW=m CC="$cc" modules >"$log" 2>&1 \
    || { cat "$log" >&2; return 1; }
  [ -f "$b/siw/siw.ko" ] || { cat "$log" >&2; return 1; }
  mkdir -p "$moddir/extra"
  cp "$b/siw/siw.ko" "$moddir/extra/siw.ko"
  local srchash
  srchash=$(cd "$b/siw" && cat ./*.c ./*.h Makefile | sha256sum | cut -c1-16)
  printf 'siw.ko (sha256 %s) built from linux-source-%s %s drivers/infiniband/sw/siw (sources sha256 %s) with %s against linux-headers-%s; vermagic %s\n' \
    "$(sha256sum < "$b/siw/siw.ko" | cut -c1-16)" "$series" "$ver" "$srchash" "$("$cc" --version | head -n1)" "$kver" \
    "$(modinfo -F vermagic "$b/siw/siw.ko" 2>/dev/null | sed 's/ *$//')" > "$b/siw-info"
  rm -rf "$b/siw"
  depmod -b "$root" "$kver" || return 1

  _jg_log "building initramfs"
  local ird=$b/initramfs m line f
  mkdir -p "$ird/bin" "$ird/mods"
  cp /bin/busybox "$ird/bin/busybox"
  cp "$JWARP_GUEST_DIR/init" "$ird/init"
  chmod 0755 "$ird/init"
  : > "$ird/mods/order"
  for m in "${JWARP_GUEST_INITRD_MODS[@]}"; do
    # modprobe prints the insmod lines in dependency order (builtins as "builtin X").
    while read -r line; do
      case $line in
        insmod\ *)
          f=${line#insmod }; f=${f%% *}
          grep -qxF "$(basename "$f")" "$ird/mods/order" && continue
          case $f in *.ko) ;; *) echo "siw-guest: compressed module $f unsupported" >&2; return 1 ;; esac
          cp "$f" "$ird/mods/"
          basename "$f" >> "$ird/mods/order" ;;
      esac
    done < <(modprobe -d "$root" -S "$kver" --show-depends "$m")
    grep -q . "$ird/mods/order" || true
  done
  (cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) > "$b/initramfs.cpio.gz" || return 1
  rm -rf "$ird"

  echo "$kver $ver" > "$b/kernel-info"
  touch "$b/ready"
  rm -rf "$entry"
  mv "$b" "$entry"
  _jg_log "guest cache ready in $((SECONDS - t0))s: $entry ($(du -sh "$entry" | cut -f1))"
}
