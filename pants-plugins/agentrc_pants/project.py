"""The project file `agentrc.yaml` in Pants: the clients a target builds for when it sets no
`clients=` are the nearest project file's above it (the CLI's rule: walking up to the top,
which in Pants is the build root), else `[agentrc].clients`.

Read hermetically, through the engine (`PathGlobs` of each directory's `agentrc.yaml` from
the target's up to the build root), parsed by the core (`agentrc.project.model`): one rule
per directory, memoised, so every target of a directory shares one read.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Optional, Tuple

from pants.engine.fs import DigestContents, PathGlobs
from pants.engine.rules import Get, collect_rules, rule

from agentrc.clients import names as client_names
from agentrc.codes import CODES
from agentrc.model import IgnoreList
from agentrc.project import FILE_NAME
from agentrc.project.model import parse_file
from agentrc_pants.subsystem import AgentrcSubsystem


@dataclass(frozen=True)
class ProjectClientsRequest:
    directory: str  # a target's spec_path ("" for the build root)


@dataclass(frozen=True)
class ProjectClients:
    clients: Tuple[str, ...]  # empty: no project file above names clients
    path: str = ""  # the project file read ("" when none)
    shares: bool = True  # its `shared-copies` (on without a project file)
    ignore: IgnoreList = IgnoreList()  # its `ignore:` (a registry's package writes the ignore files)


class AgentrcProjectFileError(Exception):
    """The nearest agentrc.yaml cannot be used; the message is its diagnostics."""


def _above(directory: str) -> Tuple[str, ...]:
    parts = [p for p in directory.split("/") if p and p != "."]
    return tuple(posixpath.join(*parts[:i], FILE_NAME) if i else FILE_NAME for i in range(len(parts), -1, -1))


@rule(desc="Read the agentrc project file")
async def project_clients(request: ProjectClientsRequest) -> ProjectClients:
    contents = await Get(DigestContents, PathGlobs(_above(request.directory)))
    if not contents:
        return ProjectClients(())
    nearest = max(contents, key=lambda fc: fc.path.count("/"))
    try:
        text = nearest.content.decode("utf-8")
    except UnicodeDecodeError:
        raise AgentrcProjectFileError(f"{nearest.path}: not UTF-8") from None
    project, problems = parse_file(text, nearest.path, client_names.CLIENTS, tuple(CODES))
    if project is None:
        raise AgentrcProjectFileError("\n".join(d.format() for d in problems))
    return ProjectClients(project.clients, nearest.path, project.shares, project.ignore)


def pick(field_value: Optional[Tuple[str, ...]], project: ProjectClients,
         subsystem: AgentrcSubsystem) -> Tuple[str, ...]:
    """A target's clients: its own `clients=`, else the nearest project file's, else
    `[agentrc].clients`."""
    if field_value:
        return tuple(field_value)
    return project.clients or tuple(subsystem.clients)


def rules():
    return collect_rules()
