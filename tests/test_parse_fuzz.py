"""Random frontmatter and bodies never crash the loader, fmt or the generators: every
outcome is a registry or diagnostics (hypothesis). Nor the item directory's own parse and
render (`warm.entries`), which the build's workers and the Pants plugin's node for each
directory run before the registry is checked as a whole."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from agentrc.clients.registry import CLIENTS, client_names
from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline import stages as pipeline
from agentrc.pipeline import warm
from agentrc.pipeline.fmt import format_text as format_source
from agentrc.portable import load

FIELD = st.sampled_from(["schema", "name", "description", "license", "audience", "metadata", "requires", "ignore",
                         "scope", "mode", "model", "tools", "preload-skills", "claude", "copilot", "opencode",
                         "allowed-tools", "x-extra"])
LEAF = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=12),
                 st.sampled_from(["read", "bash", "sonnet", "subagent", "claude", "**/*.py", "a-b"]))
VALUE = st.recursive(LEAF, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                  st.dictionaries(st.text(max_size=6), kids, max_size=3)),
                     max_leaves=6)
LINE = st.one_of(st.text(max_size=30), st.sampled_from([
    "# H1", "## H2", "#### H4", "```", "```py", "~~~", "<!-- @client:claude -->", "<!-- @client:!opencode -->",
    "<!-- @endclient -->", "<!-- @client:zed -->", "[x](../up.md)", "[y](./ref.md)", "@docs/a.md", "- item", "",
    "#tool:read", "===", "---"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["RULE.md", "SKILL.md", "AGENT.md"]),
       st.one_of(st.dictionaries(FIELD, VALUE, max_size=6), st.text(max_size=40)),
       st.lists(LINE, max_size=12), st.booleans())
def test_random_items_never_crash(entry, front, body_lines, override):
    import yaml

    fm = front if isinstance(front, str) else yaml.safe_dump(front, allow_unicode=True)
    text = f"---\n{fm}\n---\n\n" + "\n".join(body_lines) + "\n"
    files = [SourceFile(f"reg/item-x/{entry}", text.encode("utf-8", "surrogatepass")),
             SourceFile("reg/item-x/ref.md", b"# ref\n")]
    if override:
        files.append(SourceFile(f"reg/item-x/{entry[:-3]}.claude.md", "\n".join(body_lines).encode("utf-8", "surrogatepass")))
    tree = SourceTree(tuple(sorted(files, key=lambda f: f.path)))
    plan = pipeline.generate(tree, sorted(CLIENTS))
    entries = warm.entries(tree, sorted(CLIENTS))
    assert any(key[0] == "dir" for key in entries)
    for d in plan.diagnostics:
        assert d.code.startswith("AR") and d.format()
    if plan.ok:
        assert all(f.path and f.content is not None for f in plan.files)
    format_source(f"reg/item-x/{entry}", text)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_never_crash(data):
    tree = SourceTree((SourceFile("reg/x/SKILL.md", data), SourceFile("reg/b.bundle.yaml", data)))
    pipeline.lint(tree, explicit=("reg/b.bundle.yaml",))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["RULE.md", "SKILL.md", "AGENT.md"]), st.dictionaries(FIELD, VALUE, max_size=3),
       st.lists(LINE, max_size=6))
def test_valid_items_with_random_fields_never_crash_their_directory(entry, extra, body_lines):
    """An item that passes the first checks (schema, description) and then holds a field of
    the wrong shape or value: reported, never rendered (it reached the adapters, which take
    valid items only: an unknown tool raised KeyError in the directory's own render)."""
    import yaml

    fm = dict(extra, schema=1, description="Use when fuzzing")
    text = f"---\n{yaml.safe_dump(fm, allow_unicode=True)}---\n\n## Fuzz\n\n" + "\n".join(body_lines) + "\n"
    tree = SourceTree((SourceFile(f"reg/item-x/{entry}", text.encode("utf-8", "surrogatepass")),))
    entries = warm.entries(tree, sorted(CLIENTS))
    registry, diags = load.load_registry(tree, client_names(), (), None)
    errors = any(d.is_error for d in diags)
    rendered = any(key[0] == "render" for key in entries)
    # Rendered when the directory's own checks pass, else not at all (references are checked apart).
    assert rendered == (not errors and bool(registry.items))
