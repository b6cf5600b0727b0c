#!/bin/sh
# brokersim plan with GNU parallel on one machine (or over ssh with parallel's --sshlogin), one
# round of tasks per stage, until the plan answers.
#
# usage: plan-parallel.sh STAGE_DIR TASKS SCENARIO.json PLAN-OPTIONS...
set -u
dir=${1:?usage: plan-parallel.sh STAGE_DIR TASKS SCENARIO.json PLAN-OPTIONS...}
tasks=${2:?usage: plan-parallel.sh STAGE_DIR TASKS SCENARIO.json PLAN-OPTIONS...}
shift 2
brokersim=${BROKERSIM:-brokersim}
while :; do
  "$brokersim" plan "$@" --stage-dir "$dir" --tasks "$tasks"
  status=$?
  [ $status -eq 7 ] || exit $status
  seq 0 $((tasks - 1)) | parallel -j "$tasks" "$brokersim" plan --run-task "$dir" --task {}/"$tasks" --threads 1 || sleep 1
done
