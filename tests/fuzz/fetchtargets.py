"""The fuzz targets of the fetch surfaces (issue 30), each through the entry point a user
reaches, in-process and fenced (`guard.fenced`: no read or write outside the case, no
process but git, a time budget):

- `source-layout`: a source's tree (the example registry, bundles with `requires: {name,
  source}`, odd file names, links, FIFOs, sparse giants) resolved the way `agentrc add`
  does: `consume._resolve` (`_fetch_and_load`, `stages.load(tree, cross_source=True)`, the
  closure across sources), or the whole `consume.add` for a local root. A git source is
  served from the case's `remote/` directory by `CaseFetcher` (no git, no network); its
  files still go through the real reader with their `SOURCE@REF/` display paths. A tree
  fetched over git may read nothing of the consumer's disk but itself (the fence narrows).
- `lock`: `agentrc.lock.json` through `lock.loads`, then what the commands do with it
  (`install`, `install --frozen`, `install --check`, `update --dry-run`, `remove`, `remove-mcp`, `list`,
  `doctor`), on a project holding the lock alone, or with its sources, installed files and
  manifest. The user's `keep.txt` and the secret outside must come out unchanged.
- `oas-capability`, `oas-package`, `oas-lock`, `oas-config`: the spec 003 parsers
  (`capabilities.manifest`, `.lock`, `.config`), with a round trip for the lock.
- `source-strings`: the source grammars (`sources.dsl.parse`, `capabilities.source.parse`
  and `parse_locked`, the cross-source `consume._required_source`).
- `cap-scope`: `agentrc cap list` and `cap doctor` (the CLI) on a scope whose config, lock,
  installed capabilities and injection files are fuzzed.

A case is a function of (target, seed, number): `run.py --target T --seed S --case N`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import io
import json
import os
import random
import re
import shutil
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

import fetchseeds as fs
import fuzzlib
import guard
import yaml

from agentrc.cli.main import main
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import fetchcache
from agentrc.inputs.fetch import Fetched, Fetcher
from agentrc.model import SourceTree
from agentrc.consumer import consume
from agentrc.sources import dsl
from agentrc.sources import lock as lockfile

SECONDS = float(os.environ.get("AGENTRC_FUZZ_CASE_SECONDS", "20"))


class Oracle(Exception):
    """A case that ended without a traceback but broke a promise (a file it may not touch)."""


# --- laying a case out ---------------------------------------------------------------------

def _lay_out(case: Path, files: fs.Files, links: fs.Links = {}, specials: Dict[str, str] = {}) -> None:
    token = str(case).encode()
    for rel, data in files.items():
        p = case / rel
        with contextlib.suppress(OSError, ValueError):
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data.replace(b"@CASE@", token))
    for rel, target in links.items():
        p = case / rel
        with contextlib.suppress(OSError, ValueError):
            p.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target.replace("@CASE@", str(case)), p)
    for rel, kind in specials.items():
        p = case / rel
        with contextlib.suppress(OSError, ValueError):
            p.parent.mkdir(parents=True, exist_ok=True)
            if kind == "fifo":
                os.mkfifo(p)
            else:  # a sparse file past every size bound: costs no memory to make
                with open(p, "wb") as f:
                    f.truncate(int(kind))


def _odd_rename(files: fs.Files, rng: random.Random, under: Sequence[str]) -> str:
    paths = [p for p in sorted(files) if p.startswith(tuple(under))]
    path = rng.choice(paths)
    parts = path.split("/")
    i = rng.randrange(1, len(parts))
    parts[i] = rng.choice(fs.ODD_COMPONENTS) if rng.random() < 0.7 else parts[i] + rng.choice(fs.ODD_COMPONENTS)
    new = "/".join(parts)
    if any(p.startswith(new + "/") or new.startswith(p + "/") for p in files if p != path):
        return "no odd name"
    files[new] = files.pop(path)
    return f"renamed {path!r} to {new!r}"


def _plant_link(files: fs.Files, links: fs.Links, specials: Dict[str, str], rng: random.Random,
                under: Sequence[str]) -> str:
    """A link, a chain of links, a loop, a FIFO or a sparse giant in place of a file."""
    path = rng.choice([p for p in sorted(files) if p.startswith(tuple(under))])
    # git checks out files, directories and links only: no FIFO, no giant, in a tree that
    # may be served as git (remote/, and other/ through file://).
    op = rng.randrange(0 if path.startswith("src/") else 2, 6)
    files.pop(path)
    if op == 0:
        specials[path] = "fifo"
        return f"FIFO at {path}"
    if op == 1:
        specials[path] = str((16 << 20) + rng.choice([1, 4096, 1 << 30]))
        return f"sparse giant at {path}"
    if op == 2:  # a chain of hops ending at a file beside it
        n = rng.choice([2, 40, 1000])
        base = path.rsplit("/", 1)[0]
        files[f"{base}/end.txt"] = b"end\n"
        for i in range(n):
            links[path if i == 0 else f"{base}/hop{i}"] = f"hop{i + 1}" if i + 1 < n else "end.txt"
        return f"chain of {n} links at {path}"
    if op == 3:
        base = path.rsplit("/", 1)[0]
        links[path] = "loop-b"
        links[f"{base}/loop-b"] = path.rsplit("/", 1)[1]
        return f"link loop at {path}"
    target = rng.choice(fs.LINK_TARGETS)
    if op == 4 and "/" in path[path.index("/") + 1:]:  # the whole directory becomes a link
        directory = path.rsplit("/", 1)[0]
        for p in [p for p in files if p.startswith(directory + "/")]:
            files.pop(p)
        links[directory] = target if target != "self" else "."
        return f"directory {directory} links to {target}"
    links[path] = target if target != "self" else path.rsplit("/", 1)[1]
    return f"{path} links to {target}"


def _require(files: fs.Files, rng: random.Random, under: Sequence[str]) -> str:
    """A `requires: {name, source}` entry with a source from the attacker's pool, in a
    bundle or an item's frontmatter."""
    candidates = [p for p in sorted(files) if p.startswith(tuple(under)) and p.endswith((".bundle.yaml", ".md"))]
    path = rng.choice(candidates)
    name = rng.choice(["shared", "base", "fetched", "commit-style", "nope"] + fs.NAMES)
    ref = {"name": name, "source": rng.choice(fs.SOURCES)}
    if rng.random() < 0.2:
        ref["version"] = rng.choice(["^1.0.0", "x", "", ">=0"])
    raw = files[path]
    try:
        if path.endswith(".yaml"):
            doc = yaml.safe_load(raw) or {}
            if isinstance(doc, dict):
                doc.setdefault("requires", [])
                if isinstance(doc["requires"], list):
                    doc["requires"].append(ref)
                    files[path] = yaml.safe_dump(doc, allow_unicode=True).encode("utf-8", "surrogatepass")
                    return f"{path} requires {ref!r:.80}"
        elif raw.startswith(b"---\n") and b"\n---\n" in raw[3:]:
            head, body = raw[4:].split(b"\n---\n", 1)
            doc = yaml.safe_load(head) or {}
            if isinstance(doc, dict):
                req = doc.setdefault("requires", {})
                if isinstance(req, dict):
                    req.setdefault(rng.choice(["rules", "skills", "agents", "commands"]), []).append(ref)
                    text = yaml.safe_dump(doc, allow_unicode=True).encode("utf-8", "surrogatepass")
                    files[path] = b"---\n" + text + b"---\n" + body
                    return f"{path} requires {ref!r:.80}"
    except (yaml.YAMLError, ValueError, TypeError, AttributeError):
        pass
    return f"{path}: no requires added"


