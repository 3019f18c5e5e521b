"""The examples and the docs link under each command's `--help` (argparse's epilog, laid out
as written): the first thing a newcomer reads after the one-line description."""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Optional

DOCS = "docs/cli/"  # the command pages, in the agentrc repository

_EXAMPLES: Dict[str, str] = {
    "init": """\
  agentrc init                            agentrc.yaml and one sample of each kind, in an empty directory
  agentrc init --import                   beside client files: import them too, without asking""",
    "lint": """\
  agentrc lint ai/                        every problem, with file:line:col and a hint
  agentrc lint ai/ --format json | jq .   the same as one JSON document
  agentrc lint --watch                    again on every save (the project file's paths)""",
    "fmt": """\
  agentrc fmt ai/                         rewrite in canonical form
  agentrc fmt --check ai/                 write nothing; exit 1 if a file would change (CI)""",
    "build": """\
  agentrc build ai/ --out . --client claude,copilot
  agentrc build --check                   exit 1 listing out-of-date files (CI)
  agentrc build ai/ --out . --watch       build again on every save, incrementally""",
    "inspect": """\
  agentrc inspect .                       the canonical document, each part with its origin""",
    "add": """\
  agentrc add owner/repo@v1 --bundle review
  agentrc add ../registry --item skill:pr-summary --client claude,cursor""",
    "install": """\
  agentrc install                         what agentrc.lock.json records, into this project
  agentrc install --frozen                exactly the lock (a fresh clone, CI)""",
    "remove": """\
  agentrc remove review skill:pr-summary""",
    "update": """\
  agentrc update                          every source at what its ref names now
  agentrc update review --dry-run         the commits and files that would change""",
    "outdated": """\
  agentrc outdated                        sources with newer commits or tags""",
    "remove-mcp": """\
  agentrc remove-mcp github""",
    "doctor": """\
  agentrc doctor                          installed files, MCP servers, plugins, capability refs vs the lock""",
    "list": """\
  agentrc list --json""",
    "cap": """\
  agentrc cap install ../team-review
  agentrc cap use team.review
  agentrc cap doctor --soul reviewer""",
    "import": """\
  agentrc import . --from claude --out ai/
  agentrc build ai/ --out . --client claude,cursor""",
    "completion": """\
  agentrc completion bash > ~/.local/share/bash-completion/completions/agentrc
  agentrc completion zsh > "${fpath[1]}/_agentrc"
  agentrc completion fish > ~/.config/fish/completions/agentrc.fish""",
}

_TOP = """\
examples:
  agentrc lint ai/
  agentrc build ai/ --out . --client claude,copilot,opencode
  agentrc COMMAND --help                  a command's flags and examples

docs: docs/index.md, and docs/cli/COMMAND.md for each command (in the agentrc repository)"""


def epilog(command: Optional[str]) -> str:
    """The text under `agentrc [COMMAND] --help`: examples, then where the command's page is."""
    if command is None:
        return _TOP
    examples = _EXAMPLES.get(command)
    page = f"docs: {DOCS}{command}.md (in the agentrc repository)"
    return f"examples:\n{examples}\n\n{page}" if examples else page
