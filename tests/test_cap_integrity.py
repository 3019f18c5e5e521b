"""Integrity values of spec 003 computed by agentrc equal the OAS kernel's on the same trees,
and reading capability trees stays inside them (containment, links, misplaced capabilities).

The kernel is the judge here: its hash functions run in Node on the very trees agentrc hashes
(`lib/core.mjs` is imported by the test only; agentrc does not depend on it)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from agentrc.capabilities import integrity
from agentrc.capabilities.model import Capability, Hook
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree
from helpers import ROOT

KERNEL = (ROOT.parent / "shared" / "judges" / "oas-kernel").resolve()  # as the kernel names its own files
needs_kernel = pytest.mark.skipif(not (KERNEL / "lib" / "core.mjs").exists() or not shutil.which("node"),
                                  reason="the OAS kernel (../shared/judges/oas-kernel) and node are needed")


def _kernel_hashes(paths):
    script = ("const m = await import(process.argv[1]);"
              "console.log(JSON.stringify(process.argv.slice(2).map((d) => "
              "[m.packageIntegrity(d), m.capabilityArtifactIntegrity(d)])));")
    out = subprocess.run(["node", "--input-type=module", "-e", script, str(KERNEL / "lib" / "core.mjs"),
                          *map(str, paths)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def _tree(root: Path, seed: int) -> Path:
    """A tree with the names and kinds that make an order or a hash differ: case, punctuation,
    digits, dots, nested and empty directories, links (to files, to directories, dangling,
    absolute), node_modules at two depths, a root oas-lock.json, an empty and a binary file."""
    rnd = random.Random(seed)
    alphabet = "aAbBzZ09._-~!@+,=()[]{}'$&#%^`;"
    names = set()
    while len(names) < 24:
        names.add("".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 6))).strip(" ").lstrip("-") or "x")
    names.discard(".")
    names.discard("..")
    root.mkdir()
    for i, name in enumerate(sorted(names)):
        if i % 4 == 0:
            (root / name).mkdir()
            (root / name / f"{name}.md").write_bytes(os.urandom(rnd.randint(0, 64)))
            (root / name / "Skill.MD").write_text("x")
        elif i % 4 == 1:
            (root / name).write_bytes(b"")
        else:
            (root / name).write_bytes(bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 300))))
    (root / "empty-dir").mkdir()
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "i.js").write_text("1")
    (root / "sub" / "node_modules").mkdir(parents=True)
    (root / "sub" / "node_modules" / "x").write_text("2")
    (root / "sub" / "a.txt").write_text("a")
    (root / "oas-lock.json").write_text("{}")
    (root / "sub" / "oas-lock.json").write_text("{}")
    os.symlink("sub/a.txt", root / "link-file")
    os.symlink("sub", root / "link-dir")
    os.symlink("nowhere", root / "link-dangling")
    os.symlink("/etc/hostname", root / "link-abs")
    return root


@needs_kernel
def test_tree_hashes_equal_the_kernels(tmp_path):
    trees = [_tree(tmp_path / f"t{seed}", seed) for seed in range(4)]
    capabilities = sorted((KERNEL / "capabilities").iterdir())
    expected = _kernel_hashes(trees + capabilities)
    ours = [[captree.tree_hash(str(t), payload=True), captree.tree_hash(str(t))] for t in trees + capabilities]
    assert ours == expected
    assert all(p != a for p, a in ours[:4])  # the payload variant did leave something out


def test_the_digest_of_contents_equals_the_tree_hash(tmp_path):
    """integrity.tree_digest (what the Pants backend computes from digests) gives the hash of
    the tree on disk, whatever order the entries come in."""
    for seed in range(4):
        root = _tree(tmp_path / f"t{seed}", seed)
        entries = [(rel, kind, os.fsencode(os.readlink(full)) if kind == integrity.SYMLINK else Path(full).read_bytes())
                   for rel, kind, full in captree.walk(str(root))]
        random.Random(seed).shuffle(entries)
        for payload in (False, True):
            assert integrity.tree_digest(entries, payload=payload) == captree.tree_hash(str(root), payload=payload)


@needs_kernel
def test_name_order_is_javascripts_localecompare(tmp_path):
    rnd = random.Random(7)
    printable = [chr(c) for c in range(32, 127) if chr(c) != "/"]
    names = list({"".join(rnd.choice(printable) for _ in range(rnd.randint(1, 8))) for _ in range(3000)})
    names += ["SKILL.md", "skills", "Skills", "a-b", "ab", "a_b", "a.b", "A", "a", "_", "-", "10", "9", "é"[:0] + "z"]
    out = subprocess.run(["node", "-e", "const n = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
                          "console.log(JSON.stringify(n.sort((a, b) => a.localeCompare(b))));"],
                         input=json.dumps(names), check=True, capture_output=True, text=True).stdout
    assert sorted(names, key=integrity.collation_key) == json.loads(out)


def test_a_name_outside_printable_ascii_is_refused(tmp_path):
    (tmp_path / "caf\u00e9").write_text("x")
    with pytest.raises(captree.TreeError) as exc:
        captree.tree_hash(str(tmp_path))
    assert exc.value.code == "AR157"


def test_a_fifo_is_refused_not_read(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(captree.TreeError):
        captree.tree_hash(str(tmp_path))


def _contained(tmp_path, cap):
    d = Diagnostics()
    captree.check_contained(str(tmp_path / "cap"), cap, "oas.json", d)
    return sorted((x.code, x.message) for x in d.items)


def test_declared_paths_stay_inside_the_capability(tmp_path):
    cap_dir = tmp_path / "cap"
    (cap_dir / "skills" / "one").mkdir(parents=True)
    (cap_dir / "skills" / "one" / "SKILL.md").write_text("x")
    (cap_dir / "bin").mkdir()
    (cap_dir / "bin" / "h.sh").write_text("x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("x")
    good = Capability("a.b", "1", "d", skills=("skills",), hooks=(Hook("spawn", "bin/h.sh spawn"),))
    assert _contained(tmp_path, good) == []
    os.symlink("../../../outside/secret.md", cap_dir / "skills" / "one" / "leak.md")
    os.symlink("../outside", cap_dir / "out")
    os.symlink("missing", cap_dir / "skills" / "one" / "broken")
    bad = Capability("a.b", "1", "d", skills=("skills",), inject="out/secret.md", agents=("agents/x",),
                     hooks=(Hook("retire", "bin/none.sh"),))
    found = _contained(tmp_path, bad)
    assert [c for c, _ in found] == ["AR156", "AR156", "AR157", "AR157", "AR157"]
    assert any("leak.md" in m for _, m in found) and any("broken" in m for _, m in found)


def test_capabilities_directly_under_the_store_are_found(tmp_path):
    base = tmp_path / ".agents" / "capabilities"
    for name in ("installed/a.b", "owned/c.d", "stray", "notcap"):
        (base / name).mkdir(parents=True)
    for name in ("installed/a.b", "owned/c.d", "stray"):
        (base / name / "oas.json").write_text("{}")
    assert captree.misplaced(str(tmp_path)) == [".agents/capabilities/stray"]
