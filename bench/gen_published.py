#!/usr/bin/env python3
"""Generate a deterministic agentrc registry of N items shaped like published content.

    python bench/gen_published.py --items 1000 --out bench/out/pub-1000 [--seed 1]

bench/gen_registry.py's corpus is the shape agentrc was tuned on (issue 13). This one is
the second corpus of issue 36: its proportions are measured from public repositories
(`bench/corpus_shape.py`, figures in SHAPE below), its text is look-alike text of its own,
in agentrc's portable format. What differs from the first corpus, because published
content differs:

- the mix: more skills than rules or agents; bodies from a few hundred bytes to 25 KB
  (the first corpus: 1-6 KiB); skill descriptions often above the 200 characters lint
  warns about (AR015, a warning real content causes);
- half the skills have supporting files, some ten or more (references, scripts, assets);
- most bodies began with an H1 and some fences had no language: written here as
  `agentrc import` leaves them (the H1 demoted to `##` with every heading below it, the
  fence given `text`), so the build succeeds;
- most agents list no tools (or a wildcard: every tool), a third list several;
- rules sit side by side in one large directory; about half the items are grouped in
  plugin directories of 1-20 items, each plugin a bundle; 5 MCP servers among them.

The same (items, seed) always gives the same bytes; `agentrc lint` reports no errors.
Only the standard library is used; the module is importable (see `generate`).
"""

from __future__ import annotations

import bisect
import os
import random
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_registry as base  # noqa: E402  (its vocabulary and MCP servers)

# Measured with bench/corpus_shape.py on 2026-12-05 from the HEAD snapshots of
# anthropics/skills (9d2f1ae1), anthropics/claude-code (5cfc0a19, plugins/),
# github/awesome-copilot (ab7544d0), wshobson/agents (367cb6a), obra/superpowers (44c9b2d6)
# and PatrickJS/awesome-cursorrules (b044f95): 642 skills, 448 agents, 455 rules.
# Numbers only; quantiles are p10, p25, p50, p75, p90 unless named otherwise.
SHAPE = {
    "items": {"skill": 642, "agent": 448, "rule": 455},
    "body_bytes": {"skill": (1810, 3055, 5857, 8892, 14949), "agent": (1504, 2827, 6419, 9127, 13180),
                   "rule": (991, 1994, 4236, 7870, 16946)},
    "description_chars_p10_p50_p90": {"skill": (99, 242, 530), "agent": (88, 211, 394), "rule": (48, 77, 163)},
    "share_h1_first": {"skill": 0.95, "agent": 0.46, "rule": 0.60},
    "share_with_fences": {"skill": 0.76, "agent": 0.39, "rule": 0.43},
    "bare_of_all_fences": {"skill": 0.22, "agent": 0.28, "rule": 0.09},
    "headings_per_body_p50": {"skill": 12, "agent": 14, "rule": 7},
    # Supporting files per skill: 0, 1, 2-3, 4-9, 10 or more (at most 82).
    "skill_files_buckets": (320, 137, 89, 64, 32),
    "skill_file_bytes_p25_p50_p75_p90": (2730, 5786, 11188, 22194),
    "skill_file_extensions": {".md": 949, ".py": 120, ".xsd": 117, ".txt": 58, ".ttf": 54, ".sh": 26,
                              ".ps1": 12, ".json": 11},
    # Agents: tools absent 59%, a list 35% (median 8 entries, MCP tools among them), a wildcard 6%.
    "agent_tools": {"absent": 0.59, "list": 0.35, "wildcard": 0.06},
    "agent_fields_share": {"model": 0.67, "color": 0.05, "mode": 0.04},
    "skill_fields_share": {"license": 0.10, "metadata": 0.07, "compatibility": 0.05, "version": 0.03,
                           "allowed-tools": 0.02, "argument-hint": 0.02},
    "rule_share_scoped": 0.44,
    # Rules per directory: 257 and 191 in one flat directory each, then 3, 3, 1.
    "rules_per_directory_top": (257, 191, 3, 3, 1),
    # Plugins (wshobson/agents: 91 plugins, items per plugin p25 2, p50 4, p75 7, max 20;
    # github/awesome-copilot: 92 plugins): about one plugin per 8.4 items.
    "items_per_plugin_p25_p50_p75_max": (2, 4, 7, 20),
    "plugins_per_item": 183 / 1545,
}

