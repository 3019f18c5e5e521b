"""A verb of the capability workflow as a plan of small steps run by the one executor of
`output.steps` (issue 35), on the model of Poetry's installer: each step is a small object that
does one thing (`do`) and knows how to take it back (`undo`); `run` does them in order and, when
one fails, undoes the done ones in reverse, then reraises what failed.

Some of what a spawn does cannot always be taken back: a compensating retire hook may fail,
a worktree may stay registered. An undo that does not finish says so in the `Undone` record
(what stays `incomplete`, which hooks and git steps are `outstanding`); the steps still to
undo see it (a home that holds what a retry needs is kept, not removed), and when anything is
left the plan's `quarantine` writes the kernel's cleanup marker, so either tool's retire
retries it. An undo that raises is recorded the same way, never lost.

`cap install`, `update` and `remove` change a scope through the journaled transaction of
`txn` instead: everything they write is staged, so one rename undoes or completes them.
"""

from __future__ import annotations

from agentrc.output import steps

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Sequence


class Undone:
    """What undoing a failed plan could not finish: messages for the operator (`incomplete`),
    the capabilities whose retire hook still owes cleanup and the git steps owed
    (`outstanding`, `git`: the kernel's cleanup descriptor), and a path a step could not
    remove (`left`, for the operator to remove by hand)."""

    def __init__(self) -> None:
        self.incomplete: List[str] = []
        self.outstanding: List[str] = []
        self.git: List[str] = []
        self.left = ""


class Step:
    """One thing a plan does, and how to take it back. `undo` runs only for a step whose `do`
    returned; it records in `undone` what it could not take back."""

    name = "step"

    def do(self) -> None:
        raise NotImplementedError

    def undo(self, undone: Undone) -> None:
        """Nothing to take back (a step that only reads, or writes inside what an earlier
        step's undo removes)."""


class _Executed(steps.Step):
    """A step of this workflow as the one executor (`output.steps`) runs it: its undo is
    given the plan's `Undone` record, and an undo that raises is recorded there, never lost."""

    def __init__(self, step: Step, undone: Undone):
        self.step, self.undone = step, undone
        self.kind = step.name

    def do(self) -> None:
        self.step.do()

    def undo(self) -> None:
        try:
            self.step.undo(self.undone)
        except Exception as why:  # noqa: BLE001 - an undo that raised is recorded, never lost
            self.undone.incomplete.append(f"{self.step.name}: could not be undone ({str(why)[:200]})")


def run(plan: Sequence[Step], quarantine: Optional[Callable[[Exception, Undone], None]] = None,
        failed: Optional[Callable[[Exception, Undone], None]] = None) -> None:
    """Do `plan` in order through the one executor. When a step raises (an Exception: an
    interrupt leaves things as they are), the done ones are undone in reverse (the failing
    step cleans up after itself); when an undo did not finish, `quarantine` records it (the
    cleanup marker); then `failed` may raise what the verb reports, else what failed is
    reraised."""
    undone = Undone()
    try:
        steps.run([_Executed(s, undone) for s in plan], undo_failed=False, interrupts=False)
    except steps.Failed as exc:
        cause = exc.cause
        assert isinstance(cause, Exception)  # interrupts=False: only an Exception is caught
        if undone.incomplete and quarantine is not None:
            quarantine(cause, undone)
        if failed is not None:
            failed(cause, undone)
        raise cause from None


class Call(Step):
    """A step that is one function and has nothing to take back (it moves forward only: a
    retire's steps, whose failure keeps the home with its marker instead)."""

    def __init__(self, name: str, fn: Callable[[], None]):
        self.name = name
        self.fn = fn

    def do(self) -> None:
        self.fn()
