#!/bin/sh
# Start one Prefect worker of the `perf` work pool with the shared warehouse's environment (docs/scaling.md).
#   infra/worker/start-worker.sh [/etc/perfcampaign/lake.env]
# PREFECT_API_URL must point at the Prefect server (e.g. http://prefect.internal:4200/api).
set -eu
env_file=${1:-/etc/perfcampaign/lake.env}
[ -r "$env_file" ] || { echo "no environment file $env_file (see infra/worker/lake.env.example)" >&2; exit 1; }
set -a
. "$env_file"
set +a
: "${PREFECT_API_URL:?set PREFECT_API_URL to the Prefect server's API}"
cd "$PERFCAMPAIGN_HOME"
exec .venv/bin/prefect worker start --pool perf --type process