EXTRA_SENTENCES = [
    "Start from the failing case and shrink it until one change explains it.",
    "Ask for the acceptance criteria before writing code when they are not in the ticket.",
    "Summarise what changed and what was verified, with the commands that verified it.",
    "Prefer the platform's built-in components over new dependencies.",
    "Keep the public surface small and the internals replaceable.",
    "Record each assumption in the pull request so reviewers can challenge it.",
    "Stop and report when a step fails twice instead of guessing a third time.",
    "Read the surrounding module before changing its conventions.",
]
SENTENCES = base.SENTENCES + EXTRA_SENTENCES
COLORS = ["blue", "green", "purple", "orange", "red", "cyan"]
SECTION_WORDS = ["Overview", "When to use", "Workflow", "Examples", "Checklist", "Pitfalls", "Output format",
                 "Inputs", "Constraints", "Verification", "References", "Troubleshooting"]


@dataclass
class Item:
    kind: str  # rule | skill | agent
    name: str
    topic: str
    home: str  # the directory holding the item's directory
    extra_files: Dict[str, str] = field(default_factory=dict)


def _quantile(rng: random.Random, qs: Sequence[float], values: Sequence[float]) -> int:
    """A draw from the piecewise-linear distribution through (quantile, value) points."""
    u = rng.random()
    i = min(max(bisect.bisect_right(list(qs), u), 1), len(qs) - 1)
    q0, q1, v0, v1 = qs[i - 1], qs[i], values[i - 1], values[i]
    return int(v0 + (v1 - v0) * (u - q0) / (q1 - q0))


