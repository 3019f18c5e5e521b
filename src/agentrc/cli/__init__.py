"""The `agentrc` command line: one module per command.

Each module parses its flags, calls `agentrc.pipeline` (or the importers), and prints
diagnostics and summaries. No domain rule lives here.
"""
