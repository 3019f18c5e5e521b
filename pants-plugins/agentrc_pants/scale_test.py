"""Work per `package ::` grows with what each target holds, never with the registry's size
times its number of targets (issue 13): counted, not timed."""

from __future__ import annotations

import gc
import threading
import time
from pathlib import Path

from pants.base.specs import RawSpecs, RecursiveGlobSpec
from pants.core.goals.package import BuiltPackage
from pants.engine.addresses import Address
from pants.testutil.rule_runner import QueryRule

from agentrc_pants import dependency_inference, memory
from agentrc_pants.target_types import AgentrcBundleFieldSet, AgentrcItemFieldSet
from agentrc_pants.testutil import make_rule_runner


def _registry(n: int, recursive: bool = False) -> dict:
    """An n-rule registry: one `agentrc_items` per item directory, or (`recursive`) one
    recursive `agentrc_items` at the registry root, as `pants tailor` now writes."""
    files = {"reg/agentrc-registry.yaml": "schema: 1\n"}
    for i in range(n):
        files[f"reg/rules/r{i}/RULE.md"] = (f"---\nschema: 1\ndescription: Rule {i}\n---\n\n## Rule {i}\n\n"
                                            f"Do thing {i}.\n")
        files[f"reg/rules/r{i}/BUILD"] = "agentrc_items()\n"
    files["reg/skills/s/SKILL.md"] = ("---\nschema: 1\ndescription: Use when testing\nrequires:\n  rules:\n"
                                      "    - r0\n---\n\n## Skill\n\nTest.\n")
    files["reg/skills/s/BUILD"] = "agentrc_items()\n"
    items = "".join(f"    - r{i}\n" for i in range(n))
    files["reg/bundles/all.bundle.yaml"] = f"schema: 1\nname: all\ndescription: All\nitems:\n  rules:\n{items}"
    # package=True: its own tree, beside the registry's (which holds it), whose plan this counts.
    files["reg/bundles/BUILD"] = "agentrc_bundle(name='all', source='all.bundle.yaml', package=True)\n"
    files["reg/BUILD"] = "agentrc_registry(name='reg')\n"
    if recursive:
        files = {p: c for p, c in files.items() if not (p.endswith("/BUILD") and c == "agentrc_items()\n")}
        files["reg/BUILD"] += "agentrc_items(name='items', recursive=True)\n"
    return files


def _package_everything(n: int, monkeypatch) -> dict:
    """Packages every target of an n-rule registry; returns what each kind of work counted."""
    from agentrc.pipeline import stages, warm

    # "collector on": whether the cyclic collector ran during each call into the core.
    counts: dict = {"parsed dirs": [], "peeks": 0, "package calls": {}, "collector on": []}
    real_entries, real_package, real_peek = warm.entries, stages.package, dependency_inference.peek

    def entries(tree, clients):
        counts["parsed dirs"].append(sorted({f.path.rsplit("/", 1)[0] for f in tree.files}))
        counts["collector on"].append(gc.isenabled())
        return real_entries(tree, clients)

    def package(tree, clients, bundles=None, entrypoints=None, *args, **kwargs):
        counts["package calls"][tuple(bundles or ()) + tuple(entrypoints or ())] = len(tree.files)
        counts["collector on"].append(gc.isenabled())
        return real_package(tree, clients, bundles, entrypoints, *args, **kwargs)

    def peek(path, content):
        counts["peeks"] += 1
        return real_peek(path, content)

    monkeypatch.setattr(warm, "entries", entries)
    monkeypatch.setattr(stages, "package", package)
    monkeypatch.setattr(dependency_inference, "peek", peek)
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcItemFieldSet]),
                              QueryRule(BuiltPackage, [AgentrcBundleFieldSet]))
    runner.write_files(_registry(n))
    addresses = [Address(f"reg/rules/r{i}", generated_name="rule") for i in range(n)]
    addresses.append(Address("reg/skills/s", generated_name="skill"))
    for address in addresses:
        runner.request(BuiltPackage, [AgentrcItemFieldSet.create(runner.get_target(address))])
    bundle = runner.get_target(Address("reg/bundles", target_name="all"))
    runner.request(BuiltPackage, [AgentrcBundleFieldSet.create(bundle)])
    monkeypatch.undo()
    return counts


