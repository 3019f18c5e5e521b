"""Run published repositories through agentrc's consumer lifecycle and import, judged by the
real client CLIs (issue 31, "How this is judged"). Not part of ./test: it needs snapshots of
public repositories, which are never committed; see tools/corpus/README.md.

    .pants-venv/bin/python tools/corpus/run.py --work /tmp/corpus-run DIR... > results.json
    .pants-venv/bin/python tools/corpus/run.py --table results.json

Bundle and item are chosen from what the whole add locked (the first bundle, the first
skill, by name), so this file names nothing of any repository.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "src"), str(Path(__file__).resolve().parent)]

import discover  # noqa: E402

CLIENTS = ("claude", "copilot", "opencode", "codex", "gemini", "cursor")
# The kinds each judge lists offline (tests/conformance/OFFLINE_LIMITS.md): a missing item of
# another kind is not observable, so it is not counted as discovered or lost.
OBSERVABLE = {"claude": {"skill", "command", "agent"}, "opencode": {"skill", "agent"}, "copilot": {"skill"},
              "gemini": {"skill"}, "codex": {"skill", "agent"}}
NOISE = {"AR015", "AR130"}  # description-length advice, links kept as text: they say nothing of a loss
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src")]))
for _k in [k for k in ENV if k.startswith("AGENTRC_")]:
    del ENV[_k]


def agentrc(cwd: Path, *args: str) -> Dict[str, Any]:
    """One agentrc command with --json: exit code, seconds, diagnostics counted by code."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "agentrc", *args, "--json"], cwd=str(cwd), env=ENV,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=1800)
    secs = round(time.monotonic() - start, 1)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        doc = {"traceback": proc.stderr[-2000:]}
    diags = doc.get("diagnostics") or []
    count = collections.Counter("%s %s" % (d["severity"], d["code"]) for d in diags)
    errors = ["%s: %s" % (d["code"], d["message"][:300]) for d in diags if d["severity"] == "error"]
    # What counts as reporting an item: a diagnostic naming it, other than style advice.
    text = " ".join(str(d.get("message", "")) + " " + str(d.get("path", "")) for d in diags if d["code"] not in NOISE)
    return {"args": list(args), "rc": proc.returncode, "secs": secs, "diagnostics": dict(sorted(count.items())),
            "errors": errors[:20], "doc": doc, "text": text}


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="corpus", GIT_AUTHOR_EMAIL="c@example.invalid",
               GIT_COMMITTER_NAME="corpus", GIT_COMMITTER_EMAIL="c@example.invalid")
    return subprocess.run(["git", *args], cwd=str(cwd), env=env, check=True, stdout=subprocess.PIPE,
                          universal_newlines=True).stdout.strip()


def files(project: Path) -> List[str]:
    out = []
    for dirpath, dirnames, names in os.walk(str(project)):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        out += [os.path.relpath(os.path.join(dirpath, n), str(project)) for n in names]
    return sorted(out)


def empty_dirs(project: Path) -> int:
    return sum(1 for dp, dn, fn in os.walk(str(project)) if ".git" not in dp and not dn and not fn)


def fresh(path: Path) -> Path:
    shutil.rmtree(str(path), ignore_errors=True)
    path.mkdir(parents=True)
    git(path, "init", "-q")
    return path


def lock_items(project: Path) -> List[Dict[str, Any]]:
    lock = project / "agentrc.lock.json"
    return json.loads(lock.read_text(encoding="utf-8"))["items"] if lock.is_file() else []


def judge(project: Path, items: List[Dict[str, Any]], step: Dict[str, Any], base: Path,
          clients: List[str]) -> Dict[str, Any]:
    """What each client discovers of `items`; what it misses, reported (named in a
    diagnostic) or not; names it lists twice, named by AR095 or not."""
    out = {}
    named_dups = any(" AR095" in k for k in step.get("diagnostics", {}))
    for client in clients:
        if client not in discover.CLIENTS:
            continue
        start = time.monotonic()
        # A copy: clients write into the project they run in (opencode's .opencode/.gitignore).
        copy = base / client / "project"
        shutil.rmtree(str(copy.parent), ignore_errors=True)
        shutil.copytree(str(project), str(copy), symlinks=True)
        try:
            seen = discover.CLIENTS[client](copy, base / client)
        except Exception as exc:  # a judge that breaks is recorded, the run goes on
            seen = {"names": [], "dups": [], "error": repr(exc)[:300]}
        names = set(seen["names"])
        expected = [i for i in items if i["kind"] in OBSERVABLE[client]]
        missing = sorted("%s:%s" % (i["kind"], i["name"]) for i in expected if i["name"] not in names)
        unreported = [m for m in missing if m.split(":", 1)[1] not in step.get("text", "")]
        dups = [d for d in seen["dups"] if d in {i["name"] for i in items}]
        out[client] = {"observable": len(expected), "discovered": len(expected) - len(missing),
                       "missing": missing[:30], "unreported": unreported[:30], "n_unreported": len(unreported),
                       "dups": dups, "dups_named": bool(dups) and named_dups, "error": seen["error"],
                       "secs": round(time.monotonic() - start, 1)}
    return out


