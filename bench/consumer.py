#!/usr/bin/env python3
"""The consumer workflow against its peers (issue 36): the same content, served as local git
repositories (file://) in each tool's own source format, consent given.

Rows, each timed from a cold cache where the tool has one:
- agentrc: `add` of the whole source, `install --frozen` in a fresh clone of a project that
  holds only its lock, `update` with nothing new, `import` of a Claude Code project of the same
  items (.claude/rules, skills, agents); and the references the targets are stated against:
  a cold `agentrc build` of the same content and the `git clone` of the source.
- rulesync (the version bench/run.py pins): `install` from `rulesync.jsonc` sources, the same
  followed by `generate` (what writes the clients' files), and `import` of the Claude project.
- Microsoft APM (PyPI `apm-cli`, pinned in bench/apm-requirements.txt, installed into
  bench/out/apm-venv): `install` of one package holding the items.

Repetitions are interleaved (every row once, then again), medians and peak RSS are reported,
like bench/run.py. A row a tool cannot do offline here says so, with the tool's own words.

    python3 bench/consumer.py --items 1000 --reps 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from typing import Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_registry  # noqa: E402
import run as bench  # noqa: E402

CLIENTS = "claude,copilot,opencode"
APM_VENV = os.path.join(bench.OUT, "apm-venv")
APM_REQUIREMENTS = os.path.join(HERE, "apm-requirements.txt")
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def git_repo(path: str, tag: str = "v1") -> str:
    """`path` committed as a git repository (tagged `tag`); its file:// URL."""
    env = dict(os.environ, **GIT_ENV)
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "content"], ["tag", tag]):
        subprocess.run(["git", *cmd], cwd=path, env=env, check=True, stdout=subprocess.DEVNULL)
    return "file://" + os.path.abspath(path)


def fresh(path: str, git: bool = True) -> str:
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    if git:
        subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    return path


def to_apm(reg: str, pkg: str) -> None:
    """The registry as one APM package: apm.yml and .apm/{instructions,skills,agents}."""
    bench._write(os.path.join(pkg, "apm.yml"), "name: bench-items\nversion: 1.0.0\ndescription: bench\n")
    for kind, d, fm, body in bench.walk_items(reg):
        name = fm["name"]
        if kind == "rule":
            scoped = (fm.get("scope") or {}).get("paths")
            meta = {"description": fm["description"], "applyTo": ",".join(scoped) if scoped else "**"}
            bench._write(os.path.join(pkg, ".apm", "instructions", f"{name}.instructions.md"), bench._fm(meta) + body)
        elif kind == "skill":
            bench._write(os.path.join(pkg, ".apm", "skills", name, "SKILL.md"),
                         bench._fm({"name": name, "description": fm["description"]}) + body)
            bench._copy_support(d, os.path.join(pkg, ".apm", "skills", name), "SKILL.md")
        else:
            bench._write(os.path.join(pkg, ".apm", "agents", f"{name}.agent.md"),
                         bench._fm({"name": name, "description": fm["description"]}) + body)


def ensure_apm() -> Optional[str]:
    """APM installed into bench/out/apm-venv (a Python >= 3.10 is needed); its binary, or None."""
    apm = os.path.join(APM_VENV, "bin", "apm")
    if os.path.exists(apm):
        return apm
    pythons = [p for p in (shutil.which(f"python3.{v}") for v in (13, 12, 11, 10)) if p]
    pythons += sorted((os.path.join(d, "bin", "python") for d in _pyenv_versions()), reverse=True)
    for py in pythons:
        if subprocess.run([py, "-m", "venv", APM_VENV]).returncode == 0:
            pip = os.path.join(APM_VENV, "bin", "pip")
            if subprocess.run([pip, "install", "-q", "-r", APM_REQUIREMENTS]).returncode == 0:
                return apm
        shutil.rmtree(APM_VENV, ignore_errors=True)
    return None


def _pyenv_versions() -> List[str]:
    root = os.path.expanduser("~/.pyenv/versions")
    if not os.path.isdir(root):
        return []
    return [os.path.join(root, v) for v in os.listdir(root) if v.startswith("3.1")]


Row = Tuple[str, Callable[[], Tuple[List[str], str]]]  # name, prepare() -> (command, cwd)


