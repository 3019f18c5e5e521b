"""`package`: item and bundle targets build the same tree as the CLI for the same sources."""

from __future__ import annotations

import json

import pytest
from pants.core.goals.package import BuiltPackage
from pants.engine.addresses import Address
from pants.engine.fs import Digest, DigestContents
from pants.engine.internals.scheduler import ExecutionError
from pants.testutil.rule_runner import QueryRule

from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline import stages as pipeline
from agentrc_pants.target_types import AgentrcBundleFieldSet, AgentrcItemFieldSet
from agentrc_pants.testutil import REGISTRY, make_rule_runner


@pytest.fixture(scope="module")
def rule_runner():
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcItemFieldSet]),
                              QueryRule(BuiltPackage, [AgentrcBundleFieldSet]),
                              QueryRule(DigestContents, [Digest]))
    runner.write_files(REGISTRY)
    return runner


def _package(runner, address, field_set_type):
    tgt = runner.get_target(address)
    built = runner.request(BuiltPackage, [field_set_type.create(tgt)])
    contents = runner.request(DigestContents, [built.digest])
    return built, {fc.path: fc.content for fc in contents}


def _cli_tree(paths, **kwargs):
    tree = SourceTree(tuple(SourceFile(p, c.encode()) for p, c in sorted(REGISTRY.items())
                            if p.startswith(paths) and not p.endswith("BUILD")))
    plan = pipeline.generate(tree, ["claude", "copilot", "opencode"], **kwargs)
    assert plan.ok
    return {f.path: f.content for f in plan.files}


def test_package_item_closure_matches_the_core(rule_runner):
    built, files = _package(rule_runner, Address("reg/skills/fix", generated_name="skill"), AgentrcItemFieldSet)
    prefix = built.artifacts[0].relpath
    tree = {p[len(prefix) + 1:]: c for p, c in files.items()}
    report = json.loads(tree.pop(".agentrc/report.json"))
    expected = _cli_tree("reg/", entrypoints=["reg/skills/fix/SKILL.md"])
    assert tree == expected
    # The skill requires the style rule: the closure is packaged, and nothing else.
    assert ".claude/rules/style.md" in tree and ".claude/skills/fix/notes.md" in tree
    assert not any("helper" in p for p in tree)
    assert {(i["kind"], i["name"]) for i in report["items"]} == {("skill", "fix"), ("rule", "style")}


def test_package_bundle_follows_items_and_soft_preloads(rule_runner):
    built, files = _package(rule_runner, Address("reg/bundles", target_name="base"), AgentrcBundleFieldSet)
    prefix = built.artifacts[0].relpath
    paths = {p[len(prefix) + 1:] for p in files}
    assert ".claude/agents/helper.md" in paths
    assert ".claude/skills/fix/SKILL.md" in paths  # preloaded skill present in the registry
    assert ".claude/rules/style.md" in paths  # required by that skill


def test_generator_makes_one_target_per_entrypoint(rule_runner):
    skill = rule_runner.get_target(Address("reg/pair", generated_name="skill"))
    rule = rule_runner.get_target(Address("reg/pair", generated_name="rule"))
    assert skill.alias == "agentrc_skill" and rule.alias == "agentrc_rule"
    _, files = _package(rule_runner, rule.address, AgentrcItemFieldSet)
    assert any(p.endswith(".claude/rules/pair-rule.md") for p in files)
    assert not any(p.endswith("SKILL.md") for p in files)


def test_process_execution_matches_in_process():
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcBundleFieldSet]), QueryRule(DigestContents, [Digest]))
    runner.write_files(REGISTRY)
    address = Address("reg/bundles", target_name="base")
    _, in_process = _package(runner, address, AgentrcBundleFieldSet)
    runner.set_options(["--agentrc-execution=process"], env_inherit={"PATH"})
    _, sandboxed = _package(runner, address, AgentrcBundleFieldSet)
    assert sandboxed == in_process
    assert any(p.endswith(".agentrc/report.json") for p in sandboxed)


def test_an_edit_reruns_only_the_edited_item_directory(monkeypatch):
    from agentrc.pipeline import warm

    calls = []
    real = warm.entries

    def counting(tree, clients):
        calls.append(sorted({f.path.rsplit("/", 1)[0] for f in tree.files}))
        return real(tree, clients)

    monkeypatch.setattr(warm, "entries", counting)
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcItemFieldSet]),
                              QueryRule(BuiltPackage, [AgentrcBundleFieldSet]), QueryRule(DigestContents, [Digest]))
    runner.write_files(REGISTRY)
    _package(runner, Address("reg/bundles", target_name="base"), AgentrcBundleFieldSet)
    _package(runner, Address("reg/skills/fix", generated_name="skill"), AgentrcItemFieldSet)
    # helper, fix and style were each parsed and rendered once, though two targets hold fix and style.
    assert sorted(c[0] for c in calls) == ["reg/agents/helper", "reg/rules/style", "reg/skills/fix"]
    calls.clear()
    runner.write_files({"reg/rules/style/RULE.md": REGISTRY["reg/rules/style/RULE.md"] + "\nOne more line.\n"})
    _, files = _package(runner, Address("reg/bundles", target_name="base"), AgentrcBundleFieldSet)
    _package(runner, Address("reg/skills/fix", generated_name="skill"), AgentrcItemFieldSet)
    assert calls == [["reg/rules/style"]]
    assert any(c.endswith(b"One more line.\n") for p, c in files.items() if p.endswith(".claude/rules/style.md"))


