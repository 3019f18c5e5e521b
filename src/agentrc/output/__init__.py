"""From rendered files to the user's tree.

Enters: adapters' `OutputFile`s and `Fragment`s (`agentrc.files`). `plan` renders the
items through the adapters, assembles fragments into files, checks conflicts and collects
fidelity reports (pure); `merge` merges agentrc's keys into config files users also own,
keeping their bytes (pure, through `agentrc.text.jsonedit`/`tomledit`); `writer` diffs the
plan against the output directory and applies it atomically under the ownership manifest
(the one writer to disk), composed of one module per job of a write: `tree` (the one way to
the disk), `fsync`, `manifest` (its parsing and bytes), `recorded`, `directory` (opening,
locking), `diffing`, `staging`, `commit` (the roll-forward) and `recovery`; `atomic` writes a
single file outside an output tree; `imports` records what each client's import wrote.
"""
