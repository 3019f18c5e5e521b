"""Zero tracebacks (issue 9): the mutation fuzz harness over every front door, a short
deterministic run in the default suite, and one regression test per crash class it found.

The short run is a few hundred cases (AGENTRC_FUZZ_CASES, AGENTRC_FUZZ_SEED override it; the
long run and how to replay a case are in docs/fuzzing.md).
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import fetchfuzz
import fuzzlib
import pytest

from agentrc.cli.main import main
from agentrc.clients.registry import CLIENTS
from agentrc.importers.document import IMPORTERS

CASES = int(os.environ.get("AGENTRC_FUZZ_CASES", "600"))
SEED = int(os.environ.get("AGENTRC_FUZZ_SEED", "0"))


def test_mutated_inputs_never_raise():
    stats = fuzzlib.run(CASES, SEED)
    assert not stats.failures, fuzzlib.report(stats) + "\n\n" + stats.failures[0].trace


@pytest.mark.parametrize("target", sorted(fetchfuzz.TARGETS))
def test_the_fetch_surfaces_never_raise(target):
    """Issue 30: each new front door (source layouts, agentrc.lock.json, the spec 003 files,
    the source grammars, cap list/doctor) fenced: no traceback, no read or write outside the
    case, no hang. AGENTRC_FUZZ_FETCH_CASES overrides the cases per target."""
    cases = int(os.environ.get("AGENTRC_FUZZ_FETCH_CASES", fetchfuzz.DEFAULT_CASES[target]))
    stats = fetchfuzz.run(cases, SEED, [target])
    assert not stats.failures, fuzzlib.report(stats) + "\n\n" + stats.failures[0].trace


def test_every_fetch_target_has_a_known_crash_test():
    import test_fuzz_regressions
    names = list(fetchfuzz.KNOWN.values()) + [name for _, name in fetchfuzz.KNOWN_ORACLES]
    assert all(hasattr(test_fuzz_regressions, name) for name in names)


def test_every_front_door_has_a_seed():
    names = {s.name.split("-", 1)[0] for s in fuzzlib.scenarios()}
    assert names == {"build", "lint", "fmt", "inspect", "import", "cap", "consume"}
    imports = {s.argv[3] for s in fuzzlib.scenarios() if s.argv[0] == "import"}
    assert imports == set(IMPORTERS)


# --- one regression per crash class -------------------------------------------------------

def test_a_directory_whose_item_fails_validation_is_not_rendered_on_its_own():
    """Case 3843 of 4,000 (seed 0, lint-registry), on the code before the directory nodes
    skipped rendering an item that fails validation: a command whose tools held `null`
    reached the Claude adapter (KeyError) when its directory was parsed and rendered alone."""
    head = b"---\nschema: 1\ndescription: Use when x\ntools:\n  - "
    files = {"in/commands/c/COMMAND.md": head + b"null\n---\n\n## C\n\nC.\n",
             "in/agents/a/AGENT.md": head + b"Bash\n---\n\n## A\n\nA.\n"}
    assert fuzzlib._directory_nodes(files, ["lint", "in"]) == (None, "")


def _project(root: Path, files: dict) -> Path:
    for rel, content in files.items():
        p = root / "in" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def _cli(tmp_path: Path, monkeypatch, argv, capsys):
    monkeypatch.chdir(tmp_path)
    code = main(argv)
    out = capsys.readouterr()
    return code, out.err + out.out


SKILL = "---\ndescription: A skill\n---\n\nBody.\n"


@pytest.mark.parametrize("meta", ["null", "[]", "3", '"x"'])
@pytest.mark.parametrize("where", ["agents/a/index.json", "hooks/Stop/index.json"])
def test_index_json_that_is_not_an_object(tmp_path, monkeypatch, capsys, meta, where):
    """index.json holding null or a list was merged with ** (TypeError)."""
    files = {".ai/" + where: meta, ".ai/agents/a/prompt.md": "Do it.\n", ".ai/hooks/Stop/prompt.md": "echo\n",
             "ai.config.json": "{}"}
    code, err = _cli(_project(tmp_path, files), monkeypatch, ["lint", "in"], capsys)
    # A hook's index.json may hold an array (spec 000: several hooks for the event), not beside a prompt.md.
    why = "prompt.md beside an index.json that holds an array" if (where, meta) == ("hooks/Stop/index.json", "[]") \
        else "not an object"
    assert code == 1 and "error[AR115]" in err and why in err


@pytest.mark.parametrize("timeout", ["NaN", "Infinity", "1e400"])
def test_hook_timeout_not_finite(tmp_path, monkeypatch, capsys, timeout):
    """int(round(nan)) raised ValueError, of inf OverflowError."""
    config = '{"hooks": {"Stop": {"script": "echo", "timeout": %s}}}' % timeout
    code, err = _cli(_project(tmp_path, {"ai.config.json": config}), monkeypatch,
                     ["build", "in", "--out", "out", "--client", "claude"], capsys)
    assert code == 1 and "error[AR115]" in err and "finite" in err


def test_invalid_base64_skill_file(tmp_path, monkeypatch, capsys):
    config = {"skills": {"s": {"content": "x", "files": {"f.bin": {"content": "abc", "encoding": "base64"}}}}}
    code, err = _cli(_project(tmp_path, {"ai.config.json": json.dumps(config)}), monkeypatch,
                     ["build", "in", "--out", "out", "--client", "claude"], capsys)
    assert code == 1 and "error[AR115]" in err and "base64" in err


@pytest.mark.parametrize("names", [[""], ["."], ["x/"], ["a", "a/b"], ["a\x00b"], ["./a"]])
def test_skill_file_names_that_are_not_files(tmp_path, monkeypatch, capsys, names):
    files = {n: "text" for n in names}
    config = {"skills": {"s": {"content": "x", "files": files}}}
    code, err = _cli(_project(tmp_path, {"ai.config.json": json.dumps(config)}), monkeypatch,
                     ["build", "in", "--out", "out", "--client", "claude,codex"], capsys)
    assert code == 1 and "error[AR117]" in err


def test_a_valid_binary_skill_file_still_builds(tmp_path, monkeypatch, capsys):
    data = base64.encodebytes(b"\x00\x01" * 100).decode()  # with line breaks, as MIME writes it
    config = {"skills": {"s": {"content": "x", "files": {"f.bin": {"content": data, "encoding": "base64"}}}}}
    code, err = _cli(_project(tmp_path, {"ai.config.json": json.dumps(config)}), monkeypatch,
                     ["build", "in", "--out", "out", "--client", "claude"], capsys)
    assert code == 0, err
    assert (tmp_path / "out/.claude/skills/s/f.bin").read_bytes() == b"\x00\x01" * 100


@pytest.mark.parametrize("where", ["ai.config.json", ".ai/tools/claude/config.json", ".ai/mcp.json"])
def test_lone_surrogate_escapes(tmp_path, monkeypatch, capsys, where):
    """json.loads turns "\\ud800" into a str no file can hold (UnicodeEncodeError on write)."""
    data = {"ai.config.json": '{"rules": {"r": {"content": "\\ud800"}}}',
            ".ai/tools/claude/config.json": '{"x": "\\udc00"}',
            ".ai/mcp.json": '{"servers": {"s": {"command": "x", "env": {"\\ud800": "v"}}}}'}[where]
    files = {where: data} if where == "ai.config.json" else {where: data, "ai.config.json": "{}"}
    code, err = _cli(_project(tmp_path, files), monkeypatch, ["build", "in", "--out", "out", "--client", "claude"],
                     capsys)
    assert code == 1 and "error[AR115]" in err and "surrogate" in err


@pytest.mark.parametrize("argv", [
    ["build", "in", "--out", "o\x00ut"],
    ["build", "in", "--out", "out", "--jobs", "-1"],
    ["build", "in", "--out", ""],
    ["build", "in", "--out", "out", "--report", " "],
    ["build", "in", "--out", "out", "--report", "."],
    ["build", "in", "--out", "out", "--report", "in"],
    ["import", "in", "--from", "claude", "--out", "out", "--canonical", "x\x00y"],
    ["lint", "in\x00"],
    ["import", "in", "--from", "claude", "--out", "out", "--canonical", "."],
    ["import", "in", "--from", "claude", "--out", "out", "--canonical", "out"],
    ["import", "in", "--from", "claude", "--out", "x/out", "--canonical", "x"],
    ["import", "in", "--from", "claude", "--out", "", "--canonical", "doc.json"],
    ["build", "in", "--out", "out", "--layout", "plugin", "--plugin-name", "../up"],
    ["build", "in", "--out", "out", "--layout", "plugin", "--plugin-name", "x" * 65],
    ["build", "in", "--out", "out", "--layout", "plugin", "--plugin-name", "My Plugin"],
])
def test_bad_flags_are_usage_errors(tmp_path, monkeypatch, capsys, argv):
    _project(tmp_path, {"r/RULE.md": "---\ndescription: d\n---\n\nBody.\n"})
    code, err = _cli(tmp_path, monkeypatch, argv, capsys)
    assert code == 2 and "agentrc: error:" in err


@pytest.mark.parametrize("field", ["tools: 1", "preload-skills: 3", "tools: [read]"])
def test_a_field_of_another_kind_is_ignored(tmp_path, monkeypatch, capsys, field):
    """A context's `tools: 1` is not checked (contexts have no tools), so make_item iterated an int."""
    _project(tmp_path, {"ctx/CONTEXT.md": f"---\ndescription: Context\n{field}\n---\n\n## Notes\n\nText.\n"})
    code, err = _cli(tmp_path, monkeypatch, ["build", "in", "--out", "out", "--client", "claude"], capsys)
    assert code == 0 and "warning[AR007]" in err, err