def test_process_mode_shares_item_directory_nodes_between_targets(monkeypatch):
    from agentrc.memo import codec as memocodec

    decoded = []  # one entry per process result read, i.e. per item-directory node that ran
    real = memocodec.loads
    monkeypatch.setattr(memocodec, "loads", lambda data: decoded.append(1) or real(data))
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcItemFieldSet]),
                              QueryRule(BuiltPackage, [AgentrcBundleFieldSet]), QueryRule(DigestContents, [Digest]))
    runner.set_options(["--agentrc-execution=process"], env_inherit={"PATH"})
    runner.write_files(REGISTRY)
    _package(runner, Address("reg/bundles", target_name="base"), AgentrcBundleFieldSet)
    _package(runner, Address("reg/skills/fix", generated_name="skill"), AgentrcItemFieldSet)
    # One node (one process result read) per item directory: helper, fix and style, though
    # two targets with different closures hold fix and style.
    assert len(decoded) == 3
    decoded.clear()
    runner.write_files({"reg/rules/style/RULE.md": REGISTRY["reg/rules/style/RULE.md"] + "\nOne more line.\n"})
    _, files = _package(runner, Address("reg/bundles", target_name="base"), AgentrcBundleFieldSet)
    _package(runner, Address("reg/skills/fix", generated_name="skill"), AgentrcItemFieldSet)
    assert len(decoded) == 1  # the edited directory only
    assert any(c.endswith(b"One more line.\n") for p, c in files.items() if p.endswith(".claude/rules/style.md"))


def test_a_tree_is_merged_from_its_item_directories_digests(monkeypatch):
    """A target's tree is its item directories' own digests (made once, in each directory's
    node) merged with one CreateDigest of the rest: the merged configs and the report. An
    edit creates the edited directory's files and that rest, not every file again."""
    from agentrc_pants import generation

    made = []
    real = generation.reused
    monkeypatch.setattr(generation, "reused", lambda parts, files: made.append(real(parts, files)) or made[-1])
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcBundleFieldSet]), QueryRule(DigestContents, [Digest]))
    runner.write_files(REGISTRY)
    built, files = _package(runner, Address("reg/bundles", target_name="base"), AgentrcBundleFieldSet)
    digests, rest, subsets = made[-1]
    # helper, fix and style: every file of theirs comes from their own digest (a skill whose
    # copies are shared, from the part of it the plan keeps)
    assert len(digests) + len(subsets) >= 3 and len(subsets) == 1  # fix: Copilot and opencode share Claude's copy
    assert sorted(p for p, _, _ in rest) == [".agentrc/report.json", "opencode.json"]  # merged, and the report
    prefix = built.artifacts[0].relpath
    tree = {p[len(prefix) + 1:]: c for p, c in files.items()}
    tree.pop(".agentrc/report.json")
    assert tree == _cli_tree("reg/", bundles=["reg/bundles/base.bundle.yaml"])


def test_a_directory_the_plan_changed_is_not_taken_from_its_digest():
    """`reused` takes a directory's digest only when the plan holds every file of it as
    rendered; otherwise its files go with the rest (the tree is the plan's, always), and a
    directory whose renderings disagree about a path has no digest at all."""
    from pants.engine.fs import EMPTY_DIGEST

    from agentrc_pants.generation import ItemDirEntries, own_files, reused

    a = ItemDirEntries((), (("a/1.md", b"one", False), ("a/2.md", b"two", False)), EMPTY_DIGEST)
    b = ItemDirEntries((), (("b/1.md", b"one", False),), EMPTY_DIGEST)
    c = ItemDirEntries((), (("c/x.sh", b"run", False),), EMPTY_DIGEST)  # planned executable
    none = ItemDirEntries(())
    planned = [("a/1.md", b"one", False), ("a/2.md", b"two", False), ("b/1.md", b"changed", False),
               ("c/x.sh", b"run", True), ("AGENTS.md", b"merged", False)]
    d = ItemDirEntries((), (("d/.claude/SKILL.md", b"s", False), ("d/.github/SKILL.md", b"s", False)), EMPTY_DIGEST)
    digests, rest, subsets = reused([a, b, c, none, d], planned + [("d/.claude/SKILL.md", b"s", False)])
    assert digests == [EMPTY_DIGEST]  # a's alone
    assert rest == planned[2:]
    assert subsets == [(EMPTY_DIGEST, ("d/.claude/SKILL.md",))]  # the copy the plan shares is dropped

    def render(*files):
        return (("render", "claude"), ((tuple(files)), (), ()))

    plain, merged = ("p.md", b"1", False, "o", None, ()), ("AGENTS.md", b"m", False, "o", "block", ())
    entries = (("dir", "x"), {}), render(plain, merged), render(plain, ("q.md", b"2", True, "o", None, ()))
    assert own_files(entries) == (("p.md", b"1", False), ("q.md", b"2", True))  # merged files left out
    assert own_files(entries + (render(("p.md", b"other", False, "o", None, ())),)) is None


