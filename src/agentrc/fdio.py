"""Writing a whole buffer to a file descriptor.

`os.write` may write less than it is given (large buffers, pipes, a signal): the writer's
staged files, its journal, the spill, the memo's spool and the workers' channels each
looped over the rest with a copy of the same loop. One write is the common case, so a
memoryview is made only after a short one.
"""

from __future__ import annotations

import os
from typing import Union

Buffer = Union[bytes, bytearray, memoryview]


def write_all(fd: int, data: Buffer) -> None:
    """All of `data` written to `fd` at its position; an OSError of a write is raised."""
    done = os.write(fd, data)
    if done < len(data):
        view = memoryview(data)[done:]
        while view:
            view = view[os.write(fd, view):]
