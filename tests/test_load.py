"""Discovery details that the diagnostic cases do not show on their own."""

from __future__ import annotations

from agentrc.pipeline import stages as pipeline
from agentrc.model import Kind, SourceFile, SourceTree


def _tree(files):
    return SourceTree(tuple(SourceFile(p, c.encode()) for p, c in sorted(files.items())))


def test_bundle_discovery_gate_and_explicit_paths():
    files = {"reg/notes.bundle.yaml": "title: not a bundle\n", "reg/doc.bundle.md": "# docs\n"}
    loaded = pipeline.load(_tree(files))
    assert loaded.ok and loaded.registry.bundles == ()
    explicit = pipeline.load(_tree(files), explicit=["reg/notes.bundle.yaml"])
    assert [d.code for d in explicit.diagnostics if d.is_error] == ["AR006", "AR006", "AR006"]


def test_colocated_kinds_share_a_directory_and_resources():
    files = {
        "reg/pair/SKILL.md": "---\ndescription: Use when pairing\n---\n\n## Skill\n\nSee [notes](./notes.md).\n",
        "reg/pair/RULE.md": "---\nname: pair-rule\ndescription: Always pair\n---\n\n## Rule\n\nNo links here.\n",
        "reg/pair/notes.md": "# notes\n",
        "reg/pair/scripts/run.sh": "echo\n",
    }
    loaded = pipeline.load(_tree(files))
    assert loaded.ok, [d.format() for d in loaded.diagnostics]
    skill = loaded.registry.item(Kind.SKILL, "pair")
    rule = loaded.registry.item(Kind.RULE, "pair-rule")
    assert [r.path for r in skill.resources] == ["notes.md", "scripts/run.sh"]
    # A co-located rule takes only the resources its own body links to (spec §2.4).
    assert rule.resources == ()


def test_nested_item_directories_are_separate_items():
    files = {
        "reg/outer/SKILL.md": "---\ndescription: Use when outer\n---\n\n## Outer\n",
        "reg/outer/inner/SKILL.md": "---\ndescription: Use when inner\n---\n\n## Inner\n",
        "reg/outer/inner/ref.md": "# ref\n",
    }
    loaded = pipeline.load(_tree(files))
    outer = loaded.registry.item(Kind.SKILL, "outer")
    assert outer.resources == ()
    assert [r.path for r in loaded.registry.item(Kind.SKILL, "inner").resources] == ["ref.md"]


def test_audience_narrows_who_reads_client_constructs():
    body = "## Think\n\nultrathink before answering.\n"
    only_claude = {"reg/deep/SKILL.md": f"---\ndescription: Use when deep\naudience: [claude]\n---\n\n{body}"}
    assert pipeline.load(_tree(only_claude)).ok
    everyone = {"reg/deep/SKILL.md": f"---\ndescription: Use when deep\n---\n\n{body}"}
    assert [d.code for d in pipeline.load(_tree(everyone)).diagnostics] == ["AR023"]


def test_unknown_rule_fields_are_ignored_and_still_build():
    files = {"reg/x/RULE.md": "---\ndescription: Use when testing\npriority: high\n---\n\n## Body\n"}
    plan = pipeline.generate(_tree(files), ["claude", "copilot", "opencode"])
    assert plan.ok and "AR007" in [d.code for d in plan.diagnostics]
    outcomes = {(r.client, f.field): f.status for r in plan.reports for f in r.fields}
    assert outcomes[("claude", "priority")] == "omitted"


def test_alternative_forms_are_reported_against_the_closest_form():
    """anyOf/oneOf: the error names what the entry's own form lacks, not another form's key."""
    bundle = ("schema: 1\nname: core\ndescription: Core\nplugins:\n  claude:\n"
              "    tools:\n      source: github:acme/tools\n      plugin: tools\n")
    diags = pipeline.load(_tree({"reg/core.bundle.yaml": bundle})).diagnostics
    assert [(d.code, d.message) for d in diags] == [
        ("AR006", "plugins.claude.tools.marketplace: required field is missing")]
    # The same entry with an unusable value in its form reports the value.
    bundle = bundle.replace("plugin: tools", "plugin: tools\n      marketplace: ''")
    diags = pipeline.load(_tree({"reg/core.bundle.yaml": bundle})).diagnostics
    assert [d.message for d in diags] == ["plugins.claude.tools.marketplace: '' is too short"]
    # Another form: an entry with `extension` only is complete; with `module: ''` it is the module form.
    ext = bundle.split("    tools:")[0] + "    ext:\n      module: ''\n"
    diags = pipeline.load(_tree({"reg/core.bundle.yaml": ext})).diagnostics
    assert [d.message for d in diags] == ["plugins.claude.ext.module: '' is too short"]


def test_lint_reports_no_lookalikes_of_client_constructs():
    """Decorators, product names, stages, prices and spreadsheet references are no client syntax."""
    files = {
        "reg/api/RULE.md": "---\ndescription: Use when routing\n---\n\n## Routes\n\n"
                           "Register with @router.post; pages use @Next.js; load from @my_stage.\n",
        "reg/pricing/SKILL.md": "---\ndescription: Use when pricing\n---\n\n## Prices\n\n"
                                "| Plan | Price |\n| --- | --- |\n| Pro | $5.00 |\n| Sheet | =SUM($B$2:$B$6) |\n\n"
                                "Follow @docs/pricing.md.\n",
    }
    loaded = pipeline.load(_tree(files))
    assert loaded.ok and not loaded.diagnostics, [d.format() for d in loaded.diagnostics]
    files["reg/api/RULE.md"] += "Also read @docs/routes.md.\n"
    assert [d.code for d in pipeline.load(_tree(files)).diagnostics] == ["AR023"]
