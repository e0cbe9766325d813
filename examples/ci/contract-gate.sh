#!/usr/bin/env bash
# The contract gate for API teams: run it in CI (or as a pre-commit hook) in the repository that
# holds your contracts. For every contract file that differs from the base branch it
#   1. validates the file, with the LLM-ready rule for new MCP endpoints (--v2 --against the old file),
#   2. diffs it against the base branch's version (a breaking change needs a major version bump),
#      which includes the N/N-1 check: the old version's examples must still be valid calls.
# With a lockfile and a store configured (COLONNADE_DATABASE_URL), it also checks the lock for drift.
#
#   BASE=origin/main CONTRACTS=contracts examples/ci/contract-gate.sh
set -euo pipefail

BASE="${BASE:-origin/main}"
CONTRACTS="${CONTRACTS:-contracts}"
COLONNADE="${COLONNADE:-colonnade}"
LOCK="${LOCK:-colonnade.lock}"
status=0
old_dir="$(mktemp -d)"
trap 'rm -rf "$old_dir"' EXIT

changed="$(git diff --name-only --diff-filter=AM "$BASE" -- "$CONTRACTS" | grep -E '\.(ya?ml|json)$' || true)"
for file in $changed; do
  old="$old_dir/$(basename "$file")"
  if git show "$BASE:$file" > "$old" 2>/dev/null; then
    echo "== $file (against $BASE)"
    "$COLONNADE" contract validate --v2 --against "$old" "$file" || status=1
    "$COLONNADE" contract diff "$old" "$file" || status=1
  else
    echo "== $file (new)"
    "$COLONNADE" contract validate --v2 "$file" || status=1
  fi
done

if [[ -f "$LOCK" && -n "${COLONNADE_DATABASE_URL:-}" ]]; then
  "$COLONNADE" contract check --lock "$LOCK" || status=1
fi
exit "$status"