def test_each_file_is_parsed_once_and_each_target_plans_its_closure_only(monkeypatch):
    small, large = _package_everything(3, monkeypatch), _package_everything(9, monkeypatch)
    for n, counts in ((3, small), (9, large)):
        # Every item directory parsed and rendered once, though the bundle, the skill and
        # each rule's own target all hold some of them.
        dirs = [d for call in counts["parsed dirs"] for d in call]
        assert sorted(dirs) == sorted([f"reg/rules/r{i}" for i in range(n)] + ["reg/skills/s"])
        # Dependency inference reads each entrypoint and the bundle manifest once.
        assert counts["peeks"] == n + 2
        # One plan per target.
        assert len(counts["package calls"]) == n + 2
    # An item target plans its own closure: the same number of files at any registry size
    # (the rule and the registry marker; the skill also the rule it requires) ...
    for counts in (small, large):
        assert counts["package calls"][("reg/rules/r1/RULE.md",)] == 2
        assert counts["package calls"][("reg/skills/s/SKILL.md",)] == 3
    # ... and only the bundle, which lists every rule, grows with the registry.
    assert small["package calls"][("reg/bundles/all.bundle.yaml",)] == 3 + 2
    assert large["package calls"][("reg/bundles/all.bundle.yaml",)] == 9 + 2


def test_the_core_runs_with_the_cyclic_collector_paused(monkeypatch):
    """pantsd's heap is its whole graph: a full collection during a registry's plan walked
    all of it (agentrc.pipeline.nogc). Paused for each call into the core, on again after."""
    assert gc.isenabled()
    counts = _package_everything(2, monkeypatch)
    assert len(counts["collector on"]) >= 4 and not any(counts["collector on"])
    assert gc.isenabled()


def test_memory_watcher_trims_when_the_resident_set_grows(monkeypatch):
    if memory.rss() is None or memory._trim_function() is None:
        return  # not glibc Linux: the watcher is a no-op there by design
    monkeypatch.setattr(memory, "_started", False)
    assert memory.trim()  # what earlier tests freed goes back first, so new blocks need new pages
    monkeypatch.setattr(memory, "trims", 0)
    assert memory.watch(step=8 * 1024 * 1024, interval=0.02)
    assert not memory.watch()  # once per process
    held = []
    done = threading.Event()

    def allocate():  # in another thread, as Pants' engine threads do
        held.extend(bytearray(4096) for _ in range(16 * 1024))  # 64 MiB in small blocks
        done.set()

    threading.Thread(target=allocate).start()
    done.wait(10)
    deadline = time.monotonic() + 10
    while memory.trims == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    memory.stop()
    assert memory.trims >= 1
    held.clear()


def test_create_digests_of_different_files_hash_apart():
    # Pants 2.17 hashed every Collection alike, so the engine compared each new CreateDigest
    # with every earlier one: the backend's import gives them their elements' hash.
    from pants.engine.fs import CreateDigest, FileContent

    from agentrc_pants import collection_hash, register  # noqa: F401

    assert not collection_hash.broken()
    digests = {hash(CreateDigest([FileContent(f"f{i}", b"x")])) for i in range(100)}
    assert len(digests) == 100
    a, b = CreateDigest([FileContent("a", b"1")]), CreateDigest([FileContent("a", b"1")])
    assert a == b and hash(a) == hash(b)


def test_package_everything_plans_one_tree_per_registry_and_bundle(monkeypatch):
    """`pants package ::` (the goal, as users run it) plans the registry's tree and the
    bundle's, however many items the registry holds: items package only when asked
    (`package=True`), so the goal's work and its dist/ no longer grow by a tree per item."""
    from pants.core.goals.package import Package

    from agentrc.pipeline import stages

    real_package = stages.package
    for n in (3, 9):
        calls: dict = {}

        def package(tree, clients, bundles=None, entrypoints=None, *args, **kwargs):
            calls[tuple(bundles or ()) + tuple(entrypoints or ())] = len(tree.files)
            return real_package(tree, clients, bundles, entrypoints, *args, **kwargs)

        monkeypatch.setattr(stages, "package", package)
        runner = make_rule_runner()
        files = _registry(n)
        files["reg/skills/s/BUILD"] = "agentrc_items(package=True)\n"  # one item asks for its own tree
        runner.write_files(files)
        result = runner.run_goal_rule(Package, args=["::"])
        assert result.exit_code == 0, result.stderr
        # The registry (every item, n rules and the skill, the bundle manifest and the marker),
        # the bundle (its n rules, manifest and marker) and the one item that asked (the skill,
        # the rule it requires, the marker): three plans at any n.
        assert calls == {(): n + 3, ("reg/bundles/all.bundle.yaml",): n + 2, ("reg/skills/s/SKILL.md",): 3}
        dist = Path(runner.build_root, "dist")
        assert sorted(str(p.relative_to(dist)) for p in dist.glob("*/*")) == [
            "reg.bundles/all", "reg.skills.s/skill", "reg/reg"]
        monkeypatch.undo()