# --- source-layout ------------------------------------------------------------------------

class CaseFetcher(Fetcher):
    """The real fetcher, with git's transport stood in by directories of the case: REMOTE
    is `remote/`, a `file://` URL of a directory inside the case is that directory. The
    directory is moved into the cache as the checkout git would have made, its record
    written (`fetchcache`), and read by the real `_read` (the bounded reader, the record
    verified, `SOURCE@REF/` display paths); any other URL fails as an unreachable remote
    would (AR201)."""

    def __init__(self, case: Path, project: str):
        super().__init__(project, str(case / "cache"))
        self.case = case
        self.served: Dict[str, str] = {}

    def _git(self, source: dsl.Source, commit: Optional[str]) -> Fetched:
        diags = Diagnostics()
        url = source.location
        top = None
        if url == fs.REMOTE:
            top = str(self.case / "remote")
        elif url.startswith("file://"):
            path = os.path.normpath(url[len("file://"):])
            if (path + os.sep).startswith(str(self.case) + os.sep) and os.path.isdir(path):
                top = path
        commit = commit or hashlib.sha1(f"{url}@{source.ref}".encode()).hexdigest()
        entry = os.path.join(self.cache, "fuzz", hashlib.sha1(url.encode()).hexdigest()[:16], commit)
        if top is not None and not os.path.isdir(entry):
            os.makedirs(os.path.dirname(entry), exist_ok=True)
            first = self.served.setdefault(url, entry)
            if first == entry:
                os.rename(top, entry)
            else:  # the same repository at another commit: the same tree
                shutil.copytree(first, entry, symlinks=True)
            try:
                fetchcache.save(entry, fetchcache.make(entry), self.cache)
            except fetchcache.Changed as exc:  # a tree git cannot hold (no checkout has a FIFO)
                raise Oracle(f"the harness served a tree git cannot hold: {exc}") from None
        if not os.path.isdir(entry):
            diags.error(source.label, (0, 0), "AR201", f"{url} is not reachable in the fuzz case")
            return Fetched(source, None, url, SourceTree(()), diags.sorted())
        return self._read(source, commit, entry, diags)


