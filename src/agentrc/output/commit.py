"""Committing a write: the plan's renames, deletions and pruning, then the new manifest.

Everything here follows from the plan's data alone and is idempotent, so the run that staged
the write and a later run finishing it after a kill (`recovery`) do the same steps: roll
forward. The steps are `writesteps`', run by the one executor, `output.steps`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from agentrc.output import steps, writesteps
from agentrc.output.directory import PARALLEL_MIN, _Directory, _note
from agentrc.output.manifest import _manifest_bytes
from agentrc.output.tree import (
    _FS_ERRORS,
    _NO_HARD_LINKS,
    JOURNAL,
    MANIFEST,
    MAX_TREE_DEPTH,
    STATE,
    TXN,
    _NotDir,
    _Symlink,
    _Unsafe,
    sha,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Optional, Set


class _Committing(_Directory):
    """The roll-forward: a journal carried out."""

    def _roll_forward(self, journal: dict, fresh: bool = False) -> List[str]:
        """Carry out the staged write `journal` (its data, written beside the executor's
        journal as `writesteps.CHUNK`): the plan of `writesteps` run by `output.steps`, whose
        commit point is the first step. Returns the paths of files that appeared where agentrc
        was creating one (kept, and dropped from the manifest). Raises `NotCommitted` for a
        failure before the point (nothing visible changed), else the failure itself (the
        journal kept: the next run completes the write). `fresh`: this run staged the files
        a moment ago, under the lock, so every staged file is still there."""
        tree = self.tree
        assert tree is not None
        ctx = writesteps.Context(self, journal, fresh)
        plan = writesteps.plan_of(ctx)
        record = steps.Journal(os.path.join(self.root, TXN, JOURNAL), self.root, writesteps.LABEL)
        try:
            steps.run(plan, record, interrupts=False, go_on=False)
        except steps.Failed as exc:
            if exc.undone:
                raise writesteps.NotCommitted(exc.cause) from None
            raise exc.cause from None
        except _FS_ERRORS as exc:  # writing the journal itself: committed once the point is marked done
            if not (record.entries and record.entries[0]["state"] == steps.DONE):
                raise writesteps.NotCommitted(exc) from None
            raise
        return ctx.conflicts

    def _put_all(self, puts: List[dict], start: int, end: int, txn: int, staged: Optional[Set[str]],
                 unsynced: Set[str], touched: Set[str], fresh: bool) -> List[str]:
        """`puts[start:end]` moved into place (the second half by a forked child, in a large
        fresh write); the paths that appeared meanwhile (kept)."""
        # Imported here: a build with nothing to write never forks (docs/architecture.md).
        from agentrc.output import forked

        tree = self.tree
        assert tree is not None
        conflicts: List[str] = []
        count = end - start
        cut = count // 2 if fresh and self.jobs > 1 and count >= PARALLEL_MIN else count

        def mine(first: int, last: int) -> None:
            lost = self._put_range(puts, start + first, start + last, txn, staged, unsynced, touched)
            conflicts.extend(puts[k]["path"] for k in lost)

        def theirs(first: int, last: int, records: memoryview) -> None:
            # A share of the puts, and the directories it changed made durable before this
            # child leaves (the parent writes the manifest once it has).
            for k in self._put_range(puts, start + first, start + last, txn, staged, unsynced, touched):
                records[k - start - first] = 1
            self.where = ""
            tree.flush()
            self._fsync_dirs(sorted(unsynced))

        try:
            lost = forked.run(count, cut, 1, mine, theirs)
        except forked.Failed as exc:  # where: the file it failed on, else where it was
            if exc.index >= 0:
                self.where = puts[exc.index]["path"]
            raise exc.original from None
        if lost is not None:
            conflicts.extend(puts[start + cut + k]["path"] for k in range(count - cut) if lost[k])
        return conflicts

    def _delete(self, deletes: List[dict], unsynced: Set[str], touched: Set[str]) -> None:
        """The journal's deletions: each file that still has the sha256 it had when planned."""
        tree = self.tree
        assert tree is not None
        for entry in deletes:
            path = self.where = entry["path"]
            st = tree.lstat(path)
            if st is None or not stat.S_ISREG(st.st_mode):
                continue
            current = tree.read(path)
            if current is not None and sha(current) == entry["sha"]:
                pfd, name = tree.parent(path)
                os.unlink(name, dir_fd=pfd)
                _note(path.rpartition("/")[0], unsynced, touched)

    def _prune(self, prune: List[str], unsynced: Set[str], touched: Set[str]) -> None:
        """The journal's directories agentrc made and no longer needs, removed when empty."""
        tree = self.tree
        assert tree is not None
        for d in prune:
            self.where = d
            try:
                fd = tree.dir(d)
            except _Unsafe:  # a link (or a file) put there since: never followed, never removed
                continue
            if fd is None or os.listdir(fd):
                continue  # gone already, or holds something (of the user's): kept
            tree.forget(d)
            pfd, name = tree.parent(d)
            try:
                os.rmdir(name, dir_fd=pfd)
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ENOTEMPTY, errno.EEXIST):
                    raise
            _note(d.rpartition("/")[0], unsynced, touched)

    def _write_manifest(self, txn: int, manifest: dict, conflicts: List[str]) -> None:
        """The new manifest, last: the bytes `_stage` serialised, unless files were kept."""
        tree = self.tree
        assert tree is not None
        self.where = MANIFEST
        state = tree.dir(STATE)
        with contextlib.suppress(FileNotFoundError):
            os.unlink("manifest.tmp", dir_fd=txn)
        ready, self.staged_manifest = self.staged_manifest, None
        data = ready if ready is not None and not conflicts else _manifest_bytes(manifest)
        tree.write_new(txn, "manifest.tmp", data, 0o644, True)
        os.replace("manifest.tmp", "manifest.json", src_dir_fd=txn, dst_dir_fd=state)
        self.manifest, self.manifest_raw = None, None

    def _put_range(self, puts: List[dict], start: int, end: int, txn: int, staged: Optional[Set[str]],
                   unsynced: Set[str], touched: Set[str]) -> List[int]:
        """Carry out `puts[start:end]` of a journal: each staged file linked (a new file,
        never replacing one) or renamed (an update) into place; the indices of the new files
        whose names another file took meanwhile (kept, not agentrc's). The directories whose
        entries change are noted in `unsynced` (and with their ancestors in `touched`)."""
        # Imported here: a build with nothing to write never forks (docs/architecture.md).
        from agentrc.output import forked

        tree = self.tree
        assert tree is not None
        lost: List[int] = []
        # The directory of the previous put, and its descriptor: the files of a directory come
        # one after the other, and nothing between two puts opens a directory (which could
        # close that descriptor), so each directory is looked up once per run of its files.
        last: Optional[str] = None
        pfd: Optional[int] = None
        for k in range(start, end):
            put = puts[k]
            path, tmp = put["path"], put["tmp"]
            self.where = path
            try:
                if staged is not None and tmp not in staged:
                    continue  # moved into place before the interruption
                d, _, name = path.rpartition("/")
                if d != last or pfd is None:
                    pfd = tree.dir(d, create=True)
                    assert pfd is not None
                    last = d
                    _note(d, unsynced, touched)
                if put["create"]:
                    if not self._link_new(txn, tmp, pfd, name):
                        lost.append(k)
                else:
                    os.replace(tmp, name, src_dir_fd=txn, dst_dir_fd=pfd)
            except (OSError, _Unsafe) as exc:
                raise forked.Failed(exc, k) from None
        return lost

    def _place(self, src: str, dst: str, unsynced: Set[str], touched: Set[str], lost: List[str],
               depth: int = 0) -> None:
        """Staged directory `src` as directory `dst`: renamed into place when nothing is
        there (the one step a staged tree takes), else merged into what is: each staged
        directory placed in turn, and each staged file linked as a new one (`_link_new`: a
        file whose name another took meanwhile is kept and not agentrc's, `lost`). A
        link or a file where a directory is to be is refused, as for a single file."""
        tree = self.tree
        assert tree is not None
        sparent, _, sname = src.rpartition("/")
        parent, _, name = dst.rpartition("/")
        pfd = tree.dir(parent, create=True)
        assert pfd is not None
        _note(parent, unsynced, touched)
        spfd = tree.dir(sparent)
        staged = os.stat(sname, dir_fd=spfd, follow_symlinks=False) if spfd is not None else None
        if staged is None or not stat.S_ISDIR(staged.st_mode):  # a journal may name anything
            raise (_Symlink(src) if staged is not None and stat.S_ISLNK(staged.st_mode) else _NotDir(src))
        try:
            os.stat(name, dir_fd=pfd, follow_symlinks=False)
        except FileNotFoundError:
            tree.forget(src)  # its descriptors name it where it was
            pfd = tree.dir(parent)  # opened again if looking up `sparent` let it go
            assert pfd is not None
            os.rename(sname, name, src_dir_fd=tree.dir(sparent), dst_dir_fd=pfd)
            return
        if depth >= MAX_TREE_DEPTH:
            raise OSError(errno.ELOOP, f"more than {MAX_TREE_DEPTH} directories deep", src)
        tree.dir(dst)  # a link or a file in the way is refused here (`_Tree.dir`)
        sfd = tree.dir(src)
        assert sfd is not None
        for entry in sorted(os.listdir(sfd)):
            self.where = f"{dst}/{entry}"
            sfd = tree.dir(src)
            assert sfd is not None
            st = os.stat(entry, dir_fd=sfd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                self._place(f"{src}/{entry}", f"{dst}/{entry}", unsynced, touched, lost, depth + 1)
                continue
            if not stat.S_ISREG(st.st_mode):
                continue  # not staged by agentrc: removed with the staging directory
            dfd = tree.dir(dst, create=True)
            sfd = tree.dir(src)
            assert dfd is not None and sfd is not None
            _note(dst, unsynced, touched)
            if not self._link_new(sfd, entry, dfd, entry):
                lost.append(f"{dst}/{entry}")

    def _link_new(self, sfd: int, tmp: str, dfd: int, name: str) -> bool:
        """Staged file `tmp` (in directory `sfd`) put in place as the new file `name` (in
        `dfd`): hard-linked, never replacing a file, then its staged name removed. Whether
        it is in place; False when another file took the name (kept, and not agentrc's)."""
        try:
            os.link(tmp, name, src_dir_fd=sfd, dst_dir_fd=dfd, follow_symlinks=False)
            linked = True
        except OSError as exc:
            linked = self._not_linked(exc, sfd, tmp, dfd, name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=sfd)
        return linked

    @staticmethod
    def _not_linked(exc: OSError, txn: int, tmp: str, pfd: int, name: str) -> bool:
        """After the hard link of a new file failed with `exc` (`_link_new`: a link never
        replaces a file): whether the file is in place all the same (linked before a crash,
        or renamed where there are no hard links); raises `exc` when it is neither a name
        taken nor a file system without links. False when another file took the name."""
        if isinstance(exc, FileExistsError):
            staged = os.stat(tmp, dir_fd=txn, follow_symlinks=False)
            there = os.stat(name, dir_fd=pfd, follow_symlinks=False)
            return (there.st_dev, there.st_ino) == (staged.st_dev, staged.st_ino)  # linked before a crash
        if exc.errno not in _NO_HARD_LINKS:
            raise exc
        # A file system without hard links: rename, after checking the name is free.
        try:
            os.stat(name, dir_fd=pfd, follow_symlinks=False)
            return False
        except FileNotFoundError:
            os.rename(tmp, name, src_dir_fd=txn, dst_dir_fd=pfd)
            return True
