"""Seeds and mutations of the fetch surfaces' fuzz targets (issue 30): a source's tree as
`agentrc add` fetches it, `agentrc.lock.json`, and spec 003's `oas.json`,
`oas-package.json`, `oas-lock.json` and `oas-config.yaml`.

Why its own pools: the generic mutations of `fuzzlib` rarely write what an attacker of these
surfaces writes (a `requires` source of `file:///`, a lock source of `/`, a token in a URL,
a file name holding an escape sequence, a link chain). These pools put those values where
the parser will meet them; the generic mutations still run on top.

`@CASE@` in a file stands for the case directory (written in when the case is laid out), so
a seed can name an absolute path inside the case without knowing where it is.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Dict, List, Tuple

import fuzzlib

Files = Dict[str, bytes]
Links = Dict[str, str]

# A git source the fuzz fetcher serves from the case's `remote/` directory (no git, no net).
REMOTE = "https://example.invalid/remote.git"

SOURCES = ["../other", "./other", "./vendor", "vendor", "./vendor/../..", "./vendor#skills",
           "../other#rules", "other", "/", "~", "~/x", "..", "../..", "../../../../..",
           ".", "./", "../src", "file:///", "file:///etc", "file://@CASE@/other", "@CASE@/other", "/etc",
           "/dev/stdin", REMOTE, REMOTE + "@v1", REMOTE + "#sub", REMOTE + "@v1#../..", REMOTE + "@-x",
           "https://ghp_0123456789abcdefghijklmnopqrstuvwxyz@example.invalid/r.git",
           "https://user:hunter2@example.invalid/r.git@v1", "ext::sh -c touch% /tmp/pwned", "fd::3",
           "--upload-pack=touch /tmp/pwned", "-oProxyCommand=x", "ssh://-oProxyCommand=x@example.invalid/r",
           "git@example.invalid:org/repo.git", "http://example.invalid/x.git", "git://example.invalid/x",
           "owner/repo", "owner/repo@v1#a/../../b", "a\x00b", "x\x1b[2K\rall good", "x\ny", "\u202eevil",
           "C:\\x", "\\\\host\\share", "x" * 3000, "", " ", "#", "@", "@v1", "../other@v1"]
# The secrets in SOURCES' URLs: no output, diagnostic or error may show them (issue 30 §4).
SECRETS = ("hunter2", "ghp_0123456789abcdefghijklmnopqrstuvwxyz")
NAMES = ["x\x1b[2K\rall good\x1b[8m", "a\nb", "-h", "--scope=user", "..", ".", "", "a/b", "CON", "x" * 300,
         "\u00e9", "e\u0301", "\ud800", "\u202e", "caf\u00e9.md", " lead", "trail ", "*", "$(id)", "`id`"]
ODD_COMPONENTS = ["x\x1b[2K\rall good\x1b[8m", "a\nb", "-rf", " ", "..x", ".hidden", "\u202etxt.md", "e\u0301",
                  "\udcff\udcfe", "x" * 250, "a\\b", "a:b", "SKILL.md ", "RULE.MD", "*", "?", "\t"]
LINK_TARGETS = ["/", "/etc/passwd", "/dev/zero", "/dev/stdin", "/proc/self/environ", "@CASE@/outside",
                "@CASE@/outside/secret.txt", "../../outside/secret.txt", "../../../outside", ".", "..", "self",
                "missing", "RULE.md", "../rules", "@CASE@/src"]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- seeds ---------------------------------------------------------------------------------

def source_seed() -> Files:
    """The consumer's view: `src/` (examples/registry and a bundle requiring across sources),
    `other/` (a local source it requires), `remote/` (served as REMOTE, itself requiring
    back), `outside/` (a secret no source may reach) and the project `project/`."""
    files = fuzzlib._read_tree(fuzzlib.ROOT / "examples" / "registry", "src")
    files["src/bundles/cross.bundle.yaml"] = (
        b"schema: 1\nname: cross\ndescription: Requires across sources\nitems:\n  rules:\n    - commit-style\n"
        b"  skills:\n    - crossing\nrequires:\n  - { name: base, source: \"file://@CASE@/other\" }\n")
    files["src/skills/crossing/SKILL.md"] = (
        b"---\ndescription: Crosses sources\nrequires:\n  rules:\n"
        b"    - { name: shared, source: \"file://@CASE@/other\" }\n"
        b"  skills:\n    - { name: fetched, source: \"" + REMOTE.encode() + b"\" }\n---\n\nCross.\n")
    files["other/rules/shared/RULE.md"] = b"---\ndescription: Shared rule\n---\n\nShare.\n"
    files["other/skills/helper/SKILL.md"] = b"---\ndescription: Helps\n---\n\nHelp.\n"
    files["other/bundles/base.bundle.yaml"] = (b"schema: 1\nname: base\ndescription: Base\nitems:\n  rules:\n"
                                               b"    - shared\n")
    files["remote/skills/fetched/SKILL.md"] = (b"---\ndescription: Fetched\nrequires:\n  skills:\n"
                                               b"    - { name: helper, source: \"" + REMOTE.encode() + b"#sub\" }\n"
                                               b"---\n\nFetched.\n")
    files["remote/sub/skills/helper/SKILL.md"] = b"---\ndescription: Helps remotely\n---\n\nHelp.\n"
    files["remote/bundles/net.bundle.yaml"] = (b"schema: 1\nname: net\ndescription: From the net\nitems:\n"
                                               b"  skills:\n    - fetched\n")
    files["outside/secret.txt"] = b"SECRET\n"
    files["project/keep.txt"] = b"the user's own file\n"
    return files


def oas_seeds() -> Dict[str, List[bytes]]:
    """Real documents of each spec 003 kind: the fuzz package's and a scope that installed it."""
    cap = fuzzlib._cap_seed()
    scope = fuzzlib._built(cap, ["cap", "install", "./in/pkg", "--dir", "."])
    caps = [b for p, b in sorted(cap.items()) if p.endswith("/oas.json")]
    caps.append(json.dumps({"capability": "a.b", "version": "1.0.0", "description": "d", "skills": ["s"],
                            "hooks": {"soul-scaffold": "bin/x", "spawn": {"command": "bin/y", "required": True}},
                            "requires": [{"runtime": "codex", "install": "npm i -g x", "why": "w"}]}).encode())
    configs = [scope[p] for p in sorted(scope) if p.endswith("oas-config.yaml")]
    configs += [
        b"name: x\nteam: {name: t, id: t1}\nagent-types:\n  developers: {description: Devs}\ncapabilities:\n"
        b"  layers:\n    messaging:\n      capability: demo.chat\n      from: installed\n      settings: {depth: 1}\n"
        b"      injection-override: injects/custom.md\n    tasks: none\n  additive:\n    demo.review:\n"
        b"      agent-types: [developers]\n      souls:\n        dev: {enabled: false}\n"
        b"agents-md-injection: {team: notes/team.md}\nwork-modes:\n  checkout: {setup: setup.sh}\n"
        b"skill-overrides: {send: \"off\"}\noas: {injection-override: kernel.md}\n"]
    return {"oas.json": caps, "oas-package.json": [cap["in/pkg/oas-package.json"]],
            "oas-lock.json": [scope["oas-lock.json"]], "oas-config.yaml": configs}