def test_one_recursive_generator_per_registry_packages_the_same_tree(monkeypatch):
    """`agentrc_items(recursive=True)` at the registry root (one BUILD file, not one per item
    directory, each of which Pants re-parses in every run) declares the same items: the
    same registry tree, byte for byte, and the same dependency edges."""
    from pants.core.goals.package import Package
    from pants.engine.target import InferredDependencies, Targets

    from agentrc_pants.dependency_inference import InferAgentrcDependencies
    from agentrc_pants.target_types import AgentrcFieldSet, AgentrcRuleTarget, AgentrcSkillTarget

    trees = []
    for recursive in (False, True):
        runner = make_rule_runner()
        runner.write_files(_registry(3, recursive))
        result = runner.run_goal_rule(Package, args=["reg::"])
        assert result.exit_code == 0, result.stderr
        tree = Path(runner.build_root, "dist", "reg", "reg")
        trees.append({str(p.relative_to(tree)): p.read_bytes() for p in sorted(tree.rglob("*")) if p.is_file()})
    assert trees[0] == trees[1] and ".claude/rules/r2.md" in trees[1]
    # The generated targets: one per entrypoint, addressed by its path, living in its directory.
    runner = make_rule_runner(QueryRule(Targets, [RawSpecs]),
                              QueryRule(InferredDependencies, [InferAgentrcDependencies]))
    runner.write_files({**_registry(3, True), "reg/nested/agentrc-registry.yaml": "schema: 1\n",
                        "reg/nested/rules/x/RULE.md": "---\nschema: 1\ndescription: X\n---\n\n## X\n\nX.\n",
                        # A capability package's skill is its payload, not an item of the registry.
                        "reg/kit/oas-package.json": "{}", "reg/kit/skills/k/SKILL.md": "x"})
    targets = runner.request(Targets, [RawSpecs(recursive_globs=(RecursiveGlobSpec("reg"),),
                                                description_of_origin="test")])
    items = {str(t.address): t for t in targets if isinstance(t, (AgentrcRuleTarget, AgentrcSkillTarget))}
    assert sorted(items) == [f"reg/rules/r{i}/RULE.md:../../items" for i in range(3)] + [
        "reg/skills/s/SKILL.md:../../items"]  # not the nested registry's rule, not the package's skill
    assert items["reg/skills/s/SKILL.md:../../items"].residence_dir == "reg/skills/s"
    # Dependency inference finds them by name as before: the bundle lists the three rules.
    bundle = runner.get_target(Address("reg/bundles", target_name="all"))
    inferred = runner.request(InferredDependencies, [InferAgentrcDependencies(AgentrcFieldSet.create(bundle))])
    assert {str(a) for a in inferred.include} == {f"reg/rules/r{i}/RULE.md:../../items" for i in range(3)} | {"reg:reg"}


def test_an_edit_reads_again_only_the_edited_targets_files(monkeypatch):
    """The closure's files are read target by target, each a node of its own: after an
    edit of one rule, the registry's package makes one source file again (the edited
    RULE.md), not one per file of the registry (issue 13: 0.3-0.8 s of a 5,000-item edit)."""
    from pants.core.goals.package import Package

    from agentrc_pants import sources

    made: list = []
    real = sources.SourceFile

    def counted(*args, **kwargs):
        made.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(sources, "SourceFile", counted)
    runner = make_rule_runner()
    files = _registry(6, recursive=True)
    runner.write_files(files)
    assert runner.run_goal_rule(Package, args=["reg::"]).exit_code == 0
    assert len(set(made)) == len(files) - 2  # every source once (not the two BUILD files)
    made.clear()
    runner.write_files({"reg/rules/r3/RULE.md": files["reg/rules/r3/RULE.md"] + "\nEdited.\n"})
    result = runner.run_goal_rule(Package, args=["reg::"])
    assert result.exit_code == 0, result.stderr
    assert made == ["reg/rules/r3/RULE.md"]
    tree = Path(runner.build_root, "dist", "reg", "reg")
    assert "Edited." in (tree / ".claude" / "rules" / "r3.md").read_text()
