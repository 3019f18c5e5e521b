"""Reading a registry resolves real paths once per root and symlink, not once per file."""

from __future__ import annotations

import os

from agentrc.inputs import tree


def test_a_walk_resolves_real_paths_per_root_and_symlink_not_per_file(tmp_path, monkeypatch):
    reg = tmp_path / "reg"
    for i in range(40):
        d = reg / "rules" / f"r{i}"
        d.mkdir(parents=True)
        (d / "RULE.md").write_text(f"rule {i}\n")
    (reg / "rules" / "r0" / "alias.md").symlink_to("RULE.md")
    outside = tmp_path / "secret.md"
    outside.write_text("no\n")
    (reg / "rules" / "r1" / "leak.md").symlink_to(outside)
    calls = []
    real = os.path.realpath
    monkeypatch.setattr(tree.os.path, "realpath", lambda p, *a: calls.append(p) or real(p, *a))
    read = tree.read_tree([str(reg)])
    paths = [f.path for f in read.tree.files]
    assert len(paths) == 41 and f"{reg}/rules/r0/alias.md" in paths
    assert [d.code for d in read.diagnostics] == ["AR050"]  # the link out is still resolved and refused
    # Root(), the walk's start and the two symlinks; it was one per file besides (43).
    assert len(calls) == 4, calls