@functools.lru_cache(maxsize=None)
def _source_seed() -> Tuple[Tuple[str, bytes], ...]:
    return tuple(sorted(fs.source_seed().items()))


def run_source_layout(case: Path, rng: random.Random, done: List[str]) -> List[str]:
    files = dict(_source_seed())
    links: fs.Links = {}
    specials: Dict[str, str] = {}
    remote_root = rng.random() < 0.3
    under = ("remote/",) if remote_root and rng.random() < 0.7 else ("src/", "other/", "remote/")
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        r = rng.random()
        if r < 0.3:
            done.append(_require(files, rng, under))
        elif r < 0.45:
            done.append(_plant_link(files, links, specials, rng, under))
        elif r < 0.55:
            done.append(_odd_rename(files, rng, under))
        elif r < 0.65:  # the tree of the sources only: outside/ and project/ are the oracle's
            tree = {p: b for p, b in files.items() if p.startswith(under)}
            done.append(fuzzlib._mutate_tree(tree, rng))
            files = {**{p: b for p, b in files.items() if not p.startswith(under)}, **tree}
        else:
            path = rng.choice([p for p in sorted(files) if p.startswith(under) and p.endswith(fuzzlib.STRUCTURED)])
            files[path], what = fuzzlib._mutate_file(path, files[path], rng)
            done.append(f"{path}: {what}")
    _lay_out(case, files, links, specials)
    CASE_SECRETS.update(x for x in fs.SECRETS if any(x.encode() in b for b in files.values()))
    project = case / "project"
    project.mkdir(exist_ok=True)
    root = fs.REMOTE if remote_root else "../src"
    # The whole `add` fetches with the real git: only bundles whose closure stays local.
    whole = not remote_root and rng.random() < 0.25
    bundles = rng.choice([["api"], ["nope"], ["platform-baseline"]] if whole else
                         [[], [], ["cross"], ["cross"], ["net"], ["api"], ["nope"]])
    done.append(f"{'add' if whole else 'resolve'} {root} bundles={bundles}")
    # A tree fetched over git reads nothing of the consumer's disk but itself (issue 30 §3).
    reads = [str(case / "remote"), str(case / "cache"), str(project)] if remote_root else None
    try:
        diags = _resolve_or_add(case, project, root, bundles, whole, reads)
    except guard.Escaped as exc:
        # A local directory the consumer named may require any directory of their disk (by
        # design, issue 30): the fence stopping such a read is not the code's failure.
        if remote_root or not str(exc).startswith(("open /", "os.scandir /", "os.listdir /")):
            raise
        guard._FENCE.hits.clear()
        done.append("=> fenced: a local source requires a directory outside the case")
        return done
    _unchanged(case, {"outside/secret.txt": b"SECRET\n"})
    done.append(diags[0] if diags and isinstance(diags[0], str) else verdict(diags))
    return done