def summarize(step: Dict[str, Any], project: Path) -> Dict[str, Any]:
    items = lock_items(project)
    step = dict(step)
    step.pop("doc", None)
    step["items"] = dict(collections.Counter(i["kind"] for i in items))
    step["n_items"] = len(items)
    step["files"] = len(files(project))
    return step


def add_step(work: Path, label: str, src: str, clients: str, *select: str) -> Dict[str, Any]:
    project = fresh(work / label)
    step = agentrc(project, "add", src, *select, "--trust", "--client", clients)
    text = step["text"]
    out = summarize(step, project)
    out["judge"] = judge(project, lock_items(project), {"diagnostics": step["diagnostics"], "text": text},
                         work / (label + "-judge"), clients.split(","))
    return out


def choose(project: Path) -> Dict[str, Optional[str]]:
    lock = json.loads((project / "agentrc.lock.json").read_text(encoding="utf-8"))
    bundles = sorted(b["name"] for b in lock.get("bundles", []))
    skills = sorted(i["name"] for i in lock["items"] if i["kind"] == "skill")
    other = sorted("%s:%s" % (i["kind"], i["name"]) for i in lock["items"])
    return {"bundle": bundles[0] if bundles else None,
            "item": ("skill:" + skills[0]) if skills else (other[0] if other else None)}


def lifecycle(work: Path, src: str, upstream: Path, whole: Path) -> Dict[str, Any]:
    """install --frozen in a fresh clone, update after an upstream commit, remove."""
    res: Dict[str, Any] = {}
    # a source read as a local directory (a partial clone git cannot fetch from) is read by a
    # lock only where the consumer names it (AR226)
    local = [] if src.startswith("file://") else ["--allow-local", src]
    clone = fresh(work / "frozen")
    for name in ("agentrc.lock.json", "agentrc.yaml"):
        if (whole / name).is_file():
            shutil.copy2(str(whole / name), str(clone / name))
    step = agentrc(clone, "install", "--frozen", "--trust", *local)
    res["frozen"] = summarize(step, clone)
    res["frozen"]["same_files"] = files(clone) == files(whole)
    res["frozen"]["diff"] = sorted(set(files(clone)) ^ set(files(whole)))[:10]
    names = {i["name"] for i in lock_items(whole) if i["kind"] == "skill"}
    target = next((p for p in sorted(upstream.rglob("SKILL.md")) if ".git" not in p.parts
                   and p.parent.name in names), None)
    if target is not None:
        with open(str(target), "a", encoding="utf-8") as f:
            f.write("\nCorpus run: one more line upstream.\n")
        git(upstream, "commit", "-qam", "corpus run: upstream change")
        step = agentrc(whole, "update", "--trust", *local)
        res["update"] = summarize(step, whole)
        res["update"]["changes"] = {k: (len(v) if isinstance(v, list) else v)
                                    for k, v in (step["doc"].get("changes") or {}).items()}
        res["update"]["changed_skill"] = target.parent.name
    lock = json.loads((whole / "agentrc.lock.json").read_text(encoding="utf-8"))
    direct = sorted({"bundle:" + b["name"] for b in lock.get("bundles", []) if b.get("direct", True)}
                    | {"%s:%s" % (i["kind"], i["name"]) for i in lock["items"] if i.get("direct")})
    step = agentrc(whole, "remove", *direct, *local)
    res["remove"] = summarize(step, whole)
    res["remove"]["left"] = [f for f in files(whole) if not f.startswith(".agentrc/")
                             and f not in ("agentrc.lock.json", "agentrc.yaml")][:10]
    res["remove"]["empty_dirs"] = empty_dirs(whole)
    return res


def import_build(work: Path, upstream: Path) -> Dict[str, Any]:
    """agentrc import of the published tree, then a build per client, each judged."""
    res: Dict[str, Any] = {}
    reg = _import(work, upstream, res, "import")
    if not set(res["import"]["items"]) - {"CONTEXT.md"}:
        # The default read only the context: name the published layouts' client explicitly.
        for client in ("claude", "copilot"):
            reg = _import(work, upstream, res, "import_from", "--from", client)
            if set(res["import_from"]["items"]) - {"CONTEXT.md"}:
                break
    res["builds"] = {}
    for client in CLIENTS:
        out = fresh(work / ("built-" + client))
        report = work / ("report-" + client + ".json")
        b = agentrc(work, "build", str(reg), "--client", client, "--out", str(out), "--report", str(report),
                    "--no-cache")
        entry = dict(b, doc=None, text=None)
        rep = json.loads(report.read_text(encoding="utf-8")) if report.is_file() else {"items": []}
        gen = [{"kind": i["kind"], "name": i["name"]} for i in rep.get("items", []) if i.get("generated")]
        statuses = collections.Counter(s for i in rep.get("items", []) for s in _statuses(i))
        entry.update(generated=len(gen), not_generated=sum(1 for i in rep.get("items", []) if not i.get("generated")),
                     statuses=dict(statuses))
        entry["judge"] = judge(out, gen, {"diagnostics": b["diagnostics"], "text": b["text"] + json.dumps(rep)},
                               work / ("built-judge-" + client), [client])
        res["builds"][client] = entry
    return res


