#!/bin/sh
# brokersim plan over Kubernetes indexed Jobs (plan-task-job.yaml), one Job per stage, until the
# plan answers. Run it where the stage folder is mounted at the path the Job's pods see it
# (/plans/plan-1 in the YAML; the scenario under /plans too) and kubectl works.
#
# usage: plan-k8s.sh STAGE_DIR TASKS SCENARIO.json PLAN-OPTIONS...   (TASKS: the YAML's completions)
set -u
dir=${1:?usage: plan-k8s.sh STAGE_DIR TASKS SCENARIO.json PLAN-OPTIONS...}
tasks=${2:?usage: plan-k8s.sh STAGE_DIR TASKS SCENARIO.json PLAN-OPTIONS...}
shift 2
brokersim=${BROKERSIM:-brokersim}
here=$(cd "$(dirname "$0")" && pwd)
while :; do
  "$brokersim" plan "$@" --stage-dir "$dir" --tasks "$tasks"
  status=$?
  [ $status -eq 7 ] || exit $status
  kubectl delete job brokersim-plan-stage --ignore-not-found --wait=true >/dev/null
  kubectl apply -f "$here/plan-task-job.yaml" >/dev/null || exit 1
  kubectl wait --for=condition=complete --timeout=24h job/brokersim-plan-stage >/dev/null || sleep 5
done
