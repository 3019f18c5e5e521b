"""Text formats shared by every stage, each read and written without losing the bytes
around what agentrc touches.

Enters: strings. Leaves: strings, and parsed data with 1-based line/column positions.
`frontmatter` splits markdown files, `yamlpos` parses YAML with positions, `yamlemit`
writes frontmatter, `markdown` normalises bodies, `markedblock` is agentrc's block in a
user's markdown file, `jsonedit` and `tomledit` edit keys of users' JSON(C) and TOML files
in place. Pure.
"""
