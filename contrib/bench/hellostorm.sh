#!/usr/bin/env bash
# Hello storm (issue 28): a real sharqctld with NODES nodes over mutual TLS
# (a CA and the controller's certificate made with openssl, as README's HA
# setup makes them; hellostorm issues the nodes' from that CA), all of them
# connecting at once; then the controller is killed with SIGKILL and
# started again, and all of them reconnect at once. For each round it
# prints how long until every node was welcomed, how many tries were
# refused, and how long from the last welcome to the first start order (a
# job submitted once the nodes are up: the first scheduling pass that
# places it). Run as root from the repository root; traffic stays on
# loopback (127.0.0.0/8, one address per node).
#   contrib/bench/hellostorm.sh [NODES]
set -euo pipefail
nodes=${1:-1000}
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/sharq-storm-XXXX)
chmod 755 "$tmp"
ctld=""
storm=""
trap '[ -n "$storm" ] && kill "$storm" 2>/dev/null; [ -n "$ctld" ] && kill "$ctld" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$repo"
go build -o "$tmp/bin/" ./cmd/sharqctld ./contrib/bench/hellostorm
CGO_ENABLED=0 go build -o "$tmp/bin/" ./cmd/qsub

# The CA and the controller's certificate, naming its address.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=bench-ca \
  -keyout "$tmp/ca.key" -out "$tmp/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=ctl \
  -keyout "$tmp/ctl.key" -out "$tmp/ctl.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$tmp/ctl.ext"
openssl x509 -req -in "$tmp/ctl.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial -days 1 \
  -extfile "$tmp/ctl.ext" -out "$tmp/ctl.pem" 2>/dev/null

port=$((20000 + RANDOM % 20000))
last=$(printf '%04d' "$nodes")
cat >"$tmp/cluster.toml" <<TOML
[cluster]
name = "storm"
spool_dir = "$tmp/spool"
socket = "$tmp/s.sock"
listen = "127.0.0.1:$port"
controller = "127.0.0.1:$port"
secret_file = "$tmp/secret"
tls_cert = "$tmp/ctl.pem"
tls_key = "$tmp/ctl.key"
tls_ca = "$tmp/ca.pem"
[[partition]]
name = "gpu"
nodes = "g[0001-$last]"
default_image = "img"
[[node]]
names = "g[0001-$last]"
gpus = 8
[[share]]
name = "a"
gpus = $((nodes * 8))
users = ["*"]
TOML
(umask 077; echo storm-secret >"$tmp/secret")
start_ctld() {
  "$tmp/bin/sharqctld" --config "$tmp/cluster.toml" --log-level warn 2>>"$tmp/ctld.log" &
  ctld=$!
  for _ in $(seq 100); do [ -S "$tmp/s.sock" ] && return; sleep 0.1; done
  echo "sharqctld did not start:" >&2; cat "$tmp/ctld.log" >&2; exit 1
}
mkdir -p "$tmp/work" && chown 1000:1000 "$tmp/work"
submit() {
  (cd "$tmp/work" && setpriv --reuid=1000 --regid=1000 --clear-groups env -i PATH=/usr/bin:/bin HOME="$tmp/work" \
    SHARQ_SOCKET="$tmp/s.sock" "$tmp/bin/qsub" -q a -l ngpus=1 -- true >/dev/null)
}
wait_round() {
  for _ in $(seq 1200); do [ "$(cat "$tmp/ready" 2>/dev/null)" = "$1" ] && return; kill -0 "$storm" 2>/dev/null || break; sleep 0.1; done
  echo "round $1 did not complete" >&2; exit 1
}

echo "== $nodes nodes over mutual TLS (one certificate and one loopback address each)"
start_ctld
"$tmp/bin/hellostorm" -addr "127.0.0.1:$port" -ca "$tmp/ca.pem" -ca-key "$tmp/ca.key" -secret "$tmp/secret" \
  -nodes "$nodes" -prefix g -rounds 2 -ready "$tmp/ready" &
storm=$!
wait_round 1
submit
sleep 1
echo "== kill -9 of sharqctld, started again at once (as systemd does)"
kill -9 "$ctld"
wait "$ctld" 2>/dev/null || true
rm -f "$tmp/s.sock"
start_ctld
wait_round 2
submit
wait "$storm"
storm=""
