#!/usr/bin/env bash
# CI on a busy machine: a fresh clone of REF runs .ci/run (CI=true) while two CPU-bound processes run
# beside it, one per core of a 2-core machine; prints the wall time, the load average and the result.
#
#   scripts/ci_under_load.sh [REF] [REPOSITORY]     (defaults: HEAD of the repository holding this script)
#
# The clone lives in a temporary folder and is removed at the end (its .venv is large); the log of the
# run is kept and named in the last line. Exit status: that of .ci/run (2 for a bad REF or repository).
# Nothing in the test suite may depend on wall-clock time, so this run differs from a quiet one only in
# how long it takes.
set -uo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
ref="${1:-HEAD}"
repository="${2:-$here}"
if ! commit="$(git -C "$repository" rev-parse --verify --quiet "${ref}^{commit}")"; then
  echo "ci_under_load: error: no commit ${ref@Q} in repository ${repository@Q}" >&2
  exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/specmath-ci-load.XXXXXX")"
log="${work}.log"
burners=()
cleanup() {
  for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${burners[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

git clone --quiet --no-hardlinks "$repository" "$work/specmath" && git -C "$work/specmath" checkout --quiet --detach "$commit" \
  || { echo "ci_under_load: error: could not clone $repository at $commit" >&2; exit 2; }

# two CPU burners, as two other jobs on a 2-core machine would be
for _ in 1 2; do
  python3 -c 'while True: pass' &
  burners+=("$!")
done
echo "ci_under_load: $(git -C "$work/specmath" log -1 --format='%h %s' | cut -c1-80)"
echo "ci_under_load: .ci/run in $work/specmath beside ${#burners[@]} CPU burners (pids ${burners[*]}); log: $log"

start=$(date +%s)
( cd "$work/specmath" && CI=true .ci/run ) > "$log" 2>&1
status=$?
seconds=$(( $(date +%s) - start ))
read -r load1 load5 load15 _ < /proc/loadavg

grep -E "^(=+ .*(passed|failed|error).* =+|[0-9]+ (passed|failed).*)$" "$log" | tail -n 4
printf 'ci_under_load: commit %s: .ci/run exit %d in %dm%02ds beside 2 CPU burners; load average at the end %s %s %s (%s CPUs); log: %s\n' \
  "${commit:0:7}" "$status" $((seconds / 60)) $((seconds % 60)) "$load1" "$load5" "$load15" "$(nproc)" "$log"
exit "$status"
