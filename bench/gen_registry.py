#!/usr/bin/env python3
"""Generate a deterministic, realistic agentrc source registry of N items for benchmarks.

    python bench/gen_registry.py --items 1000 --out bench/out/reg-1000 [--seed 1]

The same (items, seed) always produces byte-identical trees. The mix follows the shape of
a large organisation's registry (issue 13):

- 40% rules: half of them path-scoped (scope.paths), some with a supporting file;
- 40% skills: about two thirds with supporting files (references/*.md, scripts/*.sh)
  linked from the body, some requiring a rule; a few with a client directive block;
- 20% agents: tools, a model alias, mode on some, preload-skills on about half;
- bundles (one per ~200 items, at least 3), one requiring another, and 5 MCP servers
  among them (3 local, 2 remote).

Bodies are 1-6 KiB: headings from ## (### below them, never skipping levels), bullet
lists, numbered steps, and fenced code blocks that always carry a language. The output
lints clean with `agentrc lint` (no errors, no warnings).

Only the standard library is used; the module is importable (see `generate`).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

TOPICS = [
    "api", "auth", "billing", "cache", "ci", "cli", "config", "data", "db", "deploy",
    "docs", "errors", "events", "frontend", "graphql", "i18n", "infra", "ios", "android",
    "k8s", "logging", "metrics", "migrations", "mobile", "network", "payments", "perf",
    "queue", "release", "search", "security", "storage", "testing", "tracing", "ui", "web",
]
ASPECTS = [
    "conventions", "guidelines", "checklist", "patterns", "hygiene", "standards", "review",
    "style", "safety", "layout", "naming", "errors", "limits", "policy", "workflow",
]
SKILL_VERBS = [
    "scaffold", "migrate", "audit", "debug", "profile", "document", "refactor", "triage",
    "generate", "upgrade", "benchmark", "validate", "bootstrap", "summarize",
]
AGENT_ROLES = [
    "reviewer", "planner", "runner", "writer", "auditor", "investigator", "mentor",
    "architect", "tester", "maintainer",
]
PATH_GLOBS = [
    "src/**/*.ts", "src/**/*.tsx", "app/src/**/*.kt", "services/**/*.go", "lib/**/*.py",
    "**/*.sql", "infra/**/*.tf", "charts/**/*.yaml", "web/**/*.vue", "ios/**/*.swift",
    "crates/**/*.rs", "tests/**/*.py", "docs/**/*.md", "scripts/**/*.sh", "proto/**/*.proto",
]
AUTHORS = ["platform-dx", "platform-api", "platform-security", "mobile-core", "data-eng",
           "web-platform", "sre", "release-eng"]
TOOLS = ["read", "write", "edit", "bash", "grep", "glob", "web-fetch", "web-search"]
MODELS = ["sonnet", "opus", "haiku", "inherit"]

SENTENCES = [
    "Prefer small, reviewable changes that keep the build green at every step.",
    "Validate every input at the boundary and fail with a message that names the field.",
    "Never log secrets, tokens, or personal data, even at debug level.",
    "Keep functions short enough to read without scrolling, and name them for what they return.",
    "Write the test first when fixing a bug, so the regression stays caught.",
    "Document why a decision was made, not what the code already says.",
    "Use the project's shared error types instead of ad-hoc strings.",
    "Make retries idempotent and bound them with a deadline, not a count alone.",
    "Prefer composition over inheritance for new modules.",
    "Keep configuration in one place and read it once at startup.",
    "Measure before optimising, and keep the benchmark next to the change.",
    "Return early on errors so the happy path stays unindented.",
    "Treat warnings as errors in CI, and fix them rather than silencing them.",
    "Pin dependency versions and update them in dedicated commits.",
    "Use structured logging with stable field names that dashboards can query.",
    "Keep public interfaces stable; deprecate before removing.",
    "Check permissions on the server even when the client already hides the action.",
    "Name feature flags after the behaviour they enable and delete them after rollout.",
    "Paginate every list endpoint and document its maximum page size.",
    "Prefer explicit time zones and store timestamps in UTC.",
    "Guard shared state with the narrowest lock that keeps it consistent.",
    "Write migrations so they can run twice without harm.",
    "Keep generated code out of review diffs by marking it as generated.",
    "Explain each failing test with the assertion, the likely cause, and the smallest fix.",
]

CODE_SNIPPETS = {
    "python": [
        "def load_config(path: str) -> dict:",
        "    with open(path, encoding=\"utf-8\") as fh:",
        "        return json.load(fh)",
        "",
        "def retry(fn, attempts=3):",
        "    for i in range(attempts):",
        "        try:",
        "            return fn()",
        "        except TimeoutError:",
        "            time.sleep(2 ** i)",
    ],
    "typescript": [
        "export async function handler(req: Request): Promise<Response> {",
        "  const body = schema.parse(await req.json());",
        "  const result = await service.create(body);",
        "  return Response.json(result, { status: 201 });",
        "}",
        "",
        "export const schema = z.object({ name: z.string().min(1) });",
    ],
    "bash": [
        "set -euo pipefail",
        "base=$(git merge-base HEAD origin/main)",
        "git log --oneline \"$base\"..HEAD",
        "git diff --stat \"$base\"..HEAD",
    ],
    "go": [
        "func (s *Server) Get(ctx context.Context, id string) (*Item, error) {",
        "\tctx, cancel := context.WithTimeout(ctx, 2*time.Second)",
        "\tdefer cancel()",
        "\titem, err := s.store.Find(ctx, id)",
        "\tif err != nil {",
        "\t\treturn nil, fmt.Errorf(\"get %s: %w\", id, err)",
        "\t}",
        "\treturn item, nil",
        "}",
    ],
    "kotlin": [
        "class ProfileViewModel(private val io: CoroutineDispatcher) : ViewModel() {",
        "    fun refresh() = viewModelScope.launch(io) { repository.refresh() }",
        "}",
    ],
    "yaml": [
        "retries:",
        "  attempts: 3",
        "  backoff: exponential",
        "timeouts:",
        "  connect: 2s",
        "  read: 10s",
    ],
    "sql": [
        "ALTER TABLE orders ADD COLUMN IF NOT EXISTS archived_at timestamptz;",
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_archived_idx ON orders (archived_at);",
    ],
    "text": [
        "type(scope): summary in the imperative mood",
        "",
        "Why the change is needed, in one or two sentences.",
    ],
}
LANGS = sorted(CODE_SNIPPETS)

# Five MCP servers, spread over the bundles: three local, two remote.
MCP_SERVERS = [
    ["schema-tools:", "  local:", "    command: npx", '    args: ["-y", "@example/schema-mcp"]',
     "    env:", "      SCHEMA_ROOT: ./schemas"],
    ["api-docs:", "  remote:", "    type: http", "    url: https://docs.example.com/mcp", "    headers:",
     '      Authorization: "Bearer ${API_DOCS_TOKEN}"', "  requires-env: [API_DOCS_TOKEN]"],
    ["db-inspect:", "  local:", "    command: uvx", '    args: ["db-inspect-mcp", "--read-only"]'],
    ["tracker:", "  remote:", "    type: http", "    url: https://tracker.example.com/mcp"],
    ["repo-search:", "  local:", "    command: npx", '    args: ["-y", "@example/repo-search-mcp"]'],
]


@dataclass
class Item:
    kind: str  # rule | skill | agent
    name: str
    topic: str
    index: int
    extra_files: Dict[str, str] = field(default_factory=dict)  # relative path -> content


def _sentence(rng: random.Random, n: int = 1) -> str:
    return " ".join(rng.choice(SENTENCES) for _ in range(n))


def _body(rng: random.Random, title: str, links: List[str], target_bytes: int) -> List[str]:
    """A markdown body of about target_bytes bytes: ## sections, ### subsections, lists, code."""
    lines: List[str] = [f"## {title}", "", _sentence(rng, 2), ""]
    for rel in links:
        label = os.path.splitext(os.path.basename(rel))[0].replace("-", " ")
        lines.append(f"- See [{label}](./{rel}) before you start.")
    if links:
        lines.append("")
    section = 0
    while sum(len(line) + 1 for line in lines) < target_bytes:
        section += 1
        lines += [f"## {rng.choice(ASPECTS).capitalize()} {section}", ""]
        shape = rng.randrange(4)
        if shape == 0:
            lines += [f"- {_sentence(rng)}" for _ in range(rng.randint(3, 6))]
        elif shape == 1:
            lines += [f"{i}. {_sentence(rng)}" for i in range(1, rng.randint(3, 6) + 1)]
        elif shape == 2:
            lang = rng.choice(LANGS)
            lines += [_sentence(rng), "", f"```{lang}"] + CODE_SNIPPETS[lang] + ["```"]
        else:
            lines += [_sentence(rng, 2), "", f"### Details {section}", "",
                      f"- {_sentence(rng)}", f"- {_sentence(rng)}"]
        lines.append("")
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def _yaml_list(key: str, values: List[str], indent: str = "") -> List[str]:
    return [f"{indent}{key}:"] + [f"{indent}  - {v}" for v in values]


