#!/usr/bin/env python3
"""Measure the shape of published AI-assistant content, for bench/gen_published.py's table.

    python bench/corpus_shape.py GIT_DIR [GIT_DIR...]   # bare or mirror git directories

The second benchmark corpus (issue 36) must look like what people publish, not like what
agentrc's own generator was tuned on; this script reads the HEAD tree of each repository
given (no work tree needed: `git ls-tree` and `git cat-file --batch`) and prints numbers
only: how many skills, agents and rules, supporting files per skill, body and description
lengths, how bodies start (an H1 first line) and how often fences carry no language,
agents' tool lists (absent, a list, a wildcard), rules per directory, the frontmatter
fields used. Content is read to be counted, never printed or kept.

What counts as what:
- a skill: a `SKILL.md`; its supporting files are the other files under its directory;
- an agent: a markdown file under a directory named `agents` (README.md aside) or a
  `*.agent.md`;
- a rule: a `*.instructions.md` (Copilot), a `*.mdc` (Cursor), or a markdown file under
  a directory named `rules`.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
from typing import Dict, Iterable, List, Optional, Tuple

import yaml

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
HEADING = re.compile(r"^(#{1,6})\s")


def ls_tree(git_dir: str) -> Dict[str, int]:
    """Path -> size of every blob at HEAD."""
    out = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-l", "HEAD"],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    sizes = {}
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        size = meta.split()[3]
        sizes[path] = int(size) if size.isdigit() else 0
    return sizes


def read_blobs(git_dir: str, paths: Iterable[str]) -> Dict[str, bytes]:
    """The bytes of each path at HEAD, through one `git cat-file --batch` process."""
    paths = list(paths)
    request = "".join(f"HEAD:{p}\n" for p in paths).encode()
    out = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch"], input=request,
                         check=True, stdout=subprocess.PIPE).stdout
    blobs, pos = {}, 0
    for p in paths:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        if header[-1] == b"missing":
            pos = end + 1
            continue
        size = int(header[2])
        blobs[p] = out[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
    return blobs


def classify(path: str) -> Optional[str]:
    base = os.path.basename(path)
    parts = path.split("/")
    if base == "SKILL.md":
        return "skill"
    if not base.endswith((".md", ".mdc")) or base.lower() in ("readme.md", "license.md", "changelog.md"):
        return None
    if base.endswith(".agent.md") or (base.endswith(".md") and "agents" in parts[:-1]):
        return "agent"
    if base.endswith((".instructions.md", ".mdc")) or "rules" in parts[:-1]:
        return "rule"
    return None


def split_doc(text: str) -> Tuple[dict, str]:
    if text.startswith("---\n") or text.startswith("---\r\n"):
        text = text.replace("\r\n", "\n")
        end = text.find("\n---", 4)
        if end > 0:
            try:
                fm = yaml.safe_load(text[4:end]) or {}
            except yaml.YAMLError:  # Cursor's `globs: *.ts` is no YAML: keys from the lines
                fm = {m.group(1): m.group(2) for m in re.finditer(r"^([A-Za-z][\w-]*):[ \t]*(.*)$",
                                                                  text[4:end], re.M)}
                fm["<not-yaml>"] = True
            return (fm if isinstance(fm, dict) else {}), text[end + 4:].lstrip("\n")
    return {}, text


def body_shape(body: str) -> dict:
    """How a body is built: its first line an H1, headings per level, fences with and without a language."""
    lines = body.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    levels: collections.Counter = collections.Counter()
    fences = bare = 0
    inside: Optional[str] = None
    for ln in lines:
        m = FENCE.match(ln)
        if m:
            if inside is None:
                inside = m.group(1)[0]
                fences += 1
                bare += not m.group(2).strip()
            elif m.group(1)[0] == inside and not m.group(2).strip():
                inside = None
            continue
        if inside is None:
            h = HEADING.match(ln)
            if h:
                levels[len(h.group(1))] += 1
    return {"bytes": len(body.encode()), "h1_first": first.startswith("# "),
            "h1_any": levels[1] > 0, "levels": dict(levels), "fences": fences, "bare": bare}


def tools_shape(fm: dict) -> str:
    tools = fm.get("tools", fm.get("allowed-tools"))
    if tools is None:
        return "absent"
    items = tools if isinstance(tools, list) else [t.strip() for t in str(tools).split(",") if t.strip()]
    if any("*" in str(t) for t in items):
        return "wildcard"
    return f"list:{len(items)}"


def measure(git_dir: str) -> dict:
    paths = ls_tree(git_dir)
    kinds = {p: classify(p) for p in paths}
    entries = [p for p, k in kinds.items() if k]
    blobs = read_blobs(git_dir, entries)
    out: Dict[str, list] = collections.defaultdict(list)
    skill_dirs = sorted({os.path.dirname(p) for p, k in kinds.items() if k == "skill"})
    for p in entries:
        fm, body = split_doc(blobs.get(p, b"").decode("utf-8", "replace"))
        desc = fm.get("description")
        rec = {"kind": kinds[p], "fields": sorted(str(k) for k in fm), "dir": os.path.dirname(p),
               "desc": len(str(desc)) if desc is not None else None, **body_shape(body)}
        if kinds[p] == "agent":
            rec["tools"] = tools_shape(fm)
        if kinds[p] == "rule":
            rec["scoped"] = any(fm.get(k) not in (None, "", "**", "**/*") for k in ("applyTo", "globs", "paths"))
        out[kinds[p]].append(rec)
    for d in skill_dirs:
        inner = [p for p in paths if p.startswith(d + "/") and p != d + "/SKILL.md"
                 and not any(p.startswith(o + "/") for o in skill_dirs if o != d and o.startswith(d + "/"))]
        exts = collections.Counter(os.path.splitext(p)[1] or "<none>" for p in inner)
        out["skill_files"].append({"files": len(inner), "exts": dict(exts), "sizes": [paths[p] for p in inner]})
    return out


def pct(values: List[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0


def summary(records: Dict[str, list]) -> dict:
    res: dict = {}
    for kind in ("skill", "agent", "rule"):
        recs = records.get(kind, [])
        if not recs:
            continue
        sizes = [r["bytes"] for r in recs]
        descs = [r["desc"] for r in recs if r["desc"] is not None]
        fields: collections.Counter = collections.Counter(f for r in recs for f in r["fields"])
        res[kind] = {
            "count": len(recs),
            "body_bytes_p10_p25_p50_p75_p90": [pct(sizes, q) for q in (0.1, 0.25, 0.5, 0.75, 0.9)],
            "desc_chars_p10_p50_p90": [pct(descs, q) for q in (0.1, 0.5, 0.9)],
            "share_h1_first": round(sum(r["h1_first"] for r in recs) / len(recs), 2),
            "share_h1_any": round(sum(r["h1_any"] for r in recs) / len(recs), 2),
            "share_with_fences": round(sum(1 for r in recs if r["fences"]) / len(recs), 2),
            "share_with_bare_fence": round(sum(1 for r in recs if r["bare"]) / len(recs), 2),
            "bare_of_all_fences": round(sum(r["bare"] for r in recs) / max(1, sum(r["fences"] for r in recs)), 2),
            "headings_per_body_p50": pct([sum(r["levels"].values()) for r in recs], 0.5),
            "fields_share": {k: round(v / len(recs), 2) for k, v in fields.most_common(12)},
        }
        if kind == "agent":
            tools = collections.Counter(r["tools"].split(":")[0] for r in recs)
            res[kind]["tools"] = {k: round(v / len(recs), 2) for k, v in tools.items()}
            res[kind]["tool_list_len_p50"] = pct([int(r["tools"].split(":")[1]) for r in recs
                                                  if r["tools"].startswith("list:")], 0.5)
        if kind == "rule":
            per_dir = collections.Counter(r["dir"] for r in recs)
            res[kind]["share_scoped"] = round(sum(r["scoped"] for r in recs) / len(recs), 2)
            res[kind]["rules_per_directory"] = sorted(per_dir.values(), reverse=True)[:5]
    files = [r["files"] for r in records.get("skill_files", [])]
    if files:
        exts: collections.Counter = collections.Counter()
        for r in records["skill_files"]:
            exts.update(r["exts"])
        res["skill_files"] = {
            "skills": len(files), "share_with_any": round(sum(1 for f in files if f) / len(files), 2),
            "per_skill_p50_p75_p90_max": [pct(files, q) for q in (0.5, 0.75, 0.9)] + [max(files)],
            "buckets_0_1_2to3_4to9_10up": [sum(1 for f in files if lo <= f <= hi)
                                           for lo, hi in ((0, 0), (1, 1), (2, 3), (4, 9), (10, 10**9))],
            "extensions": dict(exts.most_common(8)),
            "file_bytes_p25_p50_p75_p90": [pct([s for r in records["skill_files"] for s in r["sizes"]], q)
                                           for q in (0.25, 0.5, 0.75, 0.9)],
        }
    return res


def main(argv: List[str]) -> int:
    total: Dict[str, list] = collections.defaultdict(list)
    for git_dir in argv:
        recs = measure(git_dir)
        print(f"== {git_dir}")
        print(json.dumps(summary(recs), indent=1, sort_keys=True))
        for k, v in recs.items():
            total[k] += v
    if len(argv) > 1:
        print("== all")
        print(json.dumps(summary(total), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
