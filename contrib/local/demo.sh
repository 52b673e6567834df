#!/usr/bin/env bash
# make demo: a narrated tour of sharq on the local cluster (make up), in
# about a minute: lending and borrowing idle GPUs between teams, cross-share
# preemption with a checkpoint and a resume, and in-share preemption. It
# uses the cluster that make up runs, or starts one in the background and
# stops it at the end. Every step runs the real commands and shows them.
set -euo pipefail
cd "$(dirname "$0")/../.."

SOCK=/run/sharq-local/sharq.sock
CLIENTS=/var/lib/sharq-local/bin
UPLOG=/var/lib/sharq-local/log/make-up.log
DEMO_USER=sharqdemo
export SHARQ_SOCKET=$SOCK LANG=C

if [ "$(id -u)" != 0 ]; then
  echo "make demo: run it as root (sudo make demo), like make up" >&2
  exit 1
fi
if [ -t 1 ]; then B=$'\e[1m' D=$'\e[2m' R=$'\e[0m'; else B= D= R=; fi

say() { printf '%s\n' "$@"; }
step() { printf '\n%s== %s ==%s\n' "$B" "$*" "$R"; }
# show runs a command as root and shows it.
show() { printf '%s# %s%s\n' "$D" "$*" "$R"; "$@" 2>&1 | sed 's/^/  /'; }
# as runs a client command as the demo user in its demo directory.
as() { (cd "$WORK" && runuser -u "$DEMO_USER" -- env SHARQ_SOCKET="$SOCK" PATH="$CLIENTS:/usr/bin:/bin" "$@"); }
# user shows a command as the demo user runs it, and runs it.
user() { printf '%s%s$ %s%s\n' "$D" "$DEMO_USER" "$*" "$R"; as "$@" 2>&1 | sed 's/^/  /'; }
# submit submits as the demo user, shows it, and sets $JOB to the id.
submit() { printf '%s%s$ qsub %s%s\n' "$D" "$DEMO_USER" "$*" "$R"; JOB=$(as qsub "$@"); echo "  $JOB"; }
field() { "$CLIENTS/qstat" -f -x "$1" 2>/dev/null | sed -n "s/^ *$2 = //p"; }
# wait_state ID STATE...: until the job is in one of the states (90 s).
wait_state() {
  local id=$1; shift
  for _ in $(seq 450); do
    local st; st=$(field "$id" job_state)
    for want in "$@"; do [ "$st" = "$want" ] && return 0; done
    sleep 0.2
  done
  echo "make demo: job $id did not reach state $* in 90s:" >&2
  "$CLIENTS/qstat" -f -x "$id" >&2 || true
  exit 1
}
# wait_output FILE TEXT: until the job's output file has TEXT (60 s).
wait_output() {
  for _ in $(seq 300); do grep -q "$2" "$WORK/$1" 2>/dev/null && return 0; sleep 0.2; done
  echo "make demo: no \"$2\" in $WORK/$1 after 60s" >&2; exit 1
}
out() { echo "$1.o${2%%.*}"; } # NAME ID -> the job's output file