def agentrc_rows(w: Dict[str, str], py: str) -> List[Row]:
    cache = w["cache"]
    a = [py, w["program"]]  # as users run it (bench/run.py, `agentrc_program`)

    def cold() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    def build():
        cold()
        shutil.rmtree(w["build_out"], ignore_errors=True)
        return a + ["build", w["reg"], "--client", CLIENTS, "--out", w["build_out"]], w["base"]

    def clone():
        shutil.rmtree(w["clone"], ignore_errors=True)
        return ["git", "clone", "-q", w["agentrc_url"], w["clone"]], w["base"]

    def add():
        cold()
        return a + ["add", w["agentrc_url"] + "@v1", "--client", CLIENTS, "--trust"], fresh(w["added"])

    def frozen():
        cold()
        shutil.rmtree(w["frozen"], ignore_errors=True)
        subprocess.run(["git", "clone", "-q", w["locked"], w["frozen"]], check=True)
        return a + ["install", "--frozen", "--trust"], w["frozen"]

    def update():  # the project `add` just installed, with add's cache: nothing new upstream
        return a + ["update", "--trust"], w["added"]

    def imported():
        shutil.rmtree(w["imported"], ignore_errors=True)
        return a + ["import", w["claude"], "--out", w["imported"], "--from", "claude"], w["base"]

    return [("agentrc build, cold (reference)", build), ("git clone of the source (reference)", clone),
            # The update right after the add it follows: `frozen` empties the cache (the stamp an
            # update answers from lives there), so an update after it measured a cold fetch.
            ("agentrc add, cold cache", add), ("agentrc update, nothing new", update),
            ("agentrc install --frozen, fresh clone", frozen), ("agentrc import, Claude project", imported)]


def rulesync_rows(w: Dict[str, str], rulesync: str) -> List[Row]:
    targets = ["claudecode", "copilot", "opencode"]
    config = {"targets": targets, "features": ["rules", "skills", "subagents"],
              "sources": [{"source": w["rulesync_url"], "transport": "git", "ref": "v1",
                           "path": ".rulesync/skills", "rulesPath": ".rulesync/rules"}]}

    def project() -> str:
        p = fresh(w["rs_project"])
        bench._write(os.path.join(p, "rulesync.jsonc"), json.dumps(config, indent=2) + "\n")
        return p

    def install():
        return [rulesync, "install"], project()

    def install_generate():
        p = project()
        return ["sh", "-c", f"{rulesync} install && {rulesync} generate --targets {','.join(targets)} "
                "--features rules,skills,subagents"], p

    def imported():
        p = w["rs_import"]
        shutil.rmtree(p, ignore_errors=True)
        shutil.copytree(w["claude"], p)
        return [rulesync, "import", "--targets", "claudecode", "--features", "rules,skills,subagents"], p

    return [("rulesync install", install), ("rulesync install + generate", install_generate),
            ("rulesync import, Claude project", imported)]


def apm_rows(w: Dict[str, str], apm: str) -> List[Row]:
    def install():
        p = fresh(w["apm_project"])
        # APM takes no file:// git URL ("Invalid shorthand port"): the package as a local path.
        bench._write(os.path.join(p, "apm.yml"), "name: proj\nversion: 1.0.0\ntargets:\n  - claude\n  - copilot\n"
                     f"  - opencode\ndependencies:\n  apm:\n    - {w['apm_pkg']}\n")
        return [apm, "install"], p

    return [("APM install (local path: no file:// URLs)", install)]