def _resolve_or_add(case: Path, project: Path, root: str, bundles: List[str], whole: bool,
                    reads: Optional[List[str]]) -> Sequence:
    with _in(project), guard.fenced(case, SECONDS, reads_only=reads):
        if whole:  # the command line itself: what it prints is checked too
            argv = ["add", root, "--dir", ".", "--client", "claude,opencode"] + _trust_flag()
            return [_cli(project, argv + [a for b in bundles for a in ("--bundle", b)])]
        else:
            source = consume._relative_to(dsl.parse(root), str(project), str(project))
            diags = consume._resolve([(source, bundles, [])], CaseFetcher(case, str(project)))[1]
    return diags


# The secrets of the case's input that sit in a source (a `source:` of a requires or of a
# lock row): no output may show them (issue 30 §4). A target fills it; run_case empties it.
CASE_SECRETS: Set[str] = set()


def secrets_in_sources(data: object) -> Set[str]:
    """The SECRETS held by a `source` (or `from`) value anywhere in a parsed document."""
    found: Set[str] = set()
    for path in fuzzlib._nodes(data):
        if path and path[-1] in ("source", "from"):
            value: object = data
            for p in path:
                value = value[p]  # type: ignore[index]
            found.update(x for x in fs.SECRETS if isinstance(value, str) and x in value)
    return found


def no_secret(text: str, where: str, secrets: Optional[Set[str]] = None) -> None:
    for secret in CASE_SECRETS if secrets is None else secrets:
        if secret in text:
            raise Oracle(f"{where} shows the secret {secret!r}: {text[max(0, text.index(secret) - 80):][:200]!r}")


def verdict(diags) -> str:
    """What a case ended in, for the run's tally: "=> ok" or "=> " and the first error's code.
    No diagnostic may show a secret of the input."""
    for d in diags:
        no_secret(d.format(), "a diagnostic")
    errors = sorted(d.code for d in diags if d.is_error)
    return "=> " + (errors[0] if errors else "ok")


@contextlib.contextmanager
def _in(where: Path):
    old = os.getcwd()
    os.chdir(where)
    try:
        yield
    finally:
        os.chdir(old)


def _trusting(func) -> Dict[str, bool]:
    """`trust=True` where the consent gate (issue 30) takes it: the seeds bring hooks."""
    return {"trust": True} if "trust" in inspect.signature(func).parameters else {}