def body_bytes(rng: random.Random, kind: str) -> int:
    p10, p25, p50, p75, p90 = SHAPE["body_bytes"][kind]
    return _quantile(rng, (0, .1, .25, .5, .75, .9, 1), (max(250, p10 // 3), p10, p25, p50, p75, p90, p90 * 5 // 3))


def _sentence(rng: random.Random, n: int = 1) -> str:
    return " ".join(rng.choice(SENTENCES) for _ in range(n))


def description(rng: random.Random, kind: str, lead: str) -> str:
    p10, p50, p90 = SHAPE["description_chars_p10_p50_p90"][kind]
    target = _quantile(rng, (0, .1, .5, .9, 1), (max(30, p10 // 2), p10, p50, p90, min(1000, p90 * 2)))
    text = lead
    while len(text) < target:
        text += " " + rng.choice(SENTENCES)
    return text[:1000].rstrip(" .") + "."


def _section(rng: random.Random, fenced: bool, bare: float, sub: str) -> List[str]:
    """One section's content: a list, numbered steps, prose, a table or a fence."""
    shape = rng.randrange(6 if fenced else 5)
    if shape == 0:
        return [f"- {_sentence(rng)}" for _ in range(rng.randint(3, 7))]
    if shape == 1:
        return [f"{i}. {_sentence(rng)}" for i in range(1, rng.randint(3, 7) + 1)]
    if shape == 2:
        return [_sentence(rng, rng.randint(2, 4))]
    if shape == 3:
        rows = [f"| `{rng.choice(base.TOPICS)}` | {_sentence(rng)} |" for _ in range(rng.randint(2, 5))]
        return ["| Name | What it does |", "| --- | --- |"] + rows
    if shape == 4:
        return [_sentence(rng, 2), "", f"{sub} Notes", "", f"- {_sentence(rng)}", f"- {_sentence(rng)}"]
    lang = "text" if rng.random() < bare else rng.choice(base.LANGS)
    return [_sentence(rng), "", f"```{lang}"] + base.CODE_SNIPPETS[lang] + ["```"]


def body(rng: random.Random, kind: str, title: str, links: List[str]) -> List[str]:
    """A body of the measured length, heading density and style for `kind`."""
    target = body_bytes(rng, kind)
    per_heading = sum(SHAPE["body_bytes"][kind]) // 5 // SHAPE["headings_per_body_p50"][kind]
    fenced = rng.random() < SHAPE["share_with_fences"][kind]
    bare = SHAPE["bare_of_all_fences"][kind]
    if rng.random() < SHAPE["share_h1_first"][kind]:  # an H1 first line, demoted as an import does
        lines, h, sub = [f"## {title}", "", _sentence(rng, 2), ""], "###", "####"
    else:
        lines, h, sub = [_sentence(rng, 2), ""], "##", "###"
    if links:
        lines += [f"{h} Resources", ""] + [f"- [{os.path.basename(rel)}](./{rel})" for rel in links] + [""]
    size = sum(len(line) + 1 for line in lines)
    while size < target:
        section = [f"{h} {rng.choice(SECTION_WORDS)}", ""]
        while sum(len(line) + 1 for line in section) < per_heading:
            section += _section(rng, fenced, bare, sub) + [""]
        lines += section
        size += sum(len(line) + 1 for line in section)
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def _weighted(rng: random.Random, weights: Dict[str, float]) -> str:
    keys = sorted(weights)
    return rng.choices(keys, [weights[k] for k in keys])[0]


def supporting_file(rng: random.Random, ext: str, index: int) -> Tuple[str, str]:
    """A skill's supporting file of the measured size: (relative path, text)."""
    p25, p50, p75, p90 = SHAPE["skill_file_bytes_p25_p50_p75_p90"]
    target = _quantile(rng, (0, .25, .5, .75, .9, 1), (200, p25, p50, p75, p90, p90 * 3 // 2))
    if ext == ".md":
        rel, head, line = f"references/{rng.choice(base.ASPECTS)}-{index}.md", ["# Reference", ""], None
    elif ext in (".py", ".sh", ".ps1"):
        rel, head, line = f"scripts/run-{index}{ext}", ["#!/usr/bin/env python3" if ext == ".py" else "# script"], ext
    else:  # .xsd, .txt, .ttf, .json: assets, written as text
        rel, head, line = f"assets/data-{index}.txt", [], None
    out, size = list(head), sum(len(x) + 1 for x in head)
    while size < target:
        text = (f"# {_sentence(rng)}" if line else _sentence(rng, 3)) + "\n"
        out.append(text.rstrip("\n") + ("" if line else "\n"))
        size += len(text) + (0 if line else 1)
    return rel, "\n".join(out).rstrip("\n") + "\n"


def skill_files(rng: random.Random) -> Dict[str, str]:
    bucket = rng.choices(range(5), SHAPE["skill_files_buckets"])[0]
    count = rng.choice([(0,), (1,), (2, 3), tuple(range(4, 10)), tuple(range(10, 25))][bucket])
    files: Dict[str, str] = {}
    for i in range(count):
        rel, text = supporting_file(rng, _weighted(rng, SHAPE["skill_file_extensions"]), i)
        files[rel] = text
    return files


def plan(n: int, seed: int) -> List[Item]:
    """The items, their names and homes: flat kind directories, or plugin directories."""
    rng = random.Random(seed)
    mix = SHAPE["items"]
    counts = {k: n * v // sum(mix.values()) for k, v in mix.items()}
    counts["skill"] += n - sum(counts.values())
    words = {"rule": base.ASPECTS, "skill": base.SKILL_VERBS, "agent": base.AGENT_ROLES}
    items: List[Item] = []
    for kind in ("rule", "skill", "agent"):
        for i in range(counts[kind]):
            topic, word = rng.choice(base.TOPICS), rng.choice(words[kind])
            name = f"{word}-{topic}-{i:05d}" if kind == "skill" else f"{topic}-{word}-{i:05d}"
            items.append(Item(kind, name, topic, f"{kind}s"))
    # Plugins take about half the items (a shuffled order), grouped 1-20 at a time.
    order = list(range(len(items)))
    rng.shuffle(order)
    n_plugins, pos = max(3, int(n * SHAPE["plugins_per_item"])), 0
    p25, p50, p75, top = SHAPE["items_per_plugin_p25_p50_p75_max"]
    for p in range(n_plugins):
        size = _quantile(rng, (0, .25, .5, .75, 1), (1, p25, p50, p75, top + 1))
        for k in order[pos:pos + size]:
            items[k].home = f"plugins/{base.TOPICS[p % len(base.TOPICS)]}-kit-{p:04d}/{items[k].kind}s"
        pos += size
    return items


def _frontmatter_of(rng: random.Random, it: Item) -> List[str]:
    """The item's frontmatter fields, in the measured proportions."""
    fm = [f"name: {it.name}"]
    if it.kind == "rule":
        lead = f"{it.topic.capitalize()} {it.name.split('-')[1]} for code in this area"
        fm.append(f"description: {base_quote(description(rng, 'rule', lead))}")
        if rng.random() < SHAPE["rule_share_scoped"]:
            fm += ["scope:"] + base._yaml_list("paths", [f'"{g}"' for g in rng.sample(base.PATH_GLOBS,
                                                                                        rng.randint(1, 3))], "  ")
        return fm
    if it.kind == "skill":
        verb = it.name.split("-")[0]
        lead = f"Use when you need to {verb} {it.topic} work."
        fm.append(f"description: {base_quote(description(rng, 'skill', lead))}")
        share = SHAPE["skill_fields_share"]
        if rng.random() < share["license"]:
            fm.append("license: Apache-2.0")
        if rng.random() < share["metadata"]:
            fm += ["metadata:", f"  author: {rng.choice(base.AUTHORS)}"]
        if rng.random() < share["compatibility"]:
            fm.append("compatibility: Needs git and a POSIX shell.")
        # Fields for some clients only: after the format's own, as `agentrc fmt` orders them.
        if rng.random() < share["allowed-tools"]:
            fm.append("allowed-tools: Read, Grep, Bash")
        if rng.random() < share["argument-hint"]:
            fm.append('argument-hint: "[path]"')
        if rng.random() < share["version"]:
            fm.append(f'version: "{rng.randint(0, 3)}.{rng.randint(0, 9)}.0"')
        return fm
    role = it.name.split("-")[1]
    fm.append(f"description: {base_quote(description(rng, 'agent', f'Use when a change needs a {it.topic} {role}.'))}")
    share = SHAPE["agent_fields_share"]
    if rng.random() < share["mode"]:
        fm.append("mode: subagent")
    if rng.random() < share["model"]:
        fm.append(f"model: {rng.choice(base.MODELS)}")
    if _weighted(rng, SHAPE["agent_tools"]) == "list":  # absent or a wildcard: every tool
        fm += base._yaml_list("tools", rng.sample(base.TOOLS, rng.randint(2, len(base.TOOLS))))
    if rng.random() < share["color"]:
        fm += ["claude:", f"  color: {rng.choice(COLORS)}"]
    return fm


def base_quote(text: str) -> str:
    """`text` as a YAML double-quoted scalar (sentences hold ': ' and quotes)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(items: List[Item], seed: int) -> Dict[str, str]:
    """Map of relative path -> file content for the whole registry."""
    files: Dict[str, str] = {}
    for it in items:
        rng = random.Random(f"{seed}:{it.kind}:{it.name}")
        fm = _frontmatter_of(rng, it)
        if it.kind == "skill":
            it.extra_files = skill_files(rng)
        links = sorted(it.extra_files)
        title = " ".join(w.capitalize() for w in it.name.split("-")[:2])
        entry = {"rule": "RULE.md", "skill": "SKILL.md", "agent": "AGENT.md"}[it.kind]
        where = f"{it.home}/{it.name}"
        files[f"{where}/{entry}"] = base._frontmatter(fm) + "\n".join(body(rng, it.kind, title, links)) + "\n"
        for rel, text in it.extra_files.items():
            files[f"{where}/{rel}"] = text
    files.update(bundles(items))
    return files


def bundles(items: List[Item]) -> Dict[str, str]:
    """One bundle per plugin directory, listing its items; the first five carry an MCP server each."""
    plugins: Dict[str, List[Item]] = {}
    for it in items:
        if it.home.startswith("plugins/"):
            plugins.setdefault(it.home.split("/")[1], []).append(it)
    files: Dict[str, str] = {}
    for p, (name, members) in enumerate(sorted(plugins.items())):
        lines = ["schema: 1", f"name: {name}", f"description: The {name.split('-')[0]} plugin's items",
                 "items:"]
        for kind in ("rule", "skill", "agent"):
            picked = sorted(it.name for it in members if it.kind == kind)
            if picked:
                lines += base._yaml_list(f"{kind}s", picked, "  ")
        if p < len(base.MCP_SERVERS):
            lines += ["mcps:"] + ["  " + line for line in base.MCP_SERVERS[p]]
        lines += ["metadata:", '  version: "1.0.0"']
        files[f"plugins/{name}/{name}.bundle.yaml"] = "\n".join(lines) + "\n"
    return files


def generate(out: str, n: int, seed: int = 1) -> Dict[str, str]:
    return base.write_tree(out, render(plan(n, seed), seed), (".sh", ".py"))


def main(argv: Optional[List[str]] = None) -> int:
    return base.cli(argv, __doc__.splitlines()[0], generate)


if __name__ == "__main__":
    sys.exit(main())