@pytest.mark.parametrize("files", [
    {"ai.config.json": '{"skills": ["a"], "hooks": 3, "commands": null}'},
    {"ai.config.json": "{}", ".ai/mcp.json": '{"servers": 0.5}'},
    {"ai.config.json": '{"mcp": {"servers": [1]}}'},
])
def test_sections_that_are_not_objects(tmp_path, monkeypatch, capsys, files):
    """The checks after the schema iterated skills/hooks/servers with .items() (AttributeError)."""
    code, err = _cli(_project(tmp_path, files), monkeypatch, ["lint", "in"], capsys)
    assert code == 1 and "error[AR115]" in err, err


@pytest.mark.parametrize("client, rel, text", [
    ("claude", ".mcp.json", '{"mcpServers": {"a": {"command": "\\ud800"}}}'),
    ("cursor", ".cursor/hooks.json",
     '{"version": 1, "hooks": {"preToolUse": [{"command": "x", "matcher": "\\udc00"}]}}'),
])
def test_import_lone_surrogate_escapes(tmp_path, monkeypatch, capsys, client, rel, text):
    _project(tmp_path, {rel: text})
    code, err = _cli(tmp_path, monkeypatch, ["import", "in", "--from", client, "--out", "out", "--canonical",
                                             "doc.json", "--strict"], capsys)
    assert code == 1 and "error[AR131]" in err and "surrogate" in err, err
    # Without --strict the file is reported and skipped.
    code, err = _cli(tmp_path, monkeypatch, ["import", "in", "--from", client, "--out", "out"], capsys)
    assert code == 0 and "warning[AR131]" in err and "surrogate" in err, err


