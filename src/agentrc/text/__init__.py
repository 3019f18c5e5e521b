"""Text formats shared by every stage: frontmatter splitting, YAML positions and
emission, markdown normalisation.

Enters: strings. Leaves: strings, parsed data with 1-based line/column positions. Pure.
"""
