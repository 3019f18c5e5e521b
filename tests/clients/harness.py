"""One harness for the per-client tests: small registries written as dicts, built through the
real pipeline, and the fidelity outcomes of one item read back."""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import yaml

from agentrc.pipeline import stages as pipeline
from agentrc.model import Kind, SourceFile, SourceTree


def tree(files: Dict[str, str]) -> SourceTree:
    return SourceTree(tuple(SourceFile(p, t.encode(), p.endswith(".sh")) for p, t in sorted(files.items())))


def item(kind: str, name: str, frontmatter: str, body: str = "Body text.\n",
         extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """An item directory `reg/<kind>s/<name>/` with its entrypoint and supporting files."""
    files = {f"reg/{kind}s/{name}/{Kind(kind).entrypoint}": f"---\nschema: 1\n{frontmatter}---\n\n{body}"}
    for rel, text in (extra or {}).items():
        files[f"reg/{kind}s/{name}/{rel}"] = text
    return files


def plan(files: Dict[str, str], clients: Sequence[str], **kwargs):
    return pipeline.generate(tree(files), list(clients), **kwargs)


def build(files: Dict[str, str], clients: Sequence[str], **kwargs):
    """The plan (which must be free of errors) and its files' text by path."""
    result = plan(files, clients, **kwargs)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result, {f.path: f.content.decode() for f in result.files}


def fields(result, kind: str, name: str, client: str):
    report = next(r for r in result.reports if (r.client, r.kind, r.name) == (client, kind, name))
    return {f.field: (f.status, f.detail) for f in report.fields}


def frontmatter(text: str) -> dict:
    assert text.startswith("---\n")
    return yaml.safe_load(text[4:text.index("\n---\n", 4)])
