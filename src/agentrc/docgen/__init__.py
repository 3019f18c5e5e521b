"""Generated documentation (`python -m agentrc.docgen`): error codes and per-client
mapping tables built from the code itself (the code registry and the client adapters),
so the docs cannot drift from what agentrc does.
"""
