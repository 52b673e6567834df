#!/usr/bin/env bash
# make up: a whole sharq cluster on this machine, in the foreground, from
# contrib/examples/local.toml. Ctrl-C stops it and removes its containers.
# The logic is in internal/localcluster (bin/sharq-up); this script only
# installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(id -u)" != 0 ]; then
  echo "make up: run it as root (sudo make up): it starts containerd, makes device files and runs jobs as another user" >&2
  exit 1
fi
missing=()
for p in containerd runc busybox-static util-linux; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  cat >&2 <<MSG
make up: installing Debian packages: ${missing[*]}
  containerd, runc  run the jobs' containers (make up runs a private containerd
                    of its own, not the system service the package sets up)
  busybox-static    the one binary of the small local job image (no registry needed)
  util-linux        setpriv and runuser, to run commands as the demo user
MSG
  contrib/local/install-deps.sh
fi
exec bin/sharq-up --repo . "$@"