def test_unchanged_files_are_digested_once_and_their_bytes_let_go():
    """The rest of a tree (the merged configs and the report, 14.8 MB at 5,000 items) is
    digested behind a rule keyed by the files' SHA-256: Pants 2.17 does not memoise an
    intrinsic CreateDigest awaited inside a rule, and the report is the same bytes after most
    edits. The node's request lets its bytes go once digested (pantsd keeps the request as
    the node's key), and an equal request later is answered without running it again."""
    from pants.engine.fs import CreateDigest, FileContent

    from agentrc_pants.generation import FilesDigestRequest

    runner = make_rule_runner(QueryRule(Digest, [FilesDigestRequest]), QueryRule(Digest, [CreateDigest]))
    files = (("a/report.json", b"{}\n" * 1000, False), ("run.sh", b"echo\n", True))
    first = FilesDigestRequest.of(files)
    digest = runner.request(Digest, [first])
    assert digest == runner.request(Digest, [CreateDigest(FileContent(p, c, is_executable=x) for p, c, x in files)])
    assert first.payload.files is None  # let go
    again = FilesDigestRequest.of(tuple((p, bytes(bytearray(c)), x) for p, c, x in files))  # equal, not the same
    assert again == first and runner.request(Digest, [again]) == digest
    assert again.payload.files is not None  # answered from the first node: never ran
    changed = FilesDigestRequest.of((("a/report.json", b"{}\n", False), files[1]))
    assert changed != first and runner.request(Digest, [changed]) != digest and changed.payload.files is None
    assert FilesDigestRequest.of((("run.sh", b"echo\n", False),)) != FilesDigestRequest.of((files[1],))  # the mode


@pytest.mark.parametrize("execution", ["in-process", "process"])
def test_item_directory_nodes_keep_their_renderings_unpacked(monkeypatch, execution):
    """Each item directory's node holds its renderings as the plan takes them: a target's
    plan, after an edit too, unpacks none (at 5,000 items, 15,000 entries unpacked again in
    every edit), and the tree is the same as the CLI's."""
    from agentrc.clients.base import Rendered
    from agentrc.output import plan as plan_output
    from agentrc_pants import generation

    held, unpackings, holding = [], [], []
    real_with_digest, real_unpack, real_unpacked = generation._with_digest, plan_output._unpack, plan_output.unpacked

    async def keeping(entries):
        part = await real_with_digest(entries)
        held.append(part)
        return part

    monkeypatch.setattr(generation, "_with_digest", keeping)
    def unpacked(packed):  # a node keeping its entries: not the plan's unpacking
        holding.append(1)
        try:
            return real_unpacked(packed)
        finally:
            holding.pop()

    monkeypatch.setattr(plan_output, "unpacked", unpacked)
    def unpack(*args):
        if not holding:
            unpackings.append(1)
        return real_unpack(*args)

    monkeypatch.setattr(plan_output, "_unpack", unpack)
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcBundleFieldSet]), QueryRule(DigestContents, [Digest]))
    runner.set_options([f"--agentrc-execution={execution}"], env_inherit={"PATH"})
    runner.write_files(REGISTRY)
    for edit in ("", "\nOne more line.\n"):
        runner.write_files({"reg/rules/style/RULE.md": REGISTRY["reg/rules/style/RULE.md"] + edit})
        unpackings.clear()
        built, files = _package(runner, Address("reg/bundles", target_name="base"), AgentrcBundleFieldSet)
        assert unpackings == []
        prefix = built.artifacts[0].relpath
        tree = {p[len(prefix) + 1:]: c for p, c in files.items() if not p.endswith("report.json")}
        assert tree[".claude/rules/style.md"].endswith(edit.encode() or b"Keep functions short.\n")
    renders = [v for part in held for k, v in part.entries if k[0] == "render"]
    assert renders and all(isinstance(v, Rendered) for v in renders)


def test_an_item_that_fails_validation_is_reported_not_rendered():
    # The item directory's node parses and renders before the registry is checked as a whole:
    # an agent whose tool is not in the vocabulary fails with its diagnostic (AR080), not with
    # the KeyError a client adapter raises when asked to render it.
    runner = make_rule_runner(QueryRule(BuiltPackage, [AgentrcItemFieldSet]), QueryRule(DigestContents, [Digest]))
    runner.write_files({
        "bad/agents/x/AGENT.md": "---\nschema: 1\ndescription: Use when x\ntools:\n  - Bash\n---\n\n## X\n\nDo x.\n",
        "bad/agents/x/BUILD": "agentrc_items()\n",
    })
    with pytest.raises(ExecutionError) as exc:
        _package(runner, Address("bad/agents/x", generated_name="agent"), AgentrcItemFieldSet)
    message = str(exc.value)
    assert "bad/agents/x/AGENT.md:5:5: error[AR080] unknown tool 'Bash'" in message
    assert "agentrc found problems building bad/agents/x#agent" in message and "KeyError" not in message