def _frontmatter(fields: List[str]) -> str:
    return "---\n" + "\n".join(fields) + "\n---\n\n"


def plan(n: int, seed: int) -> List[Item]:
    rng = random.Random(seed)
    n_rules = n * 40 // 100
    n_skills = n * 40 // 100
    n_agents = n - n_rules - n_skills
    items: List[Item] = []
    for kind, count, words in (("rule", n_rules, ASPECTS), ("skill", n_skills, SKILL_VERBS),
                               ("agent", n_agents, AGENT_ROLES)):
        for i in range(count):
            topic = rng.choice(TOPICS)
            word = rng.choice(words)
            name = (f"{topic}-{word}-{i:05d}" if kind != "skill" else f"{word}-{topic}-{i:05d}")
            items.append(Item(kind, name, topic, i))
    return items


def render(items: List[Item], seed: int) -> Dict[str, str]:
    """Map of relative path -> file content for the whole registry."""
    files: Dict[str, str] = {}
    rules = [it for it in items if it.kind == "rule"]
    skills = [it for it in items if it.kind == "skill"]
    agents = [it for it in items if it.kind == "agent"]
    for it in items:
        rng = random.Random(f"{seed}:{it.kind}:{it.name}")
        author = rng.choice(AUTHORS)
        version = f"{rng.randint(0, 3)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}"
        links: List[str] = []
        requires: List[str] = []  # canonical order puts requires after metadata
        fm: List[str] = ["schema: 1", f"name: {it.name}"]
        if it.kind == "rule":
            base = f"rules/{it.name}"
            fm.append(f"description: {it.topic.capitalize()} {it.name.split('-')[1]} for every change "
                      f"that touches {it.topic} code")
            fm.append("license: proprietary")
            if it.index % 2 == 0:  # half of the rules are path-scoped
                globs = rng.sample(PATH_GLOBS, rng.randint(1, 3))
                fm += ["scope:"] + _yaml_list("paths", [f'"{g}"' for g in globs], "  ")
            if rng.random() < 0.15:
                rel = "checklist.md"
                it.extra_files[rel] = "# Checklist\n\n" + "\n".join(
                    f"- [ ] {_sentence(rng)}" for _ in range(rng.randint(5, 15))) + "\n"
                links.append(rel)
            entry, title = "RULE.md", f"{it.topic.capitalize()} {it.name.split('-')[1]}"
        elif it.kind == "skill":
            base = f"skills/{it.name}"
            verb = it.name.split("-")[0]
            fm.append(f"description: Use when you need to {verb} {it.topic} components following the "
                      f"project's conventions and checks")
            fm.append("license: proprietary")
            for r in range(rng.choice([0, 0, 0, 1, 1, 2])):
                rel = f"references/{it.topic}-{rng.choice(ASPECTS)}-{r}.md"
                it.extra_files[rel] = "# Reference\n\n" + "\n\n".join(
                    _sentence(rng, 3) for _ in range(rng.randint(4, 20))) + "\n"
                links.append(rel)
            for s in range(rng.choice([0, 0, 0, 0, 1, 2])):
                rel = f"scripts/{verb}-{s}.sh"
                it.extra_files[rel] = ("#!/usr/bin/env bash\nset -euo pipefail\n"
                                       + "\n".join(CODE_SNIPPETS["bash"][1:]) + "\n")
                links.append(rel)
            if rules and rng.random() < 0.3:
                requires = ["requires:"] + _yaml_list("rules", [rng.choice(rules).name], "  ")
            entry, title = "SKILL.md", f"{verb.capitalize()} {it.topic}"
        else:
            base = f"agents/{it.name}"
            role = it.name.split("-")[1]
            fm.append(f"description: Use when a change needs a {it.topic} {role} to check it and "
                      f"report findings")
            fm.append("license: proprietary")
            if rng.random() < 0.5:
                fm.append("mode: subagent")
            fm.append(f"model: {rng.choice(MODELS)}")
            fm += _yaml_list("tools", rng.sample(TOOLS, rng.randint(2, 5)))
            if skills and rng.random() < 0.5:
                fm += _yaml_list("preload-skills", sorted({rng.choice(skills).name
                                                           for _ in range(rng.randint(1, 2))}))
            entry, title = "AGENT.md", f"{it.topic.capitalize()} {role}"
        fm += ["metadata:", f'  version: "{version}"', f"  author: {author}"] + requires
        body = _body(rng, title, links, rng.randint(1024, 6144 - 300))  # a section may overshoot by ~300 bytes
        if it.kind == "skill" and rng.random() < 0.1:
            body += ["", "<!-- @client:claude -->", "Use the Write tool for new files rather than Edit.",
                     "<!-- @endclient -->"]
        files[f"{base}/{entry}"] = _frontmatter(fm) + "\n".join(body) + "\n"
        for rel, content in it.extra_files.items():
            files[f"{base}/{rel}"] = content

    # Bundles: one per ~200 items (at least 3), each a slice of every kind.
    n_bundles = max(3, len(items) // 200)
    brng = random.Random(f"{seed}:bundles")
    names = []
    for b in range(n_bundles):
        name = f"{TOPICS[b % len(TOPICS)]}-bundle-{b:03d}"
        names.append(name)
        lines = ["schema: 1", f"name: {name}",
                 f"description: Rules, skills and agents for {TOPICS[b % len(TOPICS)]} work",
                 "license: proprietary", "items:"]
        for kind, pool in (("rules", rules), ("skills", skills), ("agents", agents)):
            if pool:
                picked = sorted({brng.choice(pool).name for _ in range(min(len(pool), 12))})
                lines += _yaml_list(kind, picked, "  ")
        if b > 0:
            lines += ["requires:", f"  - name: {names[0]}", '    version: "^1.0.0"']
        servers = [k for k in range(len(MCP_SERVERS)) if k % n_bundles == b]
        if servers:
            lines.append("mcps:")
            for k in servers:
                lines += ["  " + line for line in MCP_SERVERS[k]]
        lines += ["metadata:", f'  version: "1.{b}.0"', "  author: platform-dx"]
        files[f"bundles/{name}.bundle.yaml"] = "\n".join(lines) + "\n"
    return files


def generate(out: str, n: int, seed: int = 1) -> Dict[str, str]:
    return write_tree(out, render(plan(n, seed), seed), (".sh",))


def write_tree(out: str, files: Dict[str, str], executable: Tuple[str, ...]) -> Dict[str, str]:
    """`files` (relative path -> text) written into `out`, made anew; names ending in one of
    `executable` get mode 755. Shared by both corpus generators."""
    if os.path.exists(out):
        shutil.rmtree(out)
    for rel, content in files.items():
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(content)
        if rel.endswith(executable):
            os.chmod(path, 0o755)
    return files


def cli(argv: Optional[List[str]], description: str, make: Callable[[str, int, int], Dict[str, str]]) -> int:
    """A generator's command line: --items, --seed, --out; prints what it wrote."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--items", type=int, default=1000, help="number of items (default 1000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="registry directory to (re)create")
    args = ap.parse_args(argv)
    files = make(args.out, args.items, args.seed)
    total = sum(len(c.encode()) for c in files.values())
    print(f"{args.out}: {args.items} items, {len(files)} files, {total / 1e6:.1f} MB", file=sys.stderr)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    return cli(argv, __doc__.splitlines()[0], generate)


if __name__ == "__main__":
    sys.exit(main())
