#!/usr/bin/env bash
# The device check (issue 24): on a machine with a CUDA GPU, every package's `paper` dry run on the GPU,
# then each `medium` config, within one time limit; logs and a summary go into OUT_DIR.
set -uo pipefail

usage() {
  cat <<'EOF'
Usage: tools/device_check.sh [--device cuda|cpu] [--no-medium] OUT_DIR TIME_LIMIT_S [SLUG ...]

  OUT_DIR        folder for the logs (OUT_DIR/<slug>/paper-dry-run.log, medium.log), the medium results
                 (OUT_DIR/results/<slug>/medium/results.json, laid out as the repository's results/),
                 platform.txt and summary.tsv; created if absent
  TIME_LIMIT_S   wall-clock seconds for everything: each command gets what is left, and what does not
                 start in time is listed as "not run: time limit"
  SLUG ...       the packages (default: every packages/*), in that order
  --device       the dry runs' device (default: cuda; cpu to try the script on a machine without a GPU)
  --no-medium    only the paper dry runs

Each package runs with the first command found of: $ICML26 (one `icml26` for all), .venvs/<slug>/bin/icml26
(tools/ci.py <slug> makes it), .venv/bin/icml26 (make setup). Exit 0 when every command that ran exited 0.
EOF
}

device=cuda
medium=1
while [[ $# -gt 0 && $1 == -* ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --device) device=${2:-}; shift 2 || { echo "device_check.sh: --device needs a value (cuda or cpu)" >&2; exit 2; } ;;
    --no-medium) medium=0; shift ;;
    *) echo "device_check.sh: option $1: expected --device, --no-medium or --help" >&2; exit 2 ;;
  esac
done
if [[ $# -lt 2 ]]; then
  echo "device_check.sh: expected OUT_DIR TIME_LIMIT_S [SLUG ...] (got $# arguments); see --help" >&2
  exit 2
fi
out=$1
limit=$2
shift 2
if [[ ! $limit =~ ^[0-9]+$ || $limit -lt 1 ]]; then
  echo "device_check.sh: TIME_LIMIT_S='$limit': expected a whole number of seconds >= 1" >&2
  exit 2
fi
if [[ $device != cuda && $device != cpu ]]; then
  echo "device_check.sh: --device='$device': expected cuda or cpu" >&2
  exit 2
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ $# -gt 0 ]]; then
  slugs=("$@")
else
  slugs=()
  for dir in "$root"/packages/*/; do slugs+=("$(basename "$dir")"); done
fi
for slug in "${slugs[@]}"; do
  if [[ ! -d $root/packages/$slug ]]; then
    echo "device_check.sh: SLUG='$slug': expected a folder of $root/packages" >&2
    exit 2
  fi
done
mkdir -p "$out" || { echo "device_check.sh: OUT_DIR='$out': expected a folder this user can create" >&2; exit 2; }

deadline=$((SECONDS + limit))
summary=$out/summary.tsv
printf 'paper\tstep\tstatus\tseconds\tlast line\n' >"$summary"
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -a
  nvidia-smi 2>&1 || echo "nvidia-smi: not available"
} >"$out/platform.txt"

icml26_for() {  # the icml26 command for package $1, or nothing
  if [[ -n ${ICML26:-} ]]; then echo "$ICML26"
  elif [[ -x $root/.venvs/$1/bin/icml26 ]]; then echo "$root/.venvs/$1/bin/icml26"
  elif [[ -x $root/.venv/bin/icml26 ]]; then echo "$root/.venv/bin/icml26"
  fi
}

failed=0
step() {  # step SLUG NAME LOG ARGS...: one command within the time left, one row of the summary
  local slug=$1 name=$2 log=$3 cmd status last start
  shift 3
  mkdir -p "$(dirname "$log")"
  cmd=$(icml26_for "$slug")
  local left=$((deadline - SECONDS))
  if [[ -z $cmd ]]; then
    status="no environment (set ICML26, or run tools/ci.py $slug)"
    failed=1
  elif [[ $left -lt 5 ]]; then
    status="not run: time limit"
  else
    start=$SECONDS
    timeout --kill-after=10 "$left" $cmd run "$slug" "$@" >"$log" 2>&1
    local code=$?
    case $code in
      0) status=ok ;;
      124 | 137) status="timed out after $((SECONDS - start)) s"; failed=1 ;;
      *) status="exit $code"; failed=1 ;;
    esac
  fi
  last=$([[ -f $log ]] && tail -n 1 "$log" | tr '\t' ' ')
  printf '%s\t%s\t%s\t%s\t%s\n' "$slug" "$name" "$status" "$((SECONDS - ${start:-$SECONDS}))" "$last" >>"$summary"
  echo "$slug $name: $status"
}

for slug in "${slugs[@]}"; do
  step "$slug" paper-dry-run "$out/$slug/paper-dry-run.log" --config paper --dry-run --device "$device"
done
if [[ $medium == 1 ]]; then
  for slug in "${slugs[@]}"; do
    if grep -qsE '^\s*"medium"\s*:' "$root/packages/$slug"/src/*/experiment.py; then  # a CONFIGS key
      step "$slug" medium "$out/$slug/medium.log" --config medium --out "$out/results"
    fi
  done
fi
echo "summary: $summary"
exit $failed
