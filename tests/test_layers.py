"""The stages import in one direction only (docs/architecture.md): a package may import
the shared top-level modules and the packages before it in LAYERS, never one after it.
A new import against the flow fails here, before it becomes a cycle."""

from __future__ import annotations

import ast

from helpers import ROOT

SRC = ROOT / "src" / "agentrc"
# Earlier packages never import later ones; packages on one line may not import each other.
LAYERS = (
    ("schemas", "text"),
    ("portable",),
    ("canonical", "sources"),
    ("capabilities", "project"),
    ("clients", "importers"),
    ("output",),
    ("memo",),
    ("inputs",),
    ("pipeline", "capops"),
    ("building", "consumer"),
    ("cli", "docgen"),
)
RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "agentrc":
            parts = node.module.split(".")
            yield from ([parts[1]] if len(parts) > 1 else [a.name for a in node.names])
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "agentrc" and len(parts) > 1:
                    yield parts[1]


def test_every_package_is_in_a_layer():
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(RANK), f"add new packages to LAYERS: {sorted(packages ^ set(RANK))}"


def test_imports_follow_the_flow():
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if len(rel.parts) == 1:
            # Shared top-level modules import no stage (agentrc/__main__.py starts the CLI).
            allowed = {"cli"} if rel.name == "__main__.py" else set()
            wrong += [f"{rel} imports agentrc.{m}" for m in _imports(path) if m in RANK and m not in allowed]
            continue
        own = rel.parts[0]
        for m in _imports(path):
            if m in RANK and m != own and RANK[m] >= RANK[own]:
                wrong.append(f"{rel} imports agentrc.{m}")
    assert not wrong, "imports against the flow of docs/architecture.md:\n" + "\n".join(sorted(set(wrong)))


# The modules that fork, as docs/architecture.md names them: a fork copies the whole build,
# so each one is a decision (what the child may touch, who waits for it, what a kill leaves).
FORKING = {"pipeline/warm.py", "output/forked.py", "memo/cache.py"}


def test_only_the_named_modules_fork():
    found = set()
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("fork", "forkpty") and \
                    isinstance(node.value, ast.Name) and node.value.id == "os":
                found.add(path.relative_to(SRC).as_posix())
    assert found == FORKING, "forks outside the modules docs/architecture.md names: update both"
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert all(f"`{m[:-3]}`" in text for m in FORKING)
