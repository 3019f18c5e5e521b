"""The closure of a consumer selection with provenance (agentrc.sources.closure): pure, on
in-memory trees."""

from __future__ import annotations

from sourcerepos import bundle, rule, skill

from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline.stages import load
from agentrc.sources import closure
from agentrc.sources.dsl import parse
from agentrc.sources.lock import Lock

AGENT = ("---\nschema: 1\nname: reviewer\ndescription: Use when reviewing.\npreload-skills:\n  - checklist\n"
         "requires:\n  rules:\n    - style\n---\n\n## Role\n\nReview.\n")

FILES = {
    "reg/skills/checklist/SKILL.md": skill("checklist"),
    "reg/skills/checklist/refs/list.md": "- one\n",
    "reg/rules/style/RULE.md": rule("style"),
    "reg/rules/base/RULE.md": rule("base"),
    "reg/rules/lone/RULE.md": rule("lone"),
    "reg/agents/reviewer/AGENT.md": AGENT,
    "reg/core.bundle.yaml": bundle("core", "  rules:\n    - base\n"),
    "reg/review.bundle.yaml": bundle("review", "  agents:\n    - reviewer\n",
                                     "requires:\n  - { name: core }\n"),
}


def _load(files=FILES, root="reg"):
    tree = SourceTree(tuple(SourceFile(p, t.encode()) for p, t in sorted(files.items())))
    loaded = load(tree)
    assert loaded.ok, loaded.diagnostics
    return loaded.registry, tree


def _select(bundles=(), items=(), files=FILES):
    registry, tree = _load(files)
    return closure.select(registry, tree, "reg", parse("owner/repo@v1"), "c" * 40, bundles, items)


def test_a_bundle_closure_records_who_required_what():
    entries, diags = _select(bundles=["review"])
    assert diags == ()
    got = {e.id: (e.direct, e.required_by) for e in entries}
    assert got == {
        "bundle:review": (True, ()),
        "bundle:core": (False, ("bundle:review",)),
        "agent:reviewer": (False, ("bundle:review",)),
        "rule:base": (False, ("bundle:core",)),
        "rule:style": (False, ("agent:reviewer",)),
        "skill:checklist": (False, ("agent:reviewer",)),  # preloaded and present: installed (§3.4)
    }
    e = next(e for e in entries if e.id == "skill:checklist")
    assert (e.source, e.ref, e.commit) == ("owner/repo", "v1", "c" * 40)


def test_content_digests_are_relative_to_the_source_and_cover_resources():
    a, _ = _select(items=[("skill", "checklist")])
    moved = {f"elsewhere/{p[4:]}": t for p, t in FILES.items()}
    registry, tree = _load(moved)
    b, _ = closure.select(registry, tree, "elsewhere", parse("owner/repo@v1"), "c" * 40, [], [("skill", "checklist")])
    assert a[0].sha256 == b[0].sha256  # where the source was read does not matter
    changed = dict(FILES, **{"reg/skills/checklist/refs/list.md": "- two\n"})
    c, _ = _select(items=[("skill", "checklist")], files=changed)
    assert c[0].sha256 != a[0].sha256  # a supporting file is content


def test_unknown_selections_are_AR155():
    _, diags = _select(bundles=["nope"], items=[("skill", "missing"), ("widget", "x")])
    assert [d.code for d in diags] == ["AR205"] * 3


def test_nothing_asked_for_means_everything():
    entries, _ = _select()
    assert {e.id for e in entries if e.direct} == {"bundle:core", "bundle:review", "agent:reviewer", "rule:base",
                                                   "rule:lone", "rule:style", "skill:checklist"}


def test_merge_joins_provenance_and_refuses_a_second_source():
    first, _ = _select(bundles=["core"])
    second, _ = _select(items=[("rule", "base")])
    lock, diags = closure.merge(Lock(("claude",)).with_entries(first), second)
    assert diags == ()
    base = lock.entry("rule", "base")
    assert base.direct and base.required_by == ("bundle:core",)
    registry, tree = _load()
    other, _ = closure.select(registry, tree, "reg", parse("someone/else@v1"), "d" * 40, [], [("rule", "base")])
    _, diags = closure.merge(lock, other)
    assert [d.code for d in diags] == ["AR206"] and "someone/else@v1" in diags[0].message
    bumped, _ = closure.select(registry, tree, "reg", parse("owner/repo@v2"), "e" * 40, [], [("rule", "base")])
    assert [d.code for d in closure.merge(lock, bumped)[1]] == ["AR206"]  # another ref of the same source


def test_prune_drops_what_only_the_removed_entry_required():
    review, _ = _select(bundles=["review"])
    lone, _ = _select(items=[("rule", "base")])
    lock, _ = closure.merge(Lock(("claude",)).with_entries(review), lone)
    after = closure.prune(lock, [("bundle", "review")])
    assert {e.id: e.required_by for e in after.entries} == {"rule:base": ()}
    assert after.entry("rule", "base").direct
    assert closure.prune(after, [("rule", "base")]).entries == ()


def test_one_repository_spelled_two_ways_merges():
    first, _ = _select(items=[("rule", "base")])
    lock, _ = closure.merge(Lock(("claude",)), first)
    registry, tree = _load()
    again, _ = closure.select(registry, tree, "reg", parse("https://github.com/owner/repo.git@v1"), "c" * 40, [],
                              [("rule", "base")])
    merged, diags = closure.merge(lock, again)
    assert diags == () and [e.source for e in merged.entries] == ["owner/repo"]


def test_a_directory_is_digested_once_per_tree(monkeypatch):
    """`install --frozen` resolves the lock's closure twice (to install, to compare): the
    digest of an item directory of the same tree is computed once; another tree's is its own."""
    calls = []
    real = closure._content_sha
    monkeypatch.setattr(closure, "_content_sha", lambda *a: (calls.append(a[3]), real(*a))[1])
    tree = SourceTree((SourceFile("r/skills/a/SKILL.md", b"a\n"), SourceFile("r/skills/b/SKILL.md", b"b\n")))
    first = closure.content_sha(tree, "r", "r/skills/a")
    assert closure.content_sha(tree, "r", "r/skills/a") == first and calls == ["r/skills/a"]
    assert closure.content_sha(tree, "r", "r/skills/b") != first
    other = SourceTree((SourceFile("r/skills/a/SKILL.md", b"changed\n"),))
    assert closure.content_sha(other, "r", "r/skills/a") != first and len(calls) == 3