# --- mutations -----------------------------------------------------------------------------

def _domain_value(rng: random.Random, pool: List[object]) -> object:
    value = rng.choice(pool)
    return value() if callable(value) else value


def mutate_doc(data: object, rng: random.Random, pool: List[object]) -> Tuple[object, str]:
    """A mutation of a parsed document: generic (`fuzzlib`), or a value of the surface's own
    pool at a random node, mostly one of the node's own type (a string for a string, a
    record for a record) so that the document still passes its schema and reaches the code
    behind it."""
    data = json.loads(json.dumps(data))  # a private copy: seeds are shared between cases
    r = rng.random()
    if r < 0.3:
        return fuzzlib._mutate_data(data, rng)
    nodes = [p for p in fuzzlib._nodes(data) if p]
    if not nodes:
        return _domain_value(rng, pool), "root replaced by a domain value"
    path = rng.choice(nodes)
    parent = data
    for p in path[:-1]:
        parent = parent[p]  # type: ignore[index]
    old = parent[path[-1]]  # type: ignore[index]
    label = "/".join(map(str, path))[:60]
    if r < 0.75:
        if isinstance(old, list):
            same = [v for v in pool if old and isinstance(v, type(old[0]))] or pool
            value = _domain_value(rng, same)
            old.insert(rng.randrange(len(old) + 1), value)
            return data, f"inserted into {label}: {value!r:.60}"
        same = [v for v in pool if type(v) is type(old)]
        if same:
            value = _domain_value(rng, same)
            if isinstance(parent, dict) and isinstance(old, str) and rng.random() < 0.25:
                parent[str(value)] = parent.pop(path[-1])
                return data, f"key {label} renamed to {value!r:.60}"
            parent[path[-1]] = value  # type: ignore[index]
            return data, f"{label} = {value!r:.60}"
    value = _domain_value(rng, pool)
    parent[path[-1]] = value  # type: ignore[index]
    return data, f"{label} = {value!r:.60} (any type)"


def mutate_json_bytes(raw: bytes, rng: random.Random, pool: List[object]) -> Tuple[bytes, str]:
    if rng.random() < 0.15:
        return fuzzlib._bytes(raw, rng)
    try:
        doc = json.loads(raw)
    except ValueError:
        return fuzzlib._bytes(raw, rng)
    doc, what = mutate_doc(doc, rng, pool)
    try:
        return json.dumps(doc, indent=2, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass"), what
    except (ValueError, TypeError):
        return raw, "unchanged"
