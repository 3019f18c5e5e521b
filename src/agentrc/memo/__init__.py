"""Work not repeated: the on-disk memo of parsed and rendered item directories.

Enters: item directories' bytes and the build's options. Leaves: cached `Item`s and
renderings (`cache`, serialized by `codec`), filled in parallel worker processes on a
cold build (`warm`) or by one Pants sandbox process per item directory (`sandbox`).
Reads and writes `$AGENTRC_CACHE_DIR`; forks.
"""