# --- the cluster: the running make up, or one started here ---------------
started=""
JOBS=()
cleanup() {
  set +e
  trap '' PIPE INT TERM # finish the cleanup even if the terminal or pipe went away
  if [ ${#JOBS[@]} -gt 0 ]; then as qdel "${JOBS[@]}" >/dev/null 2>&1; fi
  if [ -n "$started" ]; then
    echo
    echo "Stopping the local cluster this demo started ..."
    kill -TERM "$started" 2>/dev/null
    for _ in $(seq 600); do kill -0 "$started" 2>/dev/null || break; sleep 0.2; done
    grep -E '^(Stopped|sharq-up:)' "$UPLOG" | sed 's/^/  /'
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'exit 141' PIPE

if ! bin/qstat -Q >/dev/null 2>&1; then
  echo "No local cluster is up; starting one (make up) in the background. Its output: $UPLOG"
  mkdir -p "$(dirname "$UPLOG")"
  setsid contrib/local/up.sh </dev/null >"$UPLOG" 2>&1 &
  started=$! # setsid and up.sh exec: this pid becomes sharq-up's
  for _ in $(seq 900); do
    grep -q ' is up' "$UPLOG" 2>/dev/null && break
    if ! kill -0 "$started" 2>/dev/null; then
      started=""
      echo "make demo: make up failed:" >&2; tail -n 25 "$UPLOG" >&2; exit 1
    fi
    sleep 0.2
  done
  grep -q ' is up' "$UPLOG" || { echo "make demo: make up not ready after 3 minutes:" >&2; tail -n 25 "$UPLOG" >&2; exit 1; }
fi
if ! id "$DEMO_USER" >/dev/null 2>&1; then
  echo "make demo: no user $DEMO_USER: was this cluster started by make up?" >&2; exit 1
fi
for _ in $(seq 60); do [ -z "$("$CLIENTS/qstat" 2>/dev/null)" ] && break; sleep 0.5; done
if [ -n "$("$CLIENTS/qstat" 2>/dev/null)" ]; then
  echo "make demo: the cluster already has jobs (qstat); the demo needs it idle. Wait for them or qdel them." >&2
  exit 1
fi
WORK=$(getent passwd "$DEMO_USER" | cut -d: -f6)/demo
# Job ids start at 1 in every make up: clear the last demo's output files.
rm -rf "$WORK"
runuser -u "$DEMO_USER" -- mkdir -p "$WORK"
cat >"$WORK/train.sh" <<'JOB'
#!/bin/sh
# A training job that checkpoints: on SIGTERM it saves the step it reached
# and ends the run; the next run resumes from the checkpoint.
ck=$SHARQ_CHECKPOINT_DIR/step
step=0
if [ -f "$ck" ]; then
  step=$(cat "$ck")
  echo "run $SHARQ_RESTART_COUNT: resumed from the checkpoint at step $step, on GPUs $CUDA_VISIBLE_DEVICES"
else
  echo "run 0: started on GPUs $CUDA_VISIBLE_DEVICES"
fi
trap 'echo $step > "$ck"; echo "run $SHARQ_RESTART_COUNT: SIGTERM at step $step: checkpoint saved, exiting"; exit 0' TERM
while :; do sleep 1 & wait $!; step=$((step + 1)); done
JOB
cat >"$WORK/short.sh" <<'JOB'
#!/bin/sh
echo "$PBS_JOBNAME: on GPUs $CUDA_VISIBLE_DEVICES"
sleep "${SECONDS_TO_RUN:-15}"
echo "$PBS_JOBNAME: done"
JOB
chown "$DEMO_USER:" "$WORK"/*.sh && chmod 755 "$WORK"/*.sh
export PATH=$CLIENTS:$PATH

# --- the tour -----------------------------------------------------------------
step "sharq in one minute"
say "sharq is a batch system for GPU clusters. Each team has a share: a quota of" \
    "GPUs, and a strategy for its idle ones: RESERVE (keep them), LEND (let other" \
    "teams borrow them) or LEND_AND_BORROW (also borrow from others)." \
    "This cluster: one node with 8 fake GPUs, three shares (qsub -q picks one)." \
    "Jobs are submitted by the ordinary user $DEMO_USER, in $WORK" \
    "(the controller refuses jobs from root)."
show qstat -Q

step "1. Team vision borrows the idle GPUs of team nlp"
say "vision's quota is 4 GPUs. It starts train-a on 4 GPUs, then train-b on 3" \
    "more: nlp's idle GPUs, which nlp lends. infra's GPU is RESERVE: never lent." \
    "train.sh saves a checkpoint on SIGTERM and resumes from it when restarted." \
    "Their owner lowers both to sharq priority 10 (the share's default is 100)," \
    "so that an urgent job of the team may preempt them later. (PBS's qsub -p" \
    "only orders a share's queue; it never lets a job preempt another.)"
submit -q vision -N train-a -l ngpus=4 train.sh; A=$JOB; JOBS+=("$A")
wait_state "$A" R
submit -q vision -N train-b -l ngpus=3 train.sh; B2=$JOB; JOBS+=("$B2")
wait_state "$B2" R
user sharqctl job priority "$A" 10
user sharqctl job priority "$B2" 10
wait_output "$(out train-b "$B2")" "run 0"
sleep 5
show qstat -Q
show qstat -a

step "2. Team nlp takes its GPUs back: cross-share preemption"
say "nlp submits a 3-GPU job. nlp is under its quota, so sharq reclaims its" \
    "lent GPUs: the borrowing job, train-b, gets SIGTERM, has preempt_grace (10s" \
    "here) to save a checkpoint, and goes back to the queue."
submit -q nlp -N finetune -l ngpus=3 -v SECONDS_TO_RUN=15 short.sh; F=$JOB; JOBS+=("$F")
wait_state "$F" R
wait_state "$B2" Q
show qstat -a
show qstat -Q
user cat "$(out train-b "$B2")"

step "3. The borrower resumes from its checkpoint"
say "finetune runs for 15 seconds. When it ends, nlp's GPUs are idle again and" \
    "train-b borrows them again: its second run resumes where the first stopped."
wait_state "$F" F
wait_state "$B2" R
wait_output "$(out train-b "$B2")" "run 1"
sleep 3
user cat "$(out train-b "$B2")"
show qstat -Q

step "4. An urgent job of team vision: in-share preemption"
say "vision submits an urgent 3-GPU job at the share's default priority. vision" \
    "already uses more than its quota, so it may not take GPUs from other teams;" \
    "but its share has in_share_preemption: sharq preempts one of vision's own" \
    "lower-priority jobs instead. Both are at 10; train-b was preempted once" \
    "already and train-a never, so train-a goes: sharq spreads preemptions."
submit -q vision -N urgent -l ngpus=3 -v SECONDS_TO_RUN=10 short.sh; U=$JOB; JOBS+=("$U")
wait_state "$U" R
wait_state "$A" Q
show qstat -a
wait_state "$U" F
wait_state "$A" R
wait_output "$(out train-a "$A")" "run 1"
say "" "urgent finished; train-a is back, from its checkpoint:"
user cat "$(out train-a "$A")"

step "5. What happened to train-a and train-b"
for id in "$A" "$B2"; do
  printf '%s# qstat -f %s | grep history%s\n' "$D" "$id" "$R"
  qstat -f "$id" | awk '$1 ~ /^history\./ { printf "  %-11s %s ", $1, $6; for (i = 8; i <= NF; i++) printf " %s", $i; print "" }'
done
show qstat -x -a
as qdel "${JOBS[@]}" >/dev/null 2>&1 || true
JOBS=()

step "Done"
say "Try it yourself: su - $DEMO_USER, then qsub, qstat -a, qstat -Q, qdel" \
    "(README.md has a tour). The demo's job files are in $WORK." \
    "The shares are in contrib/examples/local.toml; after editing it," \
    "sharqctl reconfigure applies it to the running cluster."
