"""pickle's functions, taken from its C accelerator without importing `pickle` itself.

`pickle.dumps` and `pickle.loads` are `_pickle`'s functions on CPython; importing `pickle`
to reach them also runs its pure-Python Pickler's module body and a failed search for
Jython's `org.python.core` along the whole module path: about 1 ms of a replayed one-edit
build at 1,000 items, which reads the memo's entries and its replay record and uses nothing
else of `pickle` (issue 36: an edit within 1.5 times a build with nothing to do). Where
`_pickle` is missing (an interpreter without it), the same names come from `pickle`. The
bytes and their reading are the same either way.
"""

try:
    from _pickle import dump, dumps, load, loads
except ImportError:  # pragma: no cover - every CPython agentrc supports has it
    from pickle import dump, dumps, load, loads

# pickle.HIGHEST_PROTOCOL on every Python agentrc runs on (3.8 added protocol 5).
PROTOCOL = 5

__all__ = ["PROTOCOL", "dump", "dumps", "load", "loads"]
