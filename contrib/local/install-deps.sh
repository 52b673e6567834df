#!/usr/bin/env bash
# Installs Debian's packages that sharq's tests and local cluster need:
#   containerd, runc   run the jobs' containers
#   busybox-static     the one binary in the small local image (no registry needed)
#   util-linux         setpriv, to run commands as another user
#   munge              MUNGE (identity across hosts): munged, and the munge and
#                      unmunge commands the tests check interoperability with
#                      (sharq speaks munged's socket protocol: no libmunge)
#   iproute2           ip netns and veth pairs for the multi-host test
# and, with --test (make deps, CI), what only the tests need:
#   postgresql-15      the job history tests start a private PostgreSQL cluster
#   prometheus         the dashboard and alert-rule tests scrape a real sharqctld
#   snakemake          the workflow test runs Snakemake's cluster mode on sharq (image "host")
#   faketime           a munged with its clock shifted, for rewound and expired credentials
#   man-db, groff-base the make install test renders every installed manual page (man --warnings)
#   qemu-system-x86    runtime/hostproc's tests run once more in a virtual machine whose memory
#                      cgroups are in the other mode (v2 on a v1 host, v1 on a v2 host), with
#                      Debian's kernel unpacked (not installed) to /usr/local/lib/sharq/test-vmlinuz
# Run as root. Installs nothing that is already there.
set -euo pipefail
pkgs=(containerd runc busybox-static util-linux munge iproute2)
if [ "${1:-}" = --test ]; then
  pkgs+=(postgresql-15 prometheus snakemake faketime qemu-system-x86 man-db groff-base)
fi
need=()
for p in "${pkgs[@]}"; do
  # (a removed package still answers dpkg -s; ask for "installed")
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: need root to install: ${need[*]}" >&2
    exit 1
  fi
  echo "install-deps: installing ${need[*]} (Debian packages) ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The guest kernel for runtime/hostproc's virtual machine test: Debian's, from its package,
# unpacked without installing it (no initramfs, no boot loader change).
kernel=/usr/local/lib/sharq/test-vmlinuz
if [ "${1:-}" = --test ] && [ ! -s "$kernel" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: need root to fetch the test kernel" >&2
    exit 1
  fi
  kernel_pkg() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'; }
  dl=$(mktemp -d)
  pkg=$(kernel_pkg)
  if [ -z "$pkg" ] || ! (cd "$dl" && apt-get download -qq "$pkg" 2>/dev/null); then
    apt-get update -qq   # package lists missing or stale
    pkg=$(kernel_pkg)
    (cd "$dl" && apt-get download -qq "$pkg" 2>/dev/null)
  fi
  dpkg-deb --fsys-tarfile "$dl"/*.deb | tar -x -C "$dl" --wildcards './boot/vmlinuz-*'
  install -D -m 644 "$dl"/boot/vmlinuz-* "$kernel"
  rm -rf "$dl"
  echo "install-deps: unpacked the kernel of $pkg to $kernel" >&2
fi
