#!/bin/sh
cat >/dev/null
echo "$(date) $PWD" >> .cursor/audit.log
