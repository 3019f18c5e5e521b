#!/bin/sh
# Blocks commands that would print well-known secret variables.
if grep -Eq 'printenv|echo .*\$(AWS_SECRET|GITHUB_TOKEN)'; then
  echo "blocked: the command would print a secret" >&2
  exit 2
fi
exit 0
