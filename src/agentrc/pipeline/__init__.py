"""Orchestration shared by the CLI and the Pants backend.

`stages` is the pure chain load -> check references -> select -> plan -> package (what
makes `pants package` and `agentrc build` byte-identical); `build` is the whole
`agentrc build` transaction (no-change stamp, memo, warm rendering, plan, report, write)
returning data for the shell to print; `fmt` is the formatting run of `agentrc fmt`,
`pants fmt` and lint; `warm` renders item directories in worker processes on a cold build
and `sandbox` is the entry point of one Pants sandbox process per item directory. Front
ends call these and only parse flags and print.
"""
