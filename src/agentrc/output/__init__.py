"""From rendered files to the user's tree.

Enters: adapters' `OutputFile`s and `Fragment`s (`agentrc.files`). `plan` assembles
fragments into files, checks conflicts and collects fidelity reports (pure); `merge`,
`jsonedit` and `tomledit` merge agentrc's keys into config files users also own,
keeping their bytes (pure); `writer` diffs the plan against the output directory and
applies it atomically under the ownership manifest (the one writer to disk).
"""
