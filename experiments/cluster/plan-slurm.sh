#!/bin/sh
# brokersim plan over a Slurm job array, one array per stage, until the plan answers.
#
# usage: plan-slurm.sh STAGE_DIR TASKS SCENARIO.json PLAN-OPTIONS...
#   experiments/cluster/plan-slurm.sh /shared/plan-1 16 big.json --vary consumers.0.count=10:200:10 \
#       --target 'wait_ms.sojourn.p99<=120000 in 95% of runs' --precision 0.05 > answer.txt
#
# Run it where sbatch works (a login node); STAGE_DIR must be on a filesystem the compute nodes
# share, at the same path, and so must the scenario. The answer is the plan's stdout, its exit
# status the plan's (0, 3, 5, or 2 for invalid input). Stopped or failed, run it again: it
# resumes (tasks already done are skipped, missing ones run).
set -u
dir=${1:?usage: plan-slurm.sh STAGE_DIR TASKS SCENARIO.json PLAN-OPTIONS...}
tasks=${2:?usage: plan-slurm.sh STAGE_DIR TASKS SCENARIO.json PLAN-OPTIONS...}
shift 2
brokersim=${BROKERSIM:-brokersim}
here=$(cd "$(dirname "$0")" && pwd)
failed=0
waiting=$(mktemp) || exit 1
trap 'rm -f "$waiting"' EXIT
while :; do
  "$brokersim" plan "$@" --stage-dir "$dir" --tasks "$tasks" 2> "$waiting"
  status=$?
  cat "$waiting" >&2
  [ $status -eq 7 ] || exit $status           # 7: a stage's tasks are outstanding
  # The tasks the stage waits for, as the plan lists them ("a Slurm array: --array=1,4"): a
  # failed or killed task leaves its result missing, and only the missing ones run again, up to
  # 3 failed arrays in a row.
  array=$(sed -n 's/.*(a Slurm array: --array=\([0-9,]*\)).*/\1/p' "$waiting")
  [ -n "$array" ] || array=0-$((tasks - 1))
  if sbatch --wait --quiet --array="$array" --output="$dir/slurm-%A-%a.out" \
      --export=ALL,BROKERSIM="$brokersim",STAGE_DIR="$dir" "$here/plan-task.sbatch"; then
    failed=0
  else
    failed=$((failed + 1))
    [ $failed -lt 3 ] || { echo "plan-slurm.sh: 3 arrays in a row failed; see $dir/slurm-*.out" >&2; exit 1; }
  fi
done
