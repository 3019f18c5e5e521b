"""Work not repeated: the on-disk memo of parsed and rendered item directories.

Enters: the memo directory of a build (under `$AGENTRC_CACHE_DIR`: an index and packs of
entries) and what the pipeline puts in it, keyed by content digests (`agentrc.fingerprint`).
Leaves: cached `Item`s and renderings, read entry by entry, rendered files as digests
(`cache`), serialized for the Pants sandbox processes by `codec`. Reads and
writes the cache directory; the workers that fill it live in `agentrc.pipeline.warm`.
"""
