"""Work not repeated: the on-disk memo of parsed and rendered item directories.

Enters: the memo file of a build (under `$AGENTRC_CACHE_DIR`) and what the pipeline puts
in it, keyed by content digests (`agentrc.fingerprint`). Leaves: cached `Item`s and
renderings (`cache`), serialized for the Pants sandbox processes by `codec`. Reads and
writes the cache directory; the workers that fill it live in `agentrc.pipeline.warm`.
"""
