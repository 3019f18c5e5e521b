"""Activation (spec 003, "Config and targets"): oas-config.yaml into the model, the schema
judged against the kernel's, and which capabilities are active for a soul, judged against
`oas doctor --soul NAME --json` on the same scopes."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from agentrc import schemas
from agentrc.capabilities import activation
from agentrc.capabilities import config as configs
from agentrc.capabilities.model import Capability
from agentrc.cli.main import main
from agentrc.diagnostics import Diagnostics
from agentrc.frozen import FrozenMap
from test_cap_install import git, write_package
from test_cap_judge import KERNEL, OAS
from test_cap_model import _kernel_validator
from test_cap_spawn import DEFAULT_TEXTS, neutral_defaults

SPEC = {
    "agent-types": {"developers": {"description": "Build"}, "reviewers": {"description": "Review"}},
    "capabilities": {
        "layers": {"knowledge": {"capability": "oas.okf", "from": "installed"}, "messaging": "none", "tasks": "none"},
        "additive": {
            "example.code-review": {"from": "installed", "agent-types": {"developers": {
                "enabled": True, "settings": {"depth": "normal"}}}, "souls": {"security-reviewer": {
                    "enabled": True, "settings": {"depth": "exhaustive"}}}},
            "example.deploy": {"from": "installed", "global": True, "agent-types": {"reviewers": False},
                               "souls": {"release-reviewer": True}}}},
    "skill-overrides": {"review": "example.code-review"},
}


def _with(doc, path, value):
    out = copy.deepcopy(doc)
    target = out
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    return out


CASES = [SPEC, {}, {"name": "x", "team": {"name": "t", "id": "t:n"}, "templates": {"a": "b"},
                    "agents-md-injection": "x.md", "oas": {"injection-override": "none"},
                    "work-modes": {"worktree": {"setup": "s.sh"}, "checkout": None}}] + [
    _with(SPEC, p, v) for p, v in [
        (("capabilities", "layers", "storage"), "none"), (("capabilities", "layers", "tasks"), "off"),
        (("capabilities", "layers", "tasks"), {"from": "installed"}), (("capabilities", "additive", "NoNamespace"), {}),
        (("capabilities", "additive", "a.b"), {"capability": "a.b"}), (("capabilities", "extra"), {}),
        (("capabilities", "additive", "a.b"), {"agent-types": ["x", "x"]}),
        (("capabilities", "additive", "a.b"), {"agent-types": ["x"], "souls": {"s": {"enabled": "yes"}}}),
        (("capabilities", "additive", "a.b"), {"global": {"enabled": True, "extra": 1}}),
        (("team",), {"id": "x"}), (("agent-types", "x"), None), (("agent-types", "x"), {"members": []}),
        (("work-modes", "workspace"), {}), (("skill-overrides", "x"), 1), (("groups",), {}),
        (("capabilities", "layers", "knowledge", "settings"), "deep"),
    ]]


def test_the_config_schema_accepts_what_the_kernels_accepts():
    kernel = _kernel_validator("oas-config.schema.json")
    verdicts = []
    for doc in CASES:
        ours = not list(schemas.errors("oas-config", doc))
        assert ours == kernel.is_valid(doc), json.dumps(doc)
        verdicts.append(ours)
    assert any(verdicts) and not all(verdicts)


def _parse(text: str):
    d = Diagnostics()
    cfg = configs.parse("oas-config.yaml", "/scope", text.encode(), d)
    return cfg, d


@pytest.mark.parametrize("text,needle", [
    ("groups:\n  devs: [a]\n", "agent-types"),
    ("layers:\n  knowledge: oas.okf\n", "capabilities.layers"),
    ("capabilities:\n  additive:\n    a.b:\n      injection: x.md\n", "injection-override"),
    ("capabilities:\n  additive:\n    a.b:\n      from: bundled\n", "from: installed"),
    ("capabilities:\n  additive:\n    a.b:\n      from: owned\n      injection-override: x.md\n", "injects/"),
    ("capabilities:\n  layers:\n    tasks: off\n", "tasks"),
])
def test_config_rules_are_ar168(text, needle):
    cfg, d = _parse(text)
    assert cfg is None and [x.code for x in d.items] == ["AR168"] and needle in d.items[0].message


def test_the_specs_example_config_reads_into_the_model():
    cfg, d = _parse(yaml.safe_dump(SPEC))
    assert not d.items and cfg.none_layers == ("messaging", "tasks") and cfg.agent_types == ("developers", "reviewers")
    review = next(e for e in cfg.entries if e.id == "example.code-review")
    assert review.global_ is None and review.targets_given and dict(review.agent_types)["developers"].on
    assert cfg.skill_overrides == (("review", "example.code-review"),)
    hash(cfg)


def _cap(cid, layer="", command=""):
    return Capability(cid, "1.0.0", "d", layer=layer, command=command)


MANIFESTS = {"oas.okf": (_cap("oas.okf", "knowledge"), "installed:/scope"),
             "example.code-review": (_cap("example.code-review"), "installed:/scope"),
             "example.deploy": (_cap("example.deploy"), "installed:/scope")}


def _resolve(chain_texts, soul, soul_type, manifests=MANIFESTS):
    chain = []
    for i, text in enumerate(chain_texts):
        d = Diagnostics()
        cfg = configs.parse(f"/l{i}/oas-config.yaml", f"/l{i}", text.encode(), d)
        assert cfg is not None, d.items
        chain.append(cfg)
    d = Diagnostics()
    return activation.resolve(chain, soul, soul_type, manifests, d), d


@pytest.mark.parametrize("soul,soul_type,expected", [
    ("dev", "developers", {"oas.okf": {}, "example.code-review": {"depth": "normal"}, "example.deploy": {}}),
    ("security-reviewer", "reviewers", {"oas.okf": {}, "example.code-review": {"depth": "exhaustive"}}),
    ("release-reviewer", "reviewers", {"oas.okf": {}, "example.deploy": {}}),
    ("", "", {"oas.okf": {}, "example.deploy": {}}),
])
def test_the_specs_example_resolves_per_soul(soul, soul_type, expected):
    result, d = _resolve([yaml.safe_dump(SPEC)], soul, soul_type)
    assert not d.items
    assert {a.id: dict(a.settings) for a in result.capabilities} == expected
    assert dict(result.layers) == {"knowledge": "oas.okf"}
    assert dict(result.provenance)["messaging"] == "none @ /l0"


def test_closer_scopes_and_stronger_targets_win_and_none_switches_off():
    outer = "capabilities:\n  additive:\n    example.deploy:\n      global:\n        settings: {a: outer, b: outer}\n" \
            "  layers:\n    knowledge:\n      capability: oas.okf\n"
    inner = "capabilities:\n  additive:\n    example.deploy:\n      global:\n        settings: {a: inner}\n" \
            "      agent-types:\n        ops:\n          settings: {b: type}\n  layers:\n    knowledge: none\n"
    result, d = _resolve([inner, outer], "x", "ops")
    assert not d.items and [a.id for a in result.capabilities] == ["example.deploy"]  # knowledge none closer in
    assert dict(result.capabilities[0].settings) == {"a": "inner", "b": "type"}


@pytest.mark.parametrize("text,code", [
    ("capabilities:\n  additive:\n    example.deploy:\n      agent-types: {ops: {settings: {a: 1}}}\n"
     "      souls: {}\n      global: {settings: {a: 1}}\n", None),
    ("capabilities:\n  additive:\n    example.deploy:\n      agent-types: [ops, dev]\n      souls: {x: false}\n",
     None),
    ("capabilities:\n  additive:\n    example.deploy:\n      settings: {a: 1}\n      global: {settings: {a: 2}}\n",
     None),
    ("capabilities:\n  layers:\n    tasks:\n      capability: example.deploy\n", "AR170"),
    ("capabilities:\n  additive:\n    oas.okf:\n      global: true\n", "AR170"),
    ("capabilities:\n  additive:\n    missing.cap:\n      global: true\n", "AR170"),
    ("capabilities:\n  additive:\n    example.deploy:\n      from: owned\n      global: true\n", "AR170"),
    ("capabilities:\n  layers:\n    knowledge:\n      capability: oas.okf\n      souls: {x: true}\n"
     "  additive:\n    example.deploy:\n      global: true\n", None),
])
def test_activation_errors(text, code):
    result, d = _resolve([text], "x", "ops")
    assert [x.code for x in d.items] == ([code] if code else [])


def test_equal_specificity_disagreements_are_ar169():
    # One config cannot name a capability twice (a repeated YAML key is AR004), so the
    # function is given two entries directly: a setting and `enabled` that disagree.
    a = configs.Entry("example.deploy", global_=configs.Binding(True, FrozenMap({"a": 1})), global_given=True)
    b = configs.Entry("example.deploy", global_=configs.Binding(False, FrozenMap({"a": 2})), global_given=True)
    d = Diagnostics()
    result = activation.resolve([configs.Config("/l0/oas-config.yaml", "/l0", entries=(a, b))], "x", "",
                                MANIFESTS, d)
    assert sorted(x.code for x in d.items) == ["AR169", "AR169"] and result.capabilities == ()

    two = "capabilities:\n  additive:\n    example.deploy:\n      agent-types:\n        ops: {settings: {a: 1}}\n" \
          "        dev: {settings: {a: 2}}\n"
    # Only the soul's own type matches, so no conflict...
    assert not _resolve([two], "x", "ops")[1].items
    both = "capabilities:\n  additive:\n    example.deploy:\n      global: {settings: {a: 1}}\n" \
           "      settings: {a: 1}\n      souls:\n        x: {enabled: false}\n"
    result, d = _resolve([both], "x", "ops")
    assert not d.items and result.capabilities == ()  # the soul binding switches it off
    layered = {**MANIFESTS, "other.okf": (_cap("other.okf", "knowledge"), "installed:/scope")}
    inner = "capabilities:\n  layers:\n    knowledge:\n      capability: oas.okf\n"
    outer = "capabilities:\n  layers:\n    knowledge:\n      capability: other.okf\n"
    result, d = _resolve([inner, outer], "x", "ops", layered)
    assert [x.code for x in d.items] == ["AR153"]
    cmd = {"a.one": (_cap("a.one", command="go"), "owned:/s"), "a.two": (_cap("a.two", command="go"), "owned:/s")}
    result, d = _resolve(["capabilities:\n  additive:\n    a.one: {global: true}\n    a.two: {global: true}\n"],
                         "x", "", cmd)
    assert [x.code for x in d.items] == ["AR170"] and "namespace" in d.items[0].message
    clash = "capabilities:\n  additive:\n    example.deploy:\n      souls:\n        x: {settings: {a: 1}}\n"
    twice = _with(yaml.safe_load(clash), ("capabilities", "additive", "example.deploy", "agent-types"),
                  {"ops": {"enabled": False}})
    result, d = _resolve([yaml.safe_dump(twice)], "x", "ops")
    assert not d.items and [a.id for a in result.capabilities] == ["example.deploy"]  # soul re-enables


# --- judged by the kernel ----------------------------------------------------------------


needs_kernel = pytest.mark.skipif(not (KERNEL / "bin" / "oas.mjs").exists() or not shutil.which("node"),
                                  reason="the OAS kernel and node are needed")


def oas_doctor(tmp_path: Path, *args) -> dict:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    proc = subprocess.run(["node", str(OAS), "doctor", *args, "--json"], capture_output=True, text=True,
                          env=dict(os.environ, HOME=str(home)), timeout=300)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return json.loads(proc.stdout)


def _deployment(tmp_path: Path) -> Path:
    """A workspace with a config, holding a repository with its own config, souls of two
    types, and capabilities installed at both scopes."""
    ws = tmp_path / "ws"
    repo = ws / "service"
    repo.mkdir(parents=True)
    git("init", "-q", str(repo))
    for name, stype, extra in (("dev", "developers", ""), ("sec", "reviewers", "work: worktree\n"),
                               ("rel", "reviewers", "kind: local\n"), ("plain", "", "work: no-such-mode\n")):
        soul = repo / "agents" / name / "soul"
        soul.mkdir(parents=True)
        (soul / "soul.yaml").write_text(f"name: {name}\n" + (f"type: {stype}\n" if stype else "") + extra)
        (soul / "AGENTS.md").write_text(f"# {name}\n")
    outer = write_package(tmp_path / "outer", pid="outer.pkg", caps={"k": ("ex.knowledge", "knowledge"),
                                                                     "d": ("ex.deploy", "")})
    inner = write_package(tmp_path / "inner", pid="inner.pkg", caps={"r": ("ex.review", ""),
                                                                     "t": ("ex.tasks", "tasks")})
    knowledge = json.loads((outer / "k" / "oas.json").read_text())
    knowledge["requires"] = [{"command": "git", "why": "history"},
                             {"command": "no-such-tool-for-agentrc", "why": "harvest", "install": "https://x.invalid"},
                             {"runtime": "claude", "package": "p@m", "why": "push"}]
    (outer / "k" / "oas.json").write_text(json.dumps(knowledge))
    for pkg, scope in ((outer, ws), (inner, repo)):
        assert main(["cap", "install", str(pkg), "--dir", str(scope), "--json"]) == 0
    assert main(["cap", "trust", "ex.review", "--dir", str(repo), "--json"]) == 0
    (repo / "mine.md").write_text("Our own words.\n")
    owned = repo / ".agents" / "capabilities" / "owned" / "ex.local"
    owned.mkdir(parents=True)
    (owned / "oas.json").write_text('{"capability": "ex.local", "version": "1", "description": "Authored here."}')
    (ws / "team.md").write_text("The team's conventions.\n")
    (repo / "injects").mkdir()
    (repo / "injects" / "repo.md").write_text("  Repository rules.  \n\n")
    (ws / "oas-config.yaml").write_text(yaml.safe_dump({
        "name": "ws", "agents-md-injection": "team.md",
        "agent-types": {"developers": None, "reviewers": None},
        "capabilities": {
            "layers": {"knowledge": {"capability": "ex.knowledge", "from": "installed", "settings": {"model": "x"}}},
            "additive": {"ex.deploy": {"from": "installed", "global": {"settings": {"env": "staging", "n": 1}},
                                       "agent-types": {"reviewers": False}, "souls": {"rel": True}}}}}))
    # Lists in flow style: the kernel's own YAML reader reads a block sequence ("- developers"
    # on its own line) as an empty map, which would silently deactivate the entry.
    (repo / "oas-config.yaml").write_text(yaml.safe_dump(default_flow_style=None, data={
        "agents-md-injection": {"repository": "injects/repo.md", "gone": "injects/missing.md"},
        "capabilities": {
            "layers": {"tasks": {"capability": "ex.tasks", "agent-types": ["developers"],
                                 "injection-override": "none"}},
            "additive": {
                "ex.deploy": {"global": {"settings": {"env": "prod"}}, "injection-override": "mine.md"},
                "ex.review": {"from": "installed", "agent-types": {"developers": {"settings": {"depth": "normal"}},
                                                                   "reviewers": True},
                              "souls": {"sec": {"settings": {"depth": "exhaustive"}}}},
                "ex.local": {"from": "owned", "souls": {"plain": True}}}}}))
    return repo


@needs_kernel
def test_doctor_without_a_soul_composes_nothing_as_oas_doctor(tmp_path, capsys):
    repo = _deployment(tmp_path)
    capsys.readouterr()
    assert main(["cap", "doctor", str(repo), "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)
    theirs = oas_doctor(tmp_path, str(repo))
    for key in ("instructionBlocks", "composedInstructions"):
        assert key not in ours and key not in theirs, key
    assert [c["id"] for c in ours["capabilities"]] == [c["id"] for c in theirs["capabilities"]]


@needs_kernel
@pytest.mark.parametrize("soul", ["dev", "sec", "rel", "plain"])
def test_doctor_agrees_with_oas_doctor(tmp_path, capsys, soul):
    repo = _deployment(tmp_path)
    capsys.readouterr()
    assert main(["cap", "doctor", str(repo), "--soul", soul, "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)
    theirs = oas_doctor(tmp_path, str(repo), "--soul", soul)
    fields = ("id", "layer", "command", "origin", "provenance", "settings", "skills", "inject", "hooks")
    assert [{f: c[f] for f in fields} for c in ours["capabilities"]] == \
        [{f: c.get(f) for f in fields} for c in theirs["capabilities"]]
    assert {k: v.get("provenance") for k, v in ours["layers"].items()} == \
        {k: v.get("provenance") for k, v in theirs["layers"].items()}
    for key in ("integration", "level", "inject", "skills", "hooks", "missingRequires"):
        assert {k: v.get(key) for k, v in ours["layers"].items()} == \
            {k: v.get(key) for k, v in theirs["layers"].items()}, key
    assert [c["trust"]["trusted"] for c in ours["capabilities"]] == \
        [c["trust"]["trusted"] for c in theirs["capabilities"]]
    assert [c["file"] for c in ours["chain"]] == [c["file"] for c in theirs["chain"]]
    assert {k: v["origin"] for k, v in ours["acquired"].items()} == \
        {k: v["origin"] for k, v in theirs["acquired"].items()}
    assert ours["injects"] == theirs["injects"] and len(ours["injects"]) == 2
    # Every block in the kernel's order; byte for byte but for each tool's own default texts.
    assert [b["source"] for b in ours["instructionBlocks"]] == [b["source"] for b in theirs["instructionBlocks"]]
    assert [b for b in ours["instructionBlocks"] if not b["file"].startswith(DEFAULT_TEXTS)] == \
        [b for b in theirs["instructionBlocks"] if not b["file"].startswith(DEFAULT_TEXTS)]
    assert [b["source"] for b in ours["instructionBlocks"]][:2] == ["kernel:oas", "kernel:local-soul" if soul == "rel"
                                                                    else "kernel:instance-boundary"]
    assert neutral_defaults(ours["composedInstructions"]) == neutral_defaults(theirs["composedInstructions"])
    assert ours["kernelInjection"]["provenance"] == theirs["kernelInjection"]["provenance"] == "default"
    assert ours["capabilities"]  # the deployment activates something for every soul
    assert [r["command"] for r in ours["layers"]["knowledge"]["missingRequires"]] == ["no-such-tool-for-agentrc"]


@needs_kernel
@pytest.mark.parametrize("override", ["notes/oas.md", "none", "default", "missing.md"])
def test_an_oas_injection_override_is_honoured_as_the_kernel_honours_it(tmp_path, capsys, override):
    """`oas: {injection-override: ...}` at the closest config that sets it (here the
    workspace's, relative to it): the same kernel:oas block, byte for byte, or none."""
    repo = _deployment(tmp_path)
    ws = repo.parent
    (ws / "notes").mkdir()
    (ws / "notes" / "oas.md").write_text("\n# Team rules for agents\n\nAsk before pushing.\n\n")
    with open(ws / "oas-config.yaml", "a") as fh:
        fh.write(f"oas:\n  injection-override: {override}\n")
    capsys.readouterr()
    assert main(["cap", "doctor", str(repo), "--soul", "dev", "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)
    theirs = oas_doctor(tmp_path, str(repo), "--soul", "dev")
    assert ours["kernelInjection"]["provenance"] == theirs["kernelInjection"]["provenance"] == f"oas @ {ws}"
    first = ours["instructionBlocks"][0]
    if override == "notes/oas.md":
        assert ours["kernelInjection"] == theirs["kernelInjection"]
        assert first == theirs["instructionBlocks"][0] == {
            "source": "kernel:oas", "file": str(ws / "notes" / "oas.md"),
            "content": "# Team rules for agents\n\nAsk before pushing."}
    elif override == "default":
        assert first["source"] == "kernel:oas" and first["file"].startswith(DEFAULT_TEXTS)
    else:  # none, or a file that is not there: no kernel:oas block in either
        assert [b["source"] for b in ours["instructionBlocks"]][0] == "kernel:instance-boundary"
    assert [b["source"] for b in ours["instructionBlocks"]] == [b["source"] for b in theirs["instructionBlocks"]]
    assert neutral_defaults(ours["composedInstructions"]) == neutral_defaults(theirs["composedInstructions"])


@needs_kernel
def test_an_empty_injection_override_is_the_default_and_stops_the_search(tmp_path, capsys):
    """`injection-override: ""` at the closer config is the packaged text, as `default` is:
    an outer config's `none` does not apply (the kernel stops at the first entry that has
    the key)."""
    repo = _deployment(tmp_path)
    ws = repo.parent
    for path, value in ((ws / "oas-config.yaml", "none"), (repo / "oas-config.yaml", "")):
        data = yaml.safe_load(path.read_text())
        data["capabilities"]["additive"]["ex.deploy"]["injection-override"] = value
        path.write_text(yaml.safe_dump(data, default_flow_style=None))
    capsys.readouterr()
    assert main(["cap", "doctor", str(repo), "--soul", "dev", "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)
    theirs = oas_doctor(tmp_path, str(repo), "--soul", "dev")
    deploy = [c for c in ours["capabilities"] if c["id"] == "ex.deploy"]
    assert deploy and deploy[0]["inject"] and deploy[0]["inject"].endswith(".md")
    assert [c["inject"] for c in ours["capabilities"]] == [c.get("inject") for c in theirs["capabilities"]]
    assert "capability:ex.deploy" in [b["source"] for b in ours["instructionBlocks"]]
    assert [b["source"] for b in ours["instructionBlocks"]] == [b["source"] for b in theirs["instructionBlocks"]]


@needs_kernel
def test_use_writes_what_oas_use_writes(tmp_path, capsys):
    pkg = write_package(tmp_path / "pkg", caps={"k": ("ex.knowledge", "knowledge"), "d": ("ex.deploy", ""),
                                                "r": ("ex.review", "")})
    scopes = []
    for name in ("a", "k"):
        s = tmp_path / name / "repo"
        s.mkdir(parents=True)
        (s / "oas-config.yaml").write_text("name: repo\n# the team's agent families\nagent-types:\n  developers:\n"
                                           "    description: Devs\n  reviewers:\n    description: Reviewers\n\n"
                                           "work-modes:\n  worktree:\n    setup: scripts/setup.sh\n")
        assert main(["cap", "install", str(pkg), "--dir", str(s), "--json"]) == 0
        scopes.append(s)
    capsys.readouterr()
    steps = [["ex.deploy"], ["ex.deploy", "--type", "reviewers", "--disable"], ["ex.deploy", "--soul", "rel"],
             ["ex.knowledge", "--settings", "model=gpt", "tier=high"], ["ex.knowledge", "--soul", "dev", "--disable"],
             ["none", "--layer", "messaging"], ["ex.review", "--type", "developers", "--settings", "depth=normal"],
             ["ex.review", "--global", "--disable"]]
    home = tmp_path / "home"
    home.mkdir()
    for step in steps:
        assert main(["cap", "use", *step, "--dir", str(scopes[0])]) == 0, step
        proc = subprocess.run(["node", str(OAS), "use", *step, "--dir", str(scopes[1])], capture_output=True,
                              text=True, env=dict(os.environ, HOME=str(home)))
        assert proc.returncode == 0, proc.stderr
        ours, theirs = ((s / "oas-config.yaml").read_text() for s in scopes)
        assert ours == theirs, step
    assert "work-modes:" in ours and "# the team's agent families" in ours  # the rest of the file is kept
    # And both resolve the result the same way.
    for soul, stype in (("rel", "reviewers"), ("dev", "developers")):
        for s in scopes:
            soul_dir = s / "agents" / soul / "soul"
            soul_dir.mkdir(parents=True, exist_ok=True)
            (soul_dir / "soul.yaml").write_text(f"name: {soul}\ntype: {stype}\n")
            (soul_dir / "AGENTS.md").write_text(f"# {soul}\n")
        capsys.readouterr()
        assert main(["cap", "doctor", str(scopes[0]), "--soul", soul, "--json"]) == 0
        mine = json.loads(capsys.readouterr().out)
        kernel = oas_doctor(tmp_path, str(scopes[1]), "--soul", soul)
        assert [(c["id"], c["settings"]) for c in mine["capabilities"]] == \
            [(c["id"], c["settings"]) for c in kernel["capabilities"]]


def test_use_refuses_what_it_cannot_do(tmp_path, capsys):
    scope = tmp_path / "s"
    scope.mkdir()
    (scope / "oas-config.yaml").write_text("name: s\n")
    pkg = write_package(tmp_path / "pkg", caps={"k": ("ex.knowledge", "knowledge"), "j": ("ex.other", "knowledge")})
    assert main(["cap", "install", str(pkg), "--dir", str(scope), "--json"]) == 0
    capsys.readouterr()
    assert main(["cap", "use", "ex.knowledge", "--dir", str(scope)]) == 0
    before = (scope / "oas-config.yaml").read_bytes()
    for argv, code in ((["ex.other"], "AR153"), (["missing.cap"], "AR170"), (["none"], "AR168"),
                       (["ex.knowledge", "--layer", "tasks"], "AR170"), (["ex.knowledge", "--settings", "x"], "AR168")):
        assert main(["cap", "use", *argv, "--dir", str(scope)]) == 1
        assert f"error[{code}]" in capsys.readouterr().err, argv
        assert (scope / "oas-config.yaml").read_bytes() == before
    assert main(["cap", "use", "ex.knowledge", "--settings", "n=1", "flag=true", "--dir", str(scope)]) == 0
    written = yaml.safe_load((scope / "oas-config.yaml").read_text())
    # Strings stay strings.
    assert written["capabilities"]["layers"]["knowledge"]["settings"] == {"n": "1", "flag": "true"}


def test_build_writes_the_active_skills_for_every_client(tmp_path, capsys):
    repo = _deployment(tmp_path)
    out = tmp_path / "out"
    capsys.readouterr()
    # Every capability of the deployment ships a skill named hello: two active ones collide.
    assert main(["cap", "build", str(repo), "--soul", "dev", "--out", str(out)]) == 1
    assert "error[AR171]" in capsys.readouterr().err and not out.exists()
    with open(repo / "oas-config.yaml", "a") as fh:
        fh.write("skill-overrides:\n  hello: ex.review\n")
    assert main(["cap", "build", str(repo), "--soul", "dev", "--out", str(out), "--client", "claude,codex,cursor"]) == 0
    err = capsys.readouterr().err
    assert "skill hello from ex.review" in err
    for path in (".claude/skills/hello/SKILL.md", ".agents/skills/hello/SKILL.md"):
        assert "description: ex.review" in (out / path).read_text(), path
    assert not (out / ".cursor/skills/hello").exists()  # Cursor reads Claude's copy, the same bytes (shared-copies)
    assert main(["cap", "build", str(repo), "--soul", "dev", "--out", str(out), "--client", "claude,codex,cursor",
                 "--check"]) == 0


@needs_kernel
@pytest.mark.parametrize("flags", [[], ["--no-requirements"]])
def test_bare_install_reports_missing_host_commands_as_oas_install_does(tmp_path, capsys, flags):
    repo = _deployment(tmp_path)
    capsys.readouterr()
    main(["cap", "install", "--dir", str(repo), "--json", *flags])
    ours = json.loads(capsys.readouterr().out)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    proc = subprocess.run(["node", str(OAS), "install", "--dir", str(repo), "--json", *flags], capture_output=True,
                          text=True, env=dict(os.environ, HOME=str(home)), timeout=300)
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    theirs_hosts = [r for r in (theirs.get("result") or theirs["error"]["details"])["requirements"]
                    if r["kind"] == "host-command"]
    assert ours["ok"] and ours["result"]["requirements"] == theirs_hosts
    assert [r["command"] for r in theirs_hosts] == ["no-such-tool-for-agentrc"]