@functools.lru_cache(maxsize=None)
def _trust_flag() -> List[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main(["add", "--help"])
    return ["--trust"] if "--trust" in out.getvalue() else []


def _unchanged(case: Path, expected: Dict[str, bytes]) -> None:
    for rel, data in expected.items():
        p = case / rel
        if not p.is_file() or p.is_symlink() or p.read_bytes() != data:
            raise Oracle(f"{rel} was changed or deleted")


# --- lock ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _lock_seed() -> Tuple[bytes, Tuple[Tuple[str, bytes], ...]]:
    """The lock (and installed files) of a real `add` of the seed source, vendored inside the
    project (a lock's local source outside the project is refused unless named, AR226)."""
    files = _vendored()
    with tempfile.TemporaryDirectory(dir=fuzzlib.TMP) as tmp:
        case = Path(tmp)
        _lay_out(case, files)
        project = case / "project"
        with _in(project):
            result = consume.add(str(project), "./vendor", bundles=("api",), clients=("claude", "opencode", "codex"),
                                 cwd=str(project), **_trusting(consume.add))
        assert result.ok, result.diagnostics
        installed = tuple(sorted((p.relative_to(project).as_posix(), p.read_bytes()) for p in project.rglob("*")
                                 if p.is_file() and p.name not in ("agentrc.lock.json", "keep.txt")
                                 and not p.relative_to(project).as_posix().startswith("vendor/")))
        return (project / "agentrc.lock.json").read_bytes(), installed


def _vendored() -> fs.Files:
    """The seed source as `project/vendor/`, with the sources it requires beside the project."""
    return {("project/vendor/" + p[4:] if p.startswith("src/") else p): b for p, b in _source_seed()}


def _lock_pool() -> List[object]:
    keep, secret = fs.sha(b"the user's own file\n"), fs.sha(b"SECRET\n")
    return [*fs.SOURCES, *fs.NAMES, "claude", "codex", "nope", "CLAUDE", "-h", "--scope=user", "keep.txt",
            "../outside/secret.txt", "/etc/passwd", "@CASE@/outside/secret.txt", ".git/config", "agentrc.lock.json",
            ".agentrc/manifest.json", "a/../../x", keep, secret, "0" * 64, "0" * 40, "HEAD", "-", None, 1, [], {},
            {"path": "keep.txt", "sha256": keep}, {"path": "../outside/secret.txt", "sha256": secret},
            {"path": "@CASE@/outside/secret.txt", "sha256": secret},
            {"name": "--scope=user", "client": "claude", "scope": "project", "bundle": "api"},
            {"name": "x", "client": "nope", "scope": "user"},
            {"name": "--dangerously-skip-permissions@x", "client": "claude", "marketplace": "-m"},
            {"name": "core", "source": "/", "ref": None, "commit": None, "sha256": keep, "direct": True,
             "required_by": []},
            {"layer": "preset x", "name": "n", "type": "rule", "source": "/", "ref": None, "commit": None,
             "sha256": keep}]


def _append_record(doc: object, rng: random.Random, pool: List[object]) -> Tuple[object, str]:
    """A record appended to one of the lock's lists, shaped like its neighbours so that it
    passes the schema: a `files` entry naming the user's file with its digest, an MCP
    record named like an option, an entry whose source is `/`, ..."""
    if not isinstance(doc, dict):
        return doc, "no record appended"
    doc = json.loads(json.dumps(doc))
    key = rng.choice(["files", "files", "mcps", "plugins", "bundles", "items", "clients", "mcps_removed",
                      "user_skipped"])
    rows = doc.setdefault(key, []) if isinstance(doc.get(key, []), list) else []
    crafted = [v for v in pool if isinstance(v, dict) and rows and isinstance(rows[0], dict)
               and set(v) <= set(rows[0]) | {"identifier", "config", "key", "status"}]
    strings = [v for v in pool if isinstance(v, str) and v]
    if crafted and rng.random() < 0.5:
        value: object = dict(rng.choice(crafted))
    elif rows and isinstance(rows[0], dict):
        value = dict(rng.choice(rows))
        field = rng.choice(sorted(value))
        value[field] = rng.choice(strings) if isinstance(value[field], (str, type(None))) else value[field]
    else:
        value = rng.choice(strings)
    rows.append(value)
    return doc, f"appended to {key}: {value!r:.100}"


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _semantic_edit(doc: object, rng: random.Random) -> Tuple[object, str]:
    """A change that keeps the lock's shape and changes what it means: an entry's source
    (`/`, a token URL, `../..`), a file the lock claims (the user's, the secret outside,
    with their digests), a client, a commit."""
    if not isinstance(doc, dict):
        return doc, "no semantic edit"
    doc = json.loads(json.dumps(doc))
    rows = [r for k in ("bundles", "items") for r in _list(doc.get(k)) if isinstance(r, dict)]
    files = [f for f in _list(doc.get("files")) if isinstance(f, dict)]
    op = rng.randrange(4)
    if op == 0 and rows:
        row = rng.choice(rows)
        row["source"] = rng.choice(fs.SOURCES)
        return doc, f"{row.get('name')} from {row['source']!r:.80}"
    if op == 1 and files:
        f = rng.choice(files)
        f["path"], data = rng.choice([("keep.txt", b"the user's own file\n"), (".git/config", b""),
                                      ("agentrc.lock.json", b""), ("keep.txt/", b"the user's own file\n")])
        f["sha256"] = fs.sha(data)
        return doc, f"a file entry claims {f['path']}"
    if op == 2:
        doc["clients"] = rng.sample(["claude", "codex", "copilot", "cursor", "gemini", "opencode", "nope", "x-y"],
                                    rng.randrange(1, 4))
        return doc, f"clients {doc['clients']}"
    if rows:
        row = rng.choice(rows)
        row["commit"] = rng.choice(["0" * 40, "f" * 64, "HEAD", "-x", None])
        row["ref"] = rng.choice(["v1", "-h", "--upload-pack=x", None, "main"])
        return doc, f"{row.get('name')} at {row['ref']!r}/{row['commit']!r}"
    return doc, "no semantic edit"


def run_lock(case: Path, rng: random.Random, done: List[str]) -> List[str]:
    raw, installed = _lock_seed()
    pool = _lock_pool()
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if rng.random() < 0.4:
            try:
                doc, what = _semantic_edit(json.loads(raw), rng)
                raw = json.dumps(doc, indent=2).encode("utf-8", "surrogatepass")
            except ValueError:
                what = "not JSON, no semantic edit"
        elif rng.random() < 0.4:
            try:
                doc, what = _append_record(json.loads(raw), rng, pool)
                raw = json.dumps(doc, indent=2).encode("utf-8", "surrogatepass")
            except ValueError:
                what = "not JSON, nothing appended"
        else:
            raw, what = fs.mutate_json_bytes(raw, rng, pool)
        done.append(what)
    files = {"project/agentrc.lock.json": raw, "project/keep.txt": b"the user's own file\n",
             "outside/secret.txt": b"SECRET\n"}
    world = rng.choice(["lock only", "sources", "installed", "installed+manifest"])
    if world != "lock only":
        files.update(_vendored())
    if world.startswith("installed"):
        files.update((f"project/{p}", b) for p, b in installed
                     if world == "installed+manifest" or not p.startswith(".agentrc/"))
    _lay_out(case, files)
    with contextlib.suppress(ValueError):
        CASE_SECRETS.update(secrets_in_sources(json.loads(raw)))
    project = str(case / "project")
    verb = rng.choice(["install"] * 4 + ["frozen", "check"] * 2 + ["update", "remove", "remove-mcp", "list", "doctor"])
    done.append(f"{world}; {verb}")
    with _in(case / "project"), guard.fenced(case, SECONDS):
        lock, _ = lockfile.loads(raw.replace(b"@CASE@", str(case).encode()), "agentrc.lock.json")
        again = lockfile.loads(lockfile.dumps(lock))[0] if lock is not None else None
        if lock is not None and (again is None or lockfile.dumps(again) != lockfile.dumps(lock)):
            raise Oracle("the lock's bytes do not survive loads and dumps")
        names = [e.name for e in lock.entries][:1] if lock is not None else ["api"]
        if verb in ("install", "frozen", "check"):
            result = consume.install(project, frozen=verb == "frozen", check=verb == "check").diagnostics
        elif verb == "update":
            result = consume.update(project, dry_run=True).diagnostics
        elif verb == "remove":
            result = consume.remove(project, names or ["api"]).diagnostics
        elif verb == "remove-mcp":
            server = rng.choice(["api-docs", "schema-tools", "--scope=user"])
            result = consume.remove_mcp(project, [server]).diagnostics
        else:
            result = ()
            code = _cli(case / "project", [verb, "--dir", "."] + (["--json"] if rng.random() < 0.5 else []))
    _unchanged(case, {"project/keep.txt": b"the user's own file\n", "outside/secret.txt": b"SECRET\n"})
    done.append(verdict(result) if verb not in ("list", "doctor") else code)
    return done


# What no text output may hold raw (issue 30 §10): ESC, CR, CSI, NUL, the bidirectional
# overrides and isolates. Fetched names carry them; `diagnostics.printable` escapes them.
_FORGERS = re.compile("[\x00\x1b\r\x9b\u202a-\u202e\u2066-\u2069]")


def _cli(where: Path, argv: List[str]) -> str:
    """The command line in `where`, in-process; its exit code as the verdict. Its text output
    (not --json: JSON escapes controls itself) must hold no terminal control from the input."""
    out, err = io.StringIO(), io.StringIO()
    with _in(where), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    if code not in (0, 1, 2, None):
        raise Oracle(f"exit {code!r}")
    text = out.getvalue() + err.getvalue()
    no_secret(text, " ".join(argv[:2]))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a terminal's stdout (UTF-8, strict) raises it mid-print
        raise Oracle(f"{' '.join(argv[:2])} printed {text[exc.start]!r}, which no UTF-8 output can hold: "
                     f"{text[max(0, exc.start - 80):exc.start + 20]!r}")
    forged = _FORGERS.search(text) if "--json" not in argv else None
    if forged:
        line = text[:forged.start()].rsplit("\n", 1)[-1] + text[forged.start():].split("\n", 1)[0]
        raise Oracle(f"{' '.join(argv[:2])} printed {forged.group()!r} raw: {line!r:.200}")
    return f"=> exit {code}"