def test_an_empty_preload_skills_list_builds_for_every_client(tmp_path, monkeypatch, capsys):
    """`preload-skills: []` is valid and names no skill; no adapter gave it an outcome, so the
    Tracker stopped every build (UnreportedField, fuzz seed 11 case 22860)."""
    _project(tmp_path, {"agents/a/AGENT.md": "---\ndescription: An agent\npreload-skills: []\n---\n\nDo things.\n"})
    code, err = _cli(tmp_path, monkeypatch, ["build", "in", "--out", "out", "--client", ",".join(CLIENTS),
                                             "--report", "report.json"], capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "report.json").read_text())
    outcomes = {(r["client"], f["field"]): f["status"] for r in report["items"] for f in r["fields"]}
    from agentrc.clients.registry import CLIENTS as ADAPTERS
    from agentrc.model import Kind

    with_agents = [c for c in CLIENTS if Kind.AGENT in ADAPTERS[c].kinds]
    assert {outcomes[(c, "preload-skills")] for c in with_agents} == {"omitted"}
    # A client with no agents (Aider) drops the whole item, this field with it.
    assert {outcomes[(c, "preload-skills")] for c in CLIENTS if c not in with_agents} <= {"dropped"}


def test_a_tools_section_that_is_not_an_object(tmp_path, monkeypatch, capsys):
    """`tools: [...]` reached the conversion, which iterated it as a mapping (AttributeError;
    fuzz seed 21 case 10877)."""
    _project(tmp_path, {"ai.config.json": '{"context": {"global": "Hi."}, "tools": ["./presets/team"]}'})
    code, err = _cli(tmp_path, monkeypatch, ["lint", "in"], capsys)
    assert code == 1 and "error[AR115] tools: expected an object" in err, err


# --- the fence of the fetch targets (tests/fuzz/guard.py) ---------------------------------

def test_the_fence_refuses_what_lies_outside_the_case(tmp_path):
    """What the fetch targets count on: reads and writes outside the case, through a link
    or not, and processes other than git stop the case; a link's own target text does not."""
    import subprocess

    import guard
    case, outside = tmp_path / "case", tmp_path / "outside"
    case.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET")
    os.symlink(str(outside), case / "out")
    attempts = [lambda: os.listdir(str(outside)), lambda: open(str(outside / "secret.txt"), "rb"),
                lambda: os.listdir(str(case / "out")), lambda: open(str(case / "out" / "new.txt"), "wb"),
                lambda: os.remove(str(outside / "secret.txt")), lambda: os.mkdir(str(case / "out" / "d")),
                lambda: subprocess.run(["true"])]
    for attempt in attempts:
        with pytest.raises(guard.Escaped), guard.fenced(case, 5):
            attempt()
    with guard.fenced(case, 5):  # inside the case: all allowed
        os.symlink("/", str(case / "root-link"))
        (case / "f.txt").write_text("x")
        os.utime(str(case / "root-link"), follow_symlinks=False)
        os.listdir(str(case))
    assert (outside / "secret.txt").read_text() == "SECRET"


def test_the_fence_stops_a_case_that_blocks(tmp_path):
    import guard
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(guard.TimedOut), guard.fenced(tmp_path, 0.5):
        open(str(tmp_path / "fifo"), "rb")
