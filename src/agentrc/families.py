"""Source-family identifiers (spec 001 §3.1, §6.1) and the override suffixes (§2.3).

A family names who reads a piece of content: `audience:` lists and `<!-- @client: -->`
directives use families. Client adapters declare the family they render for; adapters
added later (cursor, gemini, ...) extend the known set through the client registry.
"""

SPEC_FAMILIES = ("claude", "copilot", "codex", "opencode")
