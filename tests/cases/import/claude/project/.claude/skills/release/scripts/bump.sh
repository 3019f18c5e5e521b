#!/usr/bin/env bash
set -euo pipefail
pnpm version "$1" --no-git-tag-version