def prepare(base: str, n: int, py: str, env: Dict[str, str]) -> Dict[str, str]:
    """The content in each tool's source format, as repositories; the project holding only
    agentrc's lock; the Claude Code project the imports read."""
    w = {k: os.path.join(base, k) for k in ("reg", "cache", "build_out", "clone", "added", "frozen", "locked",
                                            "claude", "imported", "rs_src", "rs_project", "rs_import", "apm_pkg",
                                            "apm_project")}
    w["base"] = base
    gen_registry.generate(w["reg"], n)
    w["agentrc_url"] = git_repo(w["reg"])
    bench.to_rulesync(w["reg"], w["rs_src"])
    w["rulesync_url"] = git_repo(w["rs_src"])
    to_apm(w["reg"], w["apm_pkg"])
    git_repo(w["apm_pkg"])
    a = [py, "-m", "agentrc"]
    subprocess.run(a + ["build", w["reg"], "--client", "claude", "--out", w["claude"], "--no-cache"], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(os.path.join(w["claude"], ".agentrc"), ignore_errors=True)
    locked = fresh(w["locked"])
    subprocess.run(a + ["add", w["agentrc_url"] + "@v1", "--client", CLIENTS, "--trust"], cwd=locked, env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["git", "add", "agentrc.lock.json"], cwd=locked, check=True)
    subprocess.run(["git", "commit", "-qm", "lock"], cwd=locked, check=True, env=dict(os.environ, **GIT_ENV))
    return w


def measure(rows: List[Row], reps: int, env: Dict[str, str], logs: str) -> Dict[str, dict]:
    """Every row once per repetition, in order (interleaved); a row that fails keeps its error."""
    res: Dict[str, dict] = {name: {"wall": [], "rss": [], "error": None} for name, _ in rows}
    for rep in range(reps):
        for i, (name, prep) in enumerate(rows):
            r = res[name]
            if r["error"]:
                continue
            try:
                cmd, cwd = prep()
                wall, rss, _ = bench.timed(cmd, cwd, env, os.path.join(logs, f"{i:02d}-{rep}.log"))
            except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
                r["error"] = " ".join(str(exc).split())[-300:]
                continue
            r["wall"].append(wall)
            r["rss"].append(rss)
            print(f"  rep {rep + 1}: {name}: {wall:.2f} s, {rss / 1024:.0f} MiB", file=sys.stderr)
    return res


def table(res: Dict[str, dict]) -> str:
    lines = ["| row | median wall | runs | peak RSS |", "| --- | --- | --- | --- |"]
    for name, r in res.items():
        if r["error"] and not r["wall"]:
            lines.append(f"| {name} | cannot run here: {r['error']} | 0 | - |")
            continue
        lines.append(f"| {name} | {statistics.median(r['wall']):.2f} s | {len(r['wall'])} | "
                     f"{max(r['rss']) / 1024:.0f} MiB |")
    ref = {k: statistics.median(v["wall"]) for k, v in res.items() if v["wall"]}
    floor = ref.get("agentrc build, cold (reference)", 0) + ref.get("git clone of the source (reference)", 0)
    if floor:
        lines.append("")
        for name in ("agentrc add, cold cache", "agentrc install --frozen, fresh clone"):
            if name in ref:
                lines.append(f"- {name}: {ref[name] / floor:.2f}x (cold build + git clone, {floor:.2f} s; "
                             "target at most 1.5x)")
    return "\n".join(lines + _peer_ratios(ref))


# Each agentrc row and the peers' rows that do the same job (issue 36: at most 0.5x the faster).
PEER_ROWS = {
    "agentrc add, cold cache": ("rulesync install", "APM install (local path: no file:// URLs)"),
    "agentrc install --frozen, fresh clone": ("rulesync install", "APM install (local path: no file:// URLs)"),
    "agentrc import, Claude project": ("rulesync import, Claude project",),
}


def _peer_ratios(ref: Dict[str, float]) -> List[str]:
    """agentrc's median over the faster peer's, for each row a peer can do."""
    out = []
    for name, peers in PEER_ROWS.items():
        times = [(ref[p], p) for p in peers if p in ref]
        if name in ref and times:
            best, peer = min(times)
            out.append(f"- {name}: {ref[name] / best:.2f}x the faster peer ({peer}, {best:.2f} s; target at most 0.5x)")
    return [""] + out if out else []


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true", help="agentrc's rows only")
    ap.add_argument("--src", choices=("head", "worktree"), default="head", help="agentrc's src/ measured")
    args = ap.parse_args(argv)
    base = os.path.join(bench.OUT, "tmpfs")
    fs = "tmpfs" if bench.mount_tmpfs(base) else "disk (tmpfs mount failed: not root?)"
    base = os.path.join(base, "consumer")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(os.path.join(base, "logs"))
    src, label = bench.snapshot_src(args.src, os.path.join(base, "agentrc-src"))
    py = bench.agentrc_python()
    env = dict(os.environ, PYTHONPATH=src, NO_COLOR="1", AGENTRC_CACHE_DIR=os.path.join(base, "cache"))
    w = prepare(base, args.items, py, env)
    w["program"] = bench.agentrc_program(src)
    rows = agentrc_rows(w, py)
    if not args.no_peers:
        rows += rulesync_rows(w, bench.ensure_peers()["rulesync"])
        apm = ensure_apm()
        rows += apm_rows(w, apm) if apm else [("APM install", _missing("apm-cli could not be installed"))]
    res = measure(rows, args.reps, env, os.path.join(base, "logs"))
    out = (f"Consumer workflow, {args.items} items, clients {CLIENTS}, on {fs}; agentrc {label}; "
           f"{args.reps} interleaved repetitions\n\n" + table(res) + "\n")
    with open(os.path.join(bench.OUT, "consumer.md"), "w") as fh:
        fh.write(out)
    print(out)
    return 0


def _missing(why: str) -> Callable[[], Tuple[List[str], str]]:
    def prep() -> Tuple[List[str], str]:
        raise RuntimeError(why)
    return prep


if __name__ == "__main__":
    sys.exit(main())
