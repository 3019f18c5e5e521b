#!/usr/bin/env python3
import json, sys
command = json.load(sys.stdin).get("tool_input", {}).get("command", "")
if "rm -rf /" in command:
    print("refusing a destructive command", file=sys.stderr)
    sys.exit(2)
