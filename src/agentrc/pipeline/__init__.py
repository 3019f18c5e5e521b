"""Orchestration shared by the CLI and the Pants backend.

`stages` is the pure chain load -> check references -> select -> plan (what makes
`pants package` and `agentrc build` byte-identical); `build` is the whole `agentrc build`
transaction (no-change stamp, memo, warm rendering, plan, report, write) returning data
for the shell to print; `fmt` is the formatting loop both `agentrc fmt` and `pants fmt`
run. Front ends call these and only parse flags and print.
"""
