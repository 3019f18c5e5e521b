#!/bin/sh
set -eu
kubectl -n staging rollout restart "deploy/$1"
