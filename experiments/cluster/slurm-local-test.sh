#!/bin/sh
# A plan run through a real Slurm, compared byte for byte with the same plan run locally.
#
# usage: slurm-local-test.sh BROKERSIM [TASKS [SCENARIO.json PLAN-OPTIONS...]]
#
# Uses the Slurm that answers `sinfo` (SLURM_CONF as set), or, as root with slurmctld, slurmd and
# munged installed (Debian 12: apt-get install slurm-wlm munge), starts a one-node cluster on
# 127.0.0.1 in a scratch folder (proctrack/linuxproc, task/none, select/cons_tres, no cgroup.conf)
# and stops it at the end. Then: the plan locally; the same plan with --stage-dir, each stage's
# tasks run by `sbatch --wait --array=0-(TASKS-1)` (experiments/cluster/plan-task.sbatch), until it
# answers (experiments/cluster/plan-slurm.sh); the two outputs (text and --json) must be the same bytes, and the wall times of both are
# printed. Without a plan of its own (SCENARIO.json PLAN-OPTIONS, paths absolute), a small one of
# three stages is used. Exit 77 (ctest: skipped) when
# no Slurm can be used here, 0 when the outputs agree, 1 when they do not or a step failed.
set -u
brokersim=${1:?usage: slurm-local-test.sh BROKERSIM [TASKS [SCENARIO.json PLAN-OPTIONS...]]}
tasks=${2:-3}
shift $(($# < 2 ? $# : 2))
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
skip() { echo "slurm-local-test: skipped: $*"; exit 77; }

# Set, the test skips: for a machine whose Slurm should not be touched, or a run with no 40 s to spare.
[ -z "${BROKERSIM_SKIP_SLURM_TEST:-}" ] || skip "BROKERSIM_SKIP_SLURM_TEST is set"
command -v sbatch >/dev/null 2>&1 || skip "no sbatch on PATH"
work=$(mktemp -d "${TMPDIR:-/tmp}/brokersim-slurm.XXXXXX") || exit 1
started=""
cleanup() {
  pids=""
  for pidfile in $started; do
    [ -s "$pidfile" ] && pids="$pids $(cat "$pidfile")"
  done
  [ -n "$pids" ] && kill $pids 2>/dev/null
  # Gone before their folder goes: slurmctld saves its state as it stops.
  for i in $(seq 1 40); do
    alive=""
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ -z "$alive" ] && break
    sleep 0.25
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if ! sinfo -h >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || skip "no Slurm answers sinfo, and starting one needs root"
  for daemon in slurmctld slurmd munged; do
    command -v "$daemon" >/dev/null 2>&1 || [ -x "/usr/sbin/$daemon" ] || skip "no $daemon to start"
  done
  PATH=$PATH:/usr/sbin
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    [ -r /etc/munge/munge.key ] || skip "munge has no key (/etc/munge/munge.key)"
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null
    runuser -u munge -- munged >/dev/null 2>&1 || munged --force >/dev/null 2>&1 || skip "munged did not start"
    started="/run/munge/munged.pid"
    sleep 1
  fi
  host=$(hostname)
  mkdir -p "$work/state" "$work/spool"
  cat > "$work/slurm.conf" <<EOF
ClusterName=brokersim-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$work/slurm.conf"
  slurmctld -f "$SLURM_CONF" >/dev/null 2>&1 || skip "slurmctld did not start (is another one running on port 6817?)"
  started="$started $work/slurmctld.pid"
  slurmd -f "$SLURM_CONF" >/dev/null 2>&1 || skip "slurmd did not start"
  started="$started $work/slurmd.pid"
  i=0
  until sinfo -h -o %t 2>/dev/null | grep -q idle; do
    i=$((i + 1))
    [ $i -gt 60 ] && { echo "slurm-local-test: the node did not become idle:"; cat "$work/slurmctld.log"; exit 1; }
    sleep 0.5
  done
fi

if [ $# -eq 0 ]; then
  # A small plan: four consumer counts bisected (three stages).
  scenario="$work/plan.json"
  cat > "$scenario" <<'EOF'
{"name": "slurm-plan", "seed": 3, "stop": {"jobs": 2000},
 "broker": {"queues": {"work": {}}},
 "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 40}}, "deadline_ms": 400,
                "service_ms": {"exp": {"mean": 80}}}],
 "consumers": [{"queue": "work", "count": 2, "prefetch": 1, "slots": 2}]}
EOF
  set -- "$scenario" --vary consumers.0.count=1:4:1 --target 'fraction.completed_on_time>=0.9' --replications 4
fi
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

local_start=$(date +%s.%N)
"$brokersim" plan "$@" > "$work/local.txt"
local_status=$?
local_end=$(date +%s.%N)
case $local_status in 0|3|5) ;; *) echo "slurm-local-test: the local plan failed (exit $local_status)"; exit 1 ;; esac
"$brokersim" plan "$@" --json > "$work/local.json"

# The plan over Slurm by the published driver: the plan, then an array per stage, until it answers.
# Its first stage is begun by hand and only task 0 of it run, as if the others had been killed:
# the driver must find the missing tasks and run just those.
start=$(date +%s.%N)
if [ "$tasks" -gt 1 ]; then
  "$brokersim" plan "$@" --stage-dir "$work/stages" --tasks "$tasks" 2> "$work/first.err"
  [ $? -eq 7 ] || { echo "slurm-local-test: the first stage was not written:"; cat "$work/first.err"; exit 1; }
  sbatch --wait --quiet --array=0 --output="$work/first-%a.out" \
      --export=ALL,BROKERSIM="$brokersim",STAGE_DIR="$work/stages" "$source_dir/experiments/cluster/plan-task.sbatch" ||
    { echo "slurm-local-test: the first task failed:"; cat "$work"/first-*.out; exit 1; }
fi
BROKERSIM="$brokersim" sh "$source_dir/experiments/cluster/plan-slurm.sh" "$work/stages" "$tasks" "$@" \
    > "$work/slurm.txt" 2> "$work/coordinator.err"
status=$?
end=$(date +%s.%N)
[ $status -eq $local_status ] ||
  { echo "slurm-local-test: the plan over Slurm exited $status, the local one $local_status:"; cat "$work/coordinator.err"; exit 1; }
"$brokersim" plan "$@" --json --stage-dir "$work/stages" --tasks "$tasks" > "$work/slurm.json"
stages=$(ls "$work/stages" | grep -c '^stage-[0-9]*\.json$')

if [ "$tasks" -gt 1 ] && ! grep -q "waits for $((tasks - 1)) of its $tasks task(s): 1" "$work/coordinator.err"; then
  echo "slurm-local-test: the driver did not find the first stage's missing tasks:"; cat "$work/coordinator.err"; exit 1
fi
if cmp -s "$work/local.txt" "$work/slurm.txt" && cmp -s "$work/local.json" "$work/slurm.json"; then
  echo "slurm-local-test: the plan over Slurm ($stages stages of $tasks array tasks, $(seconds "$start" "$end") s;" \
    "locally on $(nproc) threads $(seconds "$local_start" "$local_end") s) printed the local plan's bytes (text and --json)"
  exit 0
fi
echo "slurm-local-test: the plan over Slurm differs from the local plan:"
diff "$work/local.txt" "$work/slurm.txt"
diff "$work/local.json" "$work/slurm.json"
exit 1
