#!/usr/bin/env sh
# Lists the commits of the current branch that are not on the base branch.
set -eu
base="${1:-main}"
git log --oneline "$base"..HEAD
