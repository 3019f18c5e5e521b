"""Real git repositories for the sources tests: a working repository with commits, tags
and branches, pushed to a bare repository that is served over file://. HOME and the cache
are isolated by `isolated_home`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Dict, Optional

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, **GIT_ENV)
    return subprocess.run(("git",) + args, cwd=str(cwd), env=env, check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE).stdout.decode().strip()


def isolated_home(monkeypatch, tmp_path: Path) -> Path:
    """HOME and XDG_CACHE_HOME in `tmp_path`; the source cache is then tmp_path/cache/agentrc/sources."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("AGENTRC_CACHE_DIR", raising=False)
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    return tmp_path / "cache" / "agentrc" / "sources"


def write(root: Path, files: Dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


class Repo:
    """A working repository `work` and its bare remote `bare` (file://)."""

    def __init__(self, tmp_path: Path, name: str = "registry"):
        self.work = tmp_path / f"{name}-work"
        self.bare = tmp_path / f"{name}.git"
        self.work.mkdir()
        git(self.work, "init", "-q", "-b", "main")
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(self.bare))
        git(self.work, "remote", "add", "origin", str(self.bare))

    @property
    def url(self) -> str:
        return f"file://{self.bare}"

    def served(self) -> None:
        """The bare repository's objects moved behind a link: agentrc then fetches from it
        as from a server (packed, through git's protocol) instead of borrowing its objects
        (`inputs.checkout._local_objects` takes real directories only)."""
        objects = self.bare / "objects"
        objects.rename(self.bare / "objects-real")
        objects.symlink_to("objects-real")

    def commit(self, files: Dict[str, str], message: str = "change", tag: Optional[str] = None,
               remove=()) -> str:
        write(self.work, files)
        for rel in remove:
            (self.work / rel).unlink()
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "-m", message)
        if tag:
            git(self.work, "tag", "-a", tag, "-m", tag)
        git(self.work, "push", "-q", "--all", "origin")
        git(self.work, "push", "-q", "--tags", "origin")
        return git(self.work, "rev-parse", "HEAD")


def skill(name: str, body: str = "Follow the steps.", requires: str = "") -> str:
    return (f"---\nschema: 1\nname: {name}\ndescription: Use when testing {name}.\n{requires}---\n\n"
            f"## Steps\n\n{body}\n")


def rule(name: str, requires: str = "") -> str:
    return f"---\nschema: 1\nname: {name}\ndescription: The {name} rule.\n{requires}---\n\n## Rule\n\nAlways {name}.\n"


def bundle(name: str, items: str, requires: str = "requires: []\n") -> str:
    return f"schema: 1\nname: {name}\ndescription: The {name} bundle.\nitems:\n{items}{requires}"
