"""The project file `agentrc.yaml`: one project's agentrc settings, read once, used by
every command (pure: bytes in, `ProjectFile` and diagnostics out; finding and reading
it is `agentrc.inputs.projectfile`'s job)."""

FILE_NAME = "agentrc.yaml"
