"""Safe reading (issue 9, docs/security.md "What agentrc reads"): every surface that parses
YAML is bounded, every file read stays inside its root and is a regular file of bounded
size, and an ai.config.js runs in Node's permission model with a timeout and no
environment. Each hostile input gives a coded diagnostic quickly, never a traceback."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.text import yamlpos

# Nine aliases of nine aliases, nine levels: 9**9 values once expanded.
LAUGHS = "".join(["  a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"]
                 + [f"  {chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n"
                    for i in range(8)])
DEEP = "  x: " + "[" * 5000 + "]" * 5000 + "\n"


def write(root: Path, files: dict) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


def run(args, capsys):
    start = time.monotonic()
    code = main(args)
    elapsed = time.monotonic() - start
    out = capsys.readouterr()
    return code, out.out + out.err, elapsed


# --- YAML bounds ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [f"m:\n{LAUGHS}", f"m:\n{DEEP}", "- " * 50000 + "x\n"],
                         ids=["laughs", "deep", "dashes"])
def test_yaml_bounds_raise_ar009_quickly(text):
    start = time.monotonic()
    with pytest.raises(yamlpos.YamlError) as info:
        yamlpos.load(text)
    assert info.value.code == "AR009"
    assert time.monotonic() - start < 0.5


def test_yaml_aliases_within_bounds_still_load():
    located = yamlpos.load("tools: &t [read, grep]\nagain: *t\nmore: *t\n")
    assert located.data == {"tools": ["read", "grep"], "again": ["read", "grep"], "more": ["read", "grep"]}


def _frontmatter(extra: str, **fields) -> str:
    head = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\n{head}metadata:\n{extra}---\n\nBody.\n"


SURFACES = {
    # surface: (files, CLI arguments)
    "skill": ({"r/skills/x/SKILL.md": _frontmatter(LAUGHS, name="x", description="d")}, ["lint", "r"]),
    "bundle": ({"r/b.bundle.yaml": f"schema: 1\nname: b\ndescription: d\nmetadata:\n{LAUGHS}"},
               ["lint", "r/b.bundle.yaml"]),
    "fmt": ({"r/rules/x/RULE.md": _frontmatter(LAUGHS, description="d")}, ["fmt", "--check", "r"]),
    "config-yaml": ({"p/ai.config.yaml": f"metadata:\n{LAUGHS}"}, ["lint", "p"]),
    "ai-dir": ({"p/.ai/rules/x/prompt.md": _frontmatter(DEEP, description="d")}, ["lint", "p"]),
    "preset": ({"p/ai.config.json": '{"presets": ["./base"]}',
                "p/base/skills/x/SKILL.md": _frontmatter(LAUGHS, name="x", description="d")}, ["lint", "p"]),
    "import": ({"c/.claude/agents/x.md": _frontmatter(LAUGHS, name="x", description="d")},
               ["import", "c", "--from", "claude", "--out", "o"]),
}


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_every_yaml_surface_is_bounded(surface, tmp_path, monkeypatch, capsys):
    files, args = SURFACES[surface]
    write(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    code, out, elapsed = run(args, capsys)
    assert code == 1 and "[AR009]" in out, out
    assert elapsed < 1.0
