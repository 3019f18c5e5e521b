"""Safe reading (issue 9, docs/security.md "What agentrc reads"): every surface that parses
YAML is bounded, every file read stays inside its root and is a regular file of bounded
size, and an ai.config.js runs in Node's permission model with a timeout and no
environment. Each hostile input gives a coded diagnostic quickly, never a traceback."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import time
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.inputs import config as config_loader
from agentrc.inputs.tree import MAX_FILE_BYTES, real_path
from agentrc.text import yamlpos

# Nine aliases of nine aliases, nine levels: 9**9 values once expanded.
LAUGHS = "".join(["  a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"]
                 + [f"  {chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n"
                    for i in range(8)])
DEEP = "  x: " + "[" * 5000 + "]" * 5000 + "\n"


def write(root: Path, files: dict) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


def run(args, capsys):
    start = time.monotonic()
    code = main(args)
    elapsed = time.monotonic() - start
    out = capsys.readouterr()
    return code, out.out + out.err, elapsed


# --- YAML bounds ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [f"m:\n{LAUGHS}", f"m:\n{DEEP}", "- " * 50000 + "x\n"],
                         ids=["laughs", "deep", "dashes"])
def test_yaml_bounds_raise_ar009_quickly(text):
    # CPU time, not wall time: a loaded machine must not fail it. Expanding the laughs (or
    # walking the nesting) would take minutes and gigabytes; the bound stops it at once.
    start = time.process_time()
    with pytest.raises(yamlpos.YamlError) as info:
        yamlpos.load(text)
    assert info.value.code == "AR009"
    assert time.process_time() - start < 2.0


def test_yaml_aliases_within_bounds_still_load():
    located = yamlpos.load("tools: &t [read, grep]\nagain: *t\nmore: *t\n")
    assert located.data == {"tools": ["read", "grep"], "again": ["read", "grep"], "more": ["read", "grep"]}


def _frontmatter(extra: str, **fields) -> str:
    head = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\n{head}metadata:\n{extra}---\n\nBody.\n"


SURFACES = {
    # surface: (files, CLI arguments)
    "skill": ({"r/skills/x/SKILL.md": _frontmatter(LAUGHS, name="x", description="d")}, ["lint", "r"]),
    "bundle": ({"r/b.bundle.yaml": f"schema: 1\nname: b\ndescription: d\nmetadata:\n{LAUGHS}"},
               ["lint", "r/b.bundle.yaml"]),
    "fmt": ({"r/rules/x/RULE.md": _frontmatter(LAUGHS, description="d")}, ["fmt", "--check", "r"]),
    "config-yaml": ({"p/ai.config.yaml": f"metadata:\n{LAUGHS}"}, ["lint", "p"]),
    "ai-dir": ({"p/.ai/rules/x/prompt.md": _frontmatter(DEEP, description="d")}, ["lint", "p"]),
    "preset": ({"p/ai.config.json": '{"presets": ["./base"]}',
                "p/base/skills/x/SKILL.md": _frontmatter(LAUGHS, name="x", description="d")}, ["lint", "p"]),
    "import": ({"c/.claude/agents/x.md": _frontmatter(LAUGHS, name="x", description="d")},
               ["import", "c", "--from", "claude", "--out", "o", "--strict"]),  # else skipped, exit 0
}


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_every_yaml_surface_is_bounded(surface, tmp_path, monkeypatch, capsys):
    files, args = SURFACES[surface]
    write(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    code, out, elapsed = run(args, capsys)
    assert code == 1 and "[AR009]" in out, out
    assert elapsed < 1.0


# --- the read boundary ------------------------------------------------------------------------

SECRET = "TOKEN=s3cr3t-outside-the-root"
SKILL = "---\nname: x\ndescription: A skill.\n---\n\nBody.\n"
RULE = "---\ndescription: A rule.\n---\n\nBody.\n"


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """A work directory with a secret beside it, outside every root the tests name."""
    (tmp_path / "secret.txt").write_text(SECRET)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    return work


def link(path: str, target: str) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.symlink_to(target)


OUTSIDE = {
    # what is read: (files, the symlink that leaves its root -> target, CLI arguments)
    "override": ({"r/skills/x/SKILL.md": SKILL}, "r/skills/x/SKILL.claude.md", ["build", "r"]),
    "entrypoint": ({}, "r/skills/x/SKILL.md", ["build", "r"]),
    "bundle": ({}, "r/b.bundle.yaml", ["build", "r"]),
    "agents-md": ({"p/ai.config.json": "{}"}, "p/AGENTS.md", ["build", "p"]),
    "config": ({}, "p/ai.config.json", ["build", "p"]),
    "ai-file": ({}, "p/.ai/rules/x/prompt.md", ["build", "p"]),
    "ai-dir": ({"p/ai.config.json": "{}"}, "p/.ai", ["build", "p"]),
    "preset-file": ({"p/ai.config.json": '{"presets": ["./base"]}', "p/base/package.json": "{}"},
                    "p/base/rules/x/prompt.md", ["build", "p"]),
    "preset-package": ({"p/ai.config.json": '{"presets": ["./base"]}'}, "p/base/package.json", ["build", "p"]),
    "import": ({}, "c/.claude/agents/x.md", ["import", "c", "--from", "claude"]),
}


@pytest.mark.parametrize("what", sorted(OUTSIDE))
def test_a_symlink_out_of_its_root_is_ar050_and_never_read(what, hostile, capsys):
    files, where, args = OUTSIDE[what]
    write(hostile, files)
    depth = where.count("/")
    link(where, "../" * depth + "../secret.txt")
    code, out, _ = run(args + ["--out", "o"], capsys)
    assert code == 1 and "[AR050]" in out and "leads outside" in out, out
    assert not Path("o").exists()
    assert "s3cr3t" not in out


def test_a_preset_cannot_read_its_project_through_a_symlink(hostile, capsys):
    """Each preset is its own root: a link from a preset into the project that uses it is out."""
    write(hostile, {"p/ai.config.json": '{"presets": ["./base"]}', "p/notes.md": "project notes\n"})
    link("p/base/rules/x/prompt.md", "../../../notes.md")
    code, out, _ = run(["lint", "p"], capsys)
    assert code == 1 and "[AR050]" in out and "outside the preset ./base" in out, out


def test_a_registry_reached_through_a_symlink_with_links_inside_it_builds(hostile, capsys):
    """The root is compared by its real path, and links are shown in the root's display form,
    so the item-directory check (a supporting file must stay in its item) still holds."""
    write(hostile, {"real/skills/x/SKILL.md": SKILL + "\nSee [the notes](notes.md).\n",
                    "real/skills/x/data/notes.txt": "notes\n", "real/shared/guide.md": "guide\n"})
    link("real/skills/x/notes.md", "data/notes.txt")
    link("reg", "real")
    code, out, _ = run(["build", "reg", "--out", "o", "--client", "claude"], capsys)
    assert code == 0, out
    assert Path("o/.claude/skills/x/notes.md").read_text() == "notes\n"
    link("real/skills/x/guide.md", "../../shared/guide.md")  # inside the registry, outside the item
    code, out, _ = run(["lint", "reg"], capsys)
    assert code == 1 and "reg/skills/x/guide.md: error[AR050] symlink points outside the item directory" in out, out


def test_a_symlinked_directory_is_not_entered(hostile, capsys):
    write(hostile, {"r/skills/x/SKILL.md": SKILL, "r/skills/y/SKILL.md": SKILL.replace("name: x", "name: y")})
    link("r/skills/x/more", "../y")
    link("r/skills/z", "../../..")
    code, out, _ = run(["lint", "r"], capsys)
    assert code == 0, out
    assert "r/skills/x/more: warning[AR054] a symlink to a directory: not followed" in out
    assert "r/skills/z: warning[AR054]" in out


# --- what is not a regular file ---------------------------------------------------------------

def special(kind: str, path: str) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(p))
        s.close()
    elif kind == "loop":
        p.symlink_to(p.name)
    elif kind == "chain":
        chain(p, 1000)
    elif kind == "dangling":
        p.symlink_to("missing.md")
    elif kind == "directory":
        (p / "inside").mkdir(parents=True)
    elif kind == "large":
        with open(p, "wb") as fh:
            fh.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written


def chain(p: Path, links: int, target: str = "") -> None:
    """`p` a symlink to the first of `links` symlinks, each to the next, the last to `target`
    (by default a file of the same name beside them). They lie in a directory of their own
    beside the root, so no walk lists them: only the path at `p` leads into the chain.
    `os.path.realpath` recursed once per link (RecursionError at 1,000)."""
    where = Path(os.path.abspath(p.parts[0])).parent / f"chain-of-{p.parts[0]}-{links}"
    where.mkdir(exist_ok=True)
    p.parent.mkdir(parents=True, exist_ok=True)
    if not target:
        (where / p.name).write_text("---\nname: x\ndescription: The end of the chain.\n---\nBody.\n")
        target = p.name
    for i in range(links, 0, -1):
        (where / f"l{i}").symlink_to(target)
        target = f"l{i}"
    p.symlink_to(where / "l1")


PLACES = {
    # where the file is: (files, path, CLI arguments)
    "registry": ({"r/skills/x/SKILL.md": SKILL}, "r/skills/x/data.md", ["lint", "r"]),
    "entrypoint": ({"r/rules/y/RULE.md": "---\nname: y\ndescription: Y.\n---\nY.\n"}, "r/skills/x/SKILL.md",
                   ["build", "r", "--out", "o"]),
    "argument": ({}, "f.md", ["lint", "f.md"]),
    "agents-md": ({"p/ai.config.json": "{}"}, "p/AGENTS.md", ["lint", "p"]),
    "config": ({}, "p/ai.config.json", ["lint", "p"]),
    "ai-file": ({}, "p/.ai/rules/x/prompt.md", ["lint", "p"]),
    "preset": ({"p/ai.config.json": '{"presets": ["./base"]}'}, "p/base/package.json", ["lint", "p"]),
    "import": ({}, "c/.claude/agents/x.md", ["import", "c", "--from", "claude", "--out", "o"]),
    "fmt": ({}, "r/rules/x/RULE.md", ["fmt", "r"]),
}
KINDS = {"fifo": "is a FIFO", "socket": "is a socket", "loop": "is a symlink loop", "dangling": "dangling symlink",
         "chain": "is a symlink loop, or a chain of more than 40 symlinks",
         "directory": "is a directory", "large": f"is larger than {MAX_FILE_BYTES} bytes"}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("place", sorted(PLACES))
def test_what_is_not_a_regular_file_is_ar054(place, kind, hostile, capsys, no_hang):
    files, path, args = PLACES[place]
    if kind == "directory" and place in ("registry", "entrypoint", "fmt", "import", "ai-file", "argument"):
        pytest.skip("a directory there is walked: it is a directory of the tree, not a file out of place")
    if kind in ("loop", "dangling", "chain") and place == "argument":
        pytest.skip("a command-line path that does not exist is a usage error (exit 2)")
    if kind == "large" and place == "import":
        pytest.skip("import leaves files over 1 MiB out (a filter, not an error)")
    write(hostile, files)
    special(kind, path)
    code, out, elapsed = run(args, capsys)
    assert code == 1 and f"{path}: error[AR054] " in out and KINDS[kind] in out, out
    assert elapsed < 5


def test_a_device_named_on_the_command_line_is_not_read(capsys, no_hang):
    code, out, _ = run(["lint", "/dev/zero"], capsys)
    assert code == 1 and "/dev/zero: error[AR054] is a character device, not a file" in out, out


@pytest.mark.parametrize("name", ["AGENTS.md", "ai.config.json", "base/package.json"])
def test_canonical_inputs_that_are_not_utf8_are_ar008(name, hostile, capsys):
    write(hostile, {"p/ai.config.json": '{"presets": ["./base"]}', "p/base/rules/x/prompt.md": "Body.\n"})
    write(hostile, {f"p/{name}": b"\xff\xfe not text"})
    code, out, _ = run(["lint", "p"], capsys)
    assert code == 1 and f"p/{name}:1:1: error[AR008] not UTF-8" in out, out


# --- what a configuration can do --------------------------------------------------------------

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")


def config(body: str) -> dict:
    return {"p/ai.config.mjs": body, "p/own.txt": "own words\n"}


@needs_node
def test_a_config_reads_its_project_and_sees_no_environment(hostile, capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_not_for_the_config")
    write(hostile, config("import fs from 'fs';\n"
                          "const own = fs.readFileSync(new URL('./own.txt', import.meta.url), 'utf8');\n"
                          "export default { context: { global: own + JSON.stringify(process.env) } };\n"))
    code, out, _ = run(["inspect", "--json", "p"], capsys)
    assert code == 0, out
    assert "own words\\n{}" in out and "ghp_" not in out


DENIED = {
    "read-outside": ("import fs from 'fs';\nexport default { x: fs.readFileSync('/etc/hostname', 'utf8') };\n",
                     "FileSystemRead /etc/hostname"),
    "read-secret": ("import fs from 'fs';\nexport default { x: fs.readFileSync(new URL('../../secret.txt', "
                    "import.meta.url), 'utf8') };\n", "FileSystemRead"),
    "write": ("import fs from 'fs';\nfs.writeFileSync(new URL('./w.txt', import.meta.url), 'x');\n"
              "export default {};\n", "FileSystemWrite"),
    "child-process": ("import cp from 'child_process';\nexport default { x: cp.execSync('id').toString() };\n",
                      "ChildProcess"),
    "worker": ("import { Worker } from 'worker_threads';\nnew Worker('1', { eval: true });\nexport default {};\n",
               "WorkerThreads"),
    "net": ("import net from 'net';\nnet.connect(80, '127.0.0.1');\nexport default {};\n", "network access (net)"),
    "fetch": ("await fetch('http://127.0.0.1:9/');\nexport default {};\n", "network access (fetch)"),
    "dns": ("import dns from 'dns';\nawait dns.promises.lookup('example.com');\nexport default {};\n",
            "network access (dns)"),
}


@needs_node
@pytest.mark.parametrize("what", sorted(DENIED))
@pytest.mark.parametrize("command", ["lint", "inspect"])
def test_the_sandbox_refuses(what, command, hostile, capsys):
    body, says = DENIED[what]
    write(hostile, config(body))
    code, out, _ = run([command, "p"], capsys)
    assert code == 1 and "error[AR122] the sandbox refused: " in out and says in out, out
    assert not Path("p/w.txt").exists() and "s3cr3t" not in out


@needs_node
@pytest.mark.skipif(not config_loader.no_network_prefix(), reason="no unprivileged network namespaces here")
def test_a_config_reaches_no_socket_even_past_the_loaders_doors(hostile, capsys, monkeypatch):
    """The loader's closed doors are not what stops the network where namespaces exist: with
    them taken out, a config connecting to a socket listening on this machine still reaches
    nothing, because Node runs in a network namespace of its own."""
    start = config_loader.NODE_LOADER.index("const net = require('net');")
    end = config_loader.NODE_LOADER.index("const denied")
    monkeypatch.setattr(config_loader, "NODE_LOADER", config_loader.NODE_LOADER[:start] + config_loader.NODE_LOADER[end:])
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    port = server.getsockname()[1]
    write(hostile, config(f"import net from 'net';\nconst s = net.connect({port}, '127.0.0.1');\n"
                          "const how = await new Promise(r => { s.on('connect', () => r('connected'));\n"
                          "  s.on('error', e => r(e.code)); });\nexport default { context: { global: how } };\n"))
    code, out, _ = run(["inspect", "--json", "p"], capsys)
    try:
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()
    # The namespace's loopback is down or empty: ENETUNREACH or ECONNREFUSED, never a connection.
    assert code == 0 and ('"global": "E' in out) and "connected" not in out, out


@needs_node
@pytest.mark.parametrize("command", ["lint", "inspect", "build"])
def test_a_config_that_never_ends_is_stopped(command, hostile, capsys, monkeypatch):
    monkeypatch.setenv("AGENTRC_NODE_TIMEOUT", "0.5")
    write(hostile, config("while (true) {}\nexport default {};\n"))
    code, out, elapsed = run([command, "p"] + (["--out", "o"] if command == "build" else []), capsys)
    assert code == 1 and "error[AR121] evaluating the config took longer than 0.5 s" in out, out
    assert elapsed < 3


@pytest.mark.parametrize("name,text", [("ai.config.json", "[" * 5000 + "]" * 5000),
                                       ("ai.config.json", '{"a":' * 150 + "1" + "}" * 150)])
def test_config_data_nesting_is_bounded(name, text, hostile, capsys):
    write(hostile, {f"p/{name}": text})
    code, out, _ = run(["lint", "p"], capsys)
    assert code == 1 and "error[AR110]" in out and "nest" in out, out


# --- chains of symlinks ---------------------------------------------------------------------

def test_real_path_is_realpath_with_a_bound_on_the_links_it_follows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    for name, target in (("lb", "a/b"), ("a/b/up", "../.."), ("abs", str(tmp_path / "a")), ("dangling", "no/x"),
                         ("dot", "."), ("mix", "lb/c/../.."), ("loop1", "loop2"), ("loop2", "loop1")):
        os.symlink(target, name)
    for p in ("a", "lb", "lb/c", "lb/..", "a/b/up/lb/c", "abs/b", "abs/..", "dangling", "dangling/../y", ".", "/",
              "dot/dot/lb", "mix", "mix/b", "x/../lb", "lb/missing/..", str(tmp_path / "lb") + "/"):
        assert real_path(p) == os.path.realpath(p), p
    with pytest.raises(OSError) as info:
        real_path("loop1")
    assert info.value.errno == errno.ELOOP
    chain(Path("c40/x"), 39, str(tmp_path / "a"))  # 40 links: the kernel's own bound, and ours
    assert real_path("c40/x") == str(tmp_path / "a") and os.path.isdir("c40/x")
    chain(Path("c41/x"), 40, str(tmp_path / "a"))
    with pytest.raises(OSError):
        real_path("c41/x")
    assert not os.path.isdir("c41/x")  # nor can the kernel open it


@pytest.mark.parametrize("argv", [["lint", "r"], ["build", "r", "--out", "o"], ["fmt", "r"],
                                  ["import", "r", "--from", "claude", "--out", "o"]])
def test_a_root_at_the_end_of_a_long_chain_is_refused_without_a_traceback(argv, hostile, capsys):
    write(hostile, {"reg/skills/x/SKILL.md": SKILL})
    chain(Path("r"), 1000, str(hostile / "reg"))
    code, out, _ = run(argv, capsys)
    assert code == 2 and "agentrc: error: no such" in out, out
    os.unlink("r")
    chain(Path("r"), 20, str(hostile / "reg"))  # a chain within the bound is followed
    code, out, _ = run(argv, capsys)
    assert code in (0, 1) and "Traceback" not in out and "AR054" not in out, out


def test_a_dot_ai_at_the_end_of_a_long_chain_is_ar054(hostile, capsys):
    write(hostile, {"p/ai.config.json": "{}", "real-ai/rules/x/prompt.md": "Body.\n"})
    chain(Path("p/.ai"), 1000, str(hostile / "real-ai"))
    code, out, _ = run(["lint", "p"], capsys)
    assert code == 1 and "p/.ai: error[AR054]" in out, out


# --- planted in the output directory or the cache ---------------------------------------------
# Found by an adversarial pass after `fdio.read_regular`: the writer's own reads (a merged
# config, the manifest), the no-change check's manifest, the import record, the fetch cache's
# record and the build cache's files each opened blocking, so a FIFO there hung the command.

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "registry"  # its hooks merge .claude/settings.json


def _built(capsys, out: str = "out") -> None:
    shutil.copytree(EXAMPLES, "r")
    code, text, _ = run(["build", "r", "--out", out, "--client", "claude"], capsys)
    assert code == 0, text


@pytest.mark.parametrize("rel", [".claude/settings.json", ".agentrc/manifest.json"])
def test_a_fifo_planted_in_the_output_is_refused_not_waited_on(rel, hostile, capsys, no_hang):
    _built(capsys)
    path = Path("out") / rel
    path.unlink()
    os.mkfifo(path)
    code, text, _ = run(["build", "r", "--out", "out", "--client", "claude"], capsys)
    assert code == 1 and "nothing written" in text, text
    assert f"out/{rel}: error[AR09" in text, text  # AR097 (cannot merge into it) or AR091 (not a file)


def test_a_fifo_in_place_of_an_empty_outputs_merged_file_is_refused(hostile, capsys, no_hang):
    shutil.copytree(EXAMPLES, "r")
    Path("out/.claude").mkdir(parents=True)
    os.mkfifo("out/.claude/settings.json")
    code, text, _ = run(["build", "r", "--out", "out", "--client", "claude"], capsys)
    assert code == 1 and "out/.claude/settings.json: error[AR097]" in text, text


def test_a_linked_state_directory_is_not_a_build_with_nothing_to_do(hostile, capsys):
    """The no-change check read the manifest through `.agentrc` linked elsewhere and said the
    build had nothing to do; the whole build refuses the link (AR140), and now so does this."""
    _built(capsys)
    shutil.move("out/.agentrc", "../moved")
    os.symlink(os.path.abspath("../moved"), "out/.agentrc")
    code, text, _ = run(["build", "r", "--out", "out", "--client", "claude"], capsys)
    assert code == 1 and "error[AR140]" in text, text


@pytest.mark.parametrize("pattern", ["*.stamp", "*.replay", "*.memo/index", "*.memo/*.pack"])
def test_a_fifo_in_the_build_cache_is_a_miss(pattern, hostile, capsys, no_hang):
    _built(capsys)
    cache = hostile.parent / "cache"
    found = sorted(cache.glob(pattern))
    assert found, sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*"))
    for path in found:
        path.unlink()
        os.mkfifo(path)
    rule = Path("r/rules/commit-style/RULE.md")
    rule.write_text(rule.read_text() + "\nMore.\n")  # an edit: the replay record and the packs are read
    code, text, _ = run(["build", "r", "--out", "out", "--client", "claude"], capsys)
    assert code == 0, text


def test_a_fifo_for_the_import_record_is_no_record(hostile, capsys, no_hang):
    write(Path("proj"), {"proj/CLAUDE.md": "# Project\n\nUse tabs.\n"})
    code, text, _ = run(["import", "proj", "--out", "reg", "--from", "claude"], capsys)
    assert code == 0, text
    record = Path("reg/.agentrc/imports.json")
    record.unlink()
    os.mkfifo(record)
    code, text, _ = run(["import", "proj", "--out", "reg", "--from", "claude"], capsys)
    assert code == 0, text


def test_a_fifo_for_a_fetched_checkouts_record_is_no_record(tmp_path, no_hang):
    from agentrc.inputs import fetchcache

    entry = tmp_path / "entry"
    entry.mkdir()
    (entry / "a.md").write_text("a\n")
    os.mkfifo(fetchcache.record_path(str(entry)))
    with pytest.raises(fetchcache.Changed, match="has no record"):
        fetchcache.verify(str(entry))