def _import(work: Path, upstream: Path, res: Dict[str, Any], label: str, *extra: str) -> Path:
    reg = work / label
    shutil.rmtree(str(reg), ignore_errors=True)
    step = agentrc(work, "import", str(upstream), "--out", str(reg), *extra)
    res[label] = dict(step, doc=None, text=None)
    res[label]["files"] = len(files(reg)) if reg.is_dir() else 0
    kinds = collections.Counter(p.name for p in reg.rglob("*.md") if p.stem.isupper()) if reg.is_dir() else {}
    res[label]["items"] = dict(kinds)
    return reg


def _statuses(item: Dict[str, Any]) -> List[str]:
    fields = item.get("fields") or {}
    vals = fields.values() if isinstance(fields, dict) else fields
    return [str(v.get("status") if isinstance(v, dict) else v) for v in vals]


def local_plugin(upstream: Path) -> Optional[str]:
    """The first plugin, by name, of a marketplace that lives in the marketplace's own tree (the
    others are git sources, which cannot be fetched offline)."""
    market = upstream / ".claude-plugin" / "marketplace.json"
    try:
        plugins = json.loads(market.read_text(encoding="utf-8")).get("plugins") or []
    except (OSError, ValueError):
        return None
    local = sorted(p["name"] for p in plugins if isinstance(p.get("source"), str) and p["source"].startswith("./"))
    return local[0] if local else None


def run_repo(src_dir: Path, work: Path) -> Dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    upstream = work / "upstream"
    shutil.rmtree(str(upstream), ignore_errors=True)
    try:
        git(work, "clone", "-q", str(src_dir), str(upstream))
    except subprocess.CalledProcessError:  # a partial clone (blobs left out): copy the work tree
        shutil.rmtree(str(upstream), ignore_errors=True)
        shutil.copytree(str(src_dir), str(upstream), symlinks=True)
        src = str(upstream)  # git cannot fetch it either: read the directory
    else:
        src = "file://" + str(upstream)
    res: Dict[str, Any] = {"repo": src_dir.name, "commit": git(src_dir, "rev-parse", "HEAD"),
                           "date": git(src_dir, "log", "-1", "--format=%cs")}
    all_clients = ",".join(CLIENTS)
    res["whole"] = add_step(work, "whole", src, all_clients)
    pick_from = work / "whole"
    if res["whole"]["rc"] != 0:
        res["whole_per_client"] = {c: add_step(work, "whole-" + c, src, c) for c in CLIENTS}
        pick_from = next((work / ("whole-" + c) for c in CLIENTS if res["whole_per_client"][c]["rc"] == 0), pick_from)
    pick = choose(pick_from) if (pick_from / "agentrc.lock.json").is_file() else {"bundle": local_plugin(upstream),
                                                                                  "item": None}
    res["pick"] = pick
    if pick["bundle"]:
        res["bundle"] = add_step(work, "bundle", src, all_clients, "--bundle", pick["bundle"])
        if not (pick_from / "agentrc.lock.json").is_file() and res["bundle"]["rc"] == 0:
            pick_from = work / "bundle"  # the marketplace is not whole offline: go on with the bundle
            pick["item"] = choose(pick_from)["item"]
    if pick["item"]:
        res["item"] = add_step(work, "item", src, all_clients, "--item", pick["item"])
    if (pick_from / "agentrc.lock.json").is_file():
        res["lifecycle"] = lifecycle(work, src, upstream, pick_from)
    res.update(import_build(work, upstream))
    return res


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path, help="snapshots (git work trees) of the repositories")
    ap.add_argument("--work", type=Path, default=Path("/tmp/agentrc-corpus-run"))
    ap.add_argument("--table", type=Path, help="print the markdown table of a results file")
    args = ap.parse_args(argv)
    if args.table:
        import table
        print(table.render(json.loads(args.table.read_text(encoding="utf-8"))))
        return 0
    results: Dict[str, Any] = {"agentrc": git(ROOT, "rev-parse", "--short", "HEAD"),
                               "date": time.strftime("%Y-%m-%d"),
                               "versions": discover.versions(args.work / "versions"), "repos": []}
    for d in args.dirs:
        print("corpus:", d.name, file=sys.stderr, flush=True)
        results["repos"].append(run_repo(d.resolve(), args.work / d.name))
        (args.work / "results.partial.json").write_text(json.dumps(results, indent=1, default=str))
    json.dump(results, sys.stdout, indent=1, sort_keys=True, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
