"""Capability packages (spec 003): manifests, lock and sources into the model, and the JSON
Schemas agentrc validates them with, judged against the OAS kernel's own schema files."""

from __future__ import annotations

import copy
import json

import pytest

from agentrc import schemas
from agentrc.capabilities import lock as locks
from agentrc.capabilities import source as sources
from agentrc.capabilities.manifest import compatible, parse_capability, parse_package
from agentrc.capabilities.model import Capability, Lock, LockedCapability, LockedPackage
from agentrc.capabilities.rules import duplicate_ids, layer_conflicts
from agentrc.diagnostics import Diagnostics
from helpers import ROOT

KERNEL = (ROOT.parent / "shared" / "judges" / "oas-kernel").resolve()  # as the kernel names its own files
SHA = "sha256-" + "a" * 64
COMMIT = "0123456789abcdef0123456789abcdef01234567"

CAP = {"capability": "example.team-chat", "command": "team-chat", "version": "1.2.3",
       "compatibility": {"oas": ">=0.6.2"}, "description": "Messaging.", "layer": "messaging",
       "requires": [{"command": "team-chat", "why": "send"},
                    {"runtime": "pi", "package": "npm:team-chat-pi", "why": "push"},
                    {"runtime": "claude", "package": "p@m", "marketplace": "o/r", "why": "push", "install": "u"}],
       "skills": ["skills"], "inject": "injects/team-chat.md", "commands": {"auth": "bin/t.mjs auth"},
       "hooks": {"spawn": {"command": "bin/h.mjs spawn", "required": True}, "retire": "bin/h.mjs retire",
                 "soul-scaffold": {"command": "bin/h.mjs s", "required": False}},
       "agents": ["agents/reviewer"]}
PKG = {"package": "example.engineering", "version": "3.0.0", "description": "Shared.",
       "compatibility": {"oas": ">=0.20.0"}, "capabilities": ["capabilities/a", "capabilities/b"],
       "configTemplates": {"default": {"path": "config-templates/default/oas-config.yaml", "default": True}},
       "dependencies": ["oas.okf@v1.4.0"]}
LOCK = {"lockfileVersion": 2,
        "packages": {"p": {"source": "git:https://example.invalid/e.git@v3.0.0", "path": "oas-package",
                           "version": "3.0.0", "commit": COMMIT, "integrity": SHA, "dependencies": []}},
        "capabilities": {"c.x": {"version": "2.1.0", "package": "p", "path": "capabilities/x", "integrity": SHA,
                                 "trusted": False}}}


def _with(doc, path, value):
    """A copy of `doc` with the key path set to `value` (`_DEL` removes it)."""
    out = copy.deepcopy(doc)
    target = out
    for key in path[:-1]:
        target = target[key]
    if value is _DEL:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return out


_DEL = object()

CAP_CASES = [CAP, {"capability": "a.b", "version": "1", "description": "d"}] + [_with(CAP, p, v) for p, v in [
    (("capability",), "nonamespace"), (("capability",), "@scope/name"), (("capability",), "Upper.case"),
    (("capability",), "a/b/c"), (("command",), "Bad_cmd"), (("version",), ""), (("description",), _DEL),
    (("layer",), "storage"), (("skills",), ["s", "s"]), (("skills",), "skills"), (("extra",), 1),
    (("requires", 0, "why"), _DEL), (("requires", 1, "runtime"), "codex"), (("requires", 0, "marketplace"), "x"),
    (("commands", "Bad"), "x"), (("commands", "ok"), ""), (("hooks", "install"), "x"),
    (("hooks", "retire"), {"command": "x", "required": True}),
    (("hooks", "retire"), {"command": "x", "required": False}),
    (("hooks", "spawn"), {"required": True}), (("hooks", "spawn"), {"command": "x", "extra": 1}),
    (("compatibility",), {}), (("compatibility", "x"), "1"), (("agents",), [1]), (("inject",), 3)]]
PKG_CASES = [PKG] + [_with(PKG, p, v) for p, v in [
    (("package",), "Bad"), (("package",), "a/b"), (("compatibility", "oas"), "~1.0.0"),
    (("compatibility", "oas"), "^1.2.3"), (("compatibility", "oas"), "1.2"), (("compatibility",), _DEL),
    (("capabilities",), []), (("capabilities",), ["/abs"]), (("capabilities",), ["a/../b"]),
    (("capabilities",), ["a", "a"]), (("capabilities",), ["."]), (("configTemplates", "default", "path"), "x.yaml"),
    (("configTemplates", "default", "path"), "config-templates/../x"), (("configTemplates", "Bad"), {"path": "x"}),
    (("configTemplates", "default", "extra"), 1), (("configs",), {"a": {"path": "any/where.yaml"}}),
    (("configs",), {"a": {"path": "../x"}}), (("dependencies",), ["a", "a"]), (("dependencies",), [""]),
    (("extra",), True), (("description",), "")]]
LOCK_CASES = [LOCK, {"lockfileVersion": 1, "capabilities": {"x": {"source": "s", "version": "1", "integrity": SHA,
                                                                 "extra": 1}}}] + [_with(LOCK, p, v) for p, v in [
    (("packages", "p", "source"), "path:/abs/dir"), (("packages", "p", "source"), "path:rel"),
    (("packages", "p", "source"), "catalog:oas.okf@v1"), (("packages", "p", "source"), "catalog:../evil"),
    (("packages", "p", "source"), "git:https://x/y.git@v1#sub"), (("packages", "p", "source"), "ftp://x"),
    (("packages", "p", "path"), "./sub"), (("packages", "p", "path"), "a/b"), (("packages", "p", "path"), "a/"),
    (("packages", "p", "path"), "~x"), (("packages", "p", "commit"), "local"), (("packages", "p", "commit"), "abc"),
    (("packages", "p", "integrity"), "sha256-x"), (("packages", "p", "dependencies"), _DEL),
    (("packages", "p", "capabilities"), []), (("packages", "Bad"), {}), (("capabilities", "c.x", "trusted"), "no"),
    (("capabilities", "c.x", "extra"), 1), (("capabilities",), _DEL), (("lockfileVersion",), 3),
    (("capabilities", "c.x", "path"), "."), (("packages", "p", "dependencies"), ["q", "q"])]]


def _kernel_validator(name):
    from jsonschema import Draft202012Validator

    path = KERNEL / "docs" / name
    if not path.exists():
        pytest.skip("the OAS kernel is not in ../shared/judges/oas-kernel")
    return Draft202012Validator(json.loads(path.read_text()))


@pytest.mark.parametrize("ours,theirs,cases", [
    ("oas-capability", "capability-manifest.schema.json", CAP_CASES),
    ("oas-package", "oas-package.schema.json", PKG_CASES),
    ("oas-lock", "oas-lock.schema.json", LOCK_CASES)])
def test_schemas_accept_what_the_kernel_schemas_accept(ours, theirs, cases):
    kernel = _kernel_validator(theirs)
    verdicts = []
    for doc in cases:
        theirs_ok = kernel.is_valid(doc)
        ours_ok = not list(schemas.errors(ours, doc))
        assert ours_ok == theirs_ok, f"{ours}: agentrc {'accepts' if ours_ok else 'rejects'} what the kernel " \
                                     f"{'accepts' if theirs_ok else 'rejects'}: {json.dumps(doc)}"
        verdicts.append(ours_ok)
    assert any(verdicts) and not all(verdicts)  # the cases tell the two apart


def _cap(data, exported=False):
    d = Diagnostics()
    raw = data if isinstance(data, bytes) else json.dumps(data, indent=2).encode()
    return parse_capability("oas.json", raw, d, exported), [x.code for x in d.items], d


def test_a_capability_manifest_becomes_the_model():
    cap, codes, _ = _cap(CAP)
    assert codes == [] and isinstance(cap, Capability)
    assert cap.id == "example.team-chat" and cap.layer == "messaging" and cap.compatibility == ">=0.6.2"
    assert [h.event for h in cap.hooks] == ["spawn", "retire", "soul-scaffold"]
    assert [h.required for h in cap.hooks] == [True, False, False]
    assert [r.name for r in cap.requires] == ["team-chat", "pi:npm:team-chat-pi", "claude:p@m"]
    assert cap.commands == (("auth", "bin/t.mjs auth"),) and cap.executable
    declared = cap.declared_paths()
    assert ("script of the spawn hook", "bin/h.mjs") in declared and ("injection", "injects/team-chat.md") in declared
    hash(cap)  # frozen, hashable


@pytest.mark.parametrize("change,code", [
    ((("hooks", "install"), "bin/x"), "AR154"),
    ((("hooks", "retire"), {"command": "bin/x", "required": True}), "AR155"),
    ((("hooks", "soul-scaffold"), {"command": "bin/x", "required": True}), "AR155"),
    ((("skills",), ["../../skills/x"]), "AR156"),
    ((("inject",), "/etc/passwd"), "AR156"),
    ((("commands", "auth"), "../bin/t.mjs auth"), "AR156"),
    ((("hooks", "spawn"), "../../h.sh spawn"), "AR156"),
    ((("agents",), ["agents/../../x"]), "AR156"),
    ((("layer",), "storage"), "AR150"),
    ((("description",), _DEL), "AR150"),
    ((("skills",), 5), "AR150"),  # found by the fuzz harness: a number where a list belongs
    ((("hooks",), "spawn"), "AR150"),
])
def test_each_rule_of_a_capability_manifest_has_its_code(change, code):
    cap, codes, d = _cap(_with(CAP, *change))
    assert cap is None and codes == [code], [x.format() for x in d.items]


def test_diagnostics_point_at_the_key():
    doc = json.dumps(_with(CAP, ("hooks", "install"), "x"), indent=2)
    _, _, d = _cap(doc.encode())
    line = next(i for i, text in enumerate(doc.splitlines(), 1) if '"install": "x"' in text)
    assert d.items[0].line == line and d.items[0].col > 1


@pytest.mark.parametrize("raw,code", [
    (b"{", "AR150"), (b'{"capability": "a.b", "capability": "c.d"}', "AR004"), (b"\xff\xfe", "AR008"),
    (b"[]", "AR150"), (b'{"version": NaN}', "AR150"), (b"\xef\xbb\xbf{}", "AR150"), (b"[" * 100000, "AR150")])
def test_bad_json_is_a_diagnostic_not_a_traceback(raw, code):
    cap, codes, _ = _cap(raw)
    assert cap is None and codes[:1] == [code]


def test_an_exported_id_must_name_a_directory():
    assert _cap(_with(CAP, ("capability",), "@scope/name"))[1] == []
    assert _cap(_with(CAP, ("capability",), "@scope/name"), exported=True)[1] == ["AR150"]


def _pkg(data):
    d = Diagnostics()
    return parse_package("oas-package.json", json.dumps(data).encode(), d), [x.code for x in d.items]


def test_a_package_manifest_becomes_the_model():
    pkg, codes = _pkg(PKG)
    assert codes == [] and pkg.id == "example.engineering" and pkg.capabilities == ("capabilities/a", "capabilities/b")
    assert [(t.name, t.default) for t in pkg.templates] == [("default", True)] and not pkg.legacy_templates
    assert pkg.dependencies == ("oas.okf@v1.4.0",)


@pytest.mark.parametrize("change,code", [
    ((("configs",), {"x": {"path": "y"}}), "AR151"),  # both spellings
    ((("capabilities",), [".", "capabilities/a"]), "AR151"),
    ((("capabilities",), ["."]), "AR151"),  # '.' with configTemplates
    ((("configTemplates", "second"), {"path": "config-templates/b/oas-config.yaml", "default": True}), "AR151"),
    ((("capabilities",), ["a/../../b"]), "AR151"),  # the schema refuses '..' before AR156 could
    ((("compatibility", "oas"), "latest"), "AR151"),
])
def test_each_rule_of_a_package_manifest_has_its_code(change, code):
    pkg, codes = _pkg(_with(PKG, *change))
    assert pkg is None and set(codes) == {code}


def test_legacy_packages_stay_readable():
    legacy = _with(_with(PKG, ("configTemplates",), _DEL), ("capabilities",), ["."])
    pkg, codes = _pkg(_with(legacy, ("configs",), {"a": {"path": "anywhere/oas-config.yaml"}}))
    assert codes == [] and pkg.legacy_templates and pkg.capabilities == (".",)


def test_compatibility_floors():
    assert compatible(">=0.6.2", "0.20.0") and not compatible(">=0.21.0", "0.20.0")
    assert compatible("^0.20.0", "0.20.0") and not compatible("^1.0.0", "0.20.0") and compatible("0.20.0", "0.20.0")
    assert not compatible("0.19.9", "0.20.0") and compatible("", "0.20.0")


def test_duplicate_ids_and_layer_conflicts():
    a = Capability("x.a", "1", "d", layer="tasks")
    b = Capability("x.b", "1", "d", layer="tasks")
    c = Capability("x.c", "1", "d")
    d = Diagnostics()
    duplicate_ids([("pkg1", a), ("pkg2", a), ("pkg2", c)], d)
    assert [(x.code, x.path) for x in d.items] == [("AR152", "pkg2")]
    d = Diagnostics()
    layer_conflicts("dev", [("p", a), ("p", c), ("q", b)], d)
    assert [x.code for x in d.items] == ["AR153"] and "tasks" in d.items[0].message
    d = Diagnostics()
    layer_conflicts("dev", [("p", a), ("owned", a), ("p", c)], d)  # the same capability twice is no conflict
    assert not d.items


def _lock(doc):
    d = Diagnostics()
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return locks.parse("oas-lock.json", raw, d), d


def test_a_lock_reads_into_the_model_and_writes_the_kernels_bytes():
    lock, d = _lock(LOCK)
    assert not d.items and lock.package("p").commit == COMMIT and lock.capability("c.x").package == "p"
    assert lock.exports("p") == ("c.x",)
    assert locks.dump(lock).decode() == json.dumps(LOCK, indent=2) + "\n"
    assert _lock(locks.dump(lock))[0] == lock


@pytest.mark.parametrize("change", [
    (("capabilities", "c.x", "package"), "q"),
    (("packages", "p", "dependencies"), ["p"]),
    (("packages", "p", "dependencies"), ["q"]),
    (("packages", "p", "source"), "path:/abs"),  # path: needs commit "local" and path "."
    (("packages", "p", "path"), "a//b"),
    (("capabilities", "c.x", "trusted"), 1),
    (("packages", "p", "capabilities"), []),  # the superseded draft of version 2
    (("capabilities",), _DEL),
])
def test_an_invalid_lock_is_refused_whole(change):
    lock, d = _lock(_with(LOCK, *change))
    assert lock is None and {x.code for x in d.items} == {"AR159"}


def test_a_dependency_cycle_in_a_lock_is_refused():
    doc = _with(LOCK, ("packages", "q"), dict(LOCK["packages"]["p"], dependencies=["p"]))
    doc = _with(doc, ("packages", "p", "dependencies"), ["q"])
    lock, d = _lock(doc)
    assert lock is None and "cycle" in d.items[0].message


def test_version_1_is_read_not_written_and_the_empty_draft_reads_as_empty():
    lock, _ = _lock({"lockfileVersion": 1, "capabilities": {"oas.okf": {"source": "marketplace:oas.okf@1",
                                                                          "version": "1", "integrity": SHA}}})
    assert lock.version == 1 and lock.legacy == ("oas.okf",)
    assert _lock({"lockfileVersion": 2, "packages": {}})[0] == Lock()


def test_lock_maps_keep_javascripts_key_order():
    row = LockedPackage("path:/x", ".", "1", "local", SHA)
    cap = LockedCapability("1", "10", ".", SHA)
    lock = Lock(2, (("b", row), ("10", row), ("9", row), ("a", row)), (("x.y", cap),))
    assert list(json.loads(locks.dump(lock))["packages"]) == ["9", "10", "a", "b"]


@pytest.mark.parametrize("spec,kind,locked,root", [
    ("./pkg", "path", "path:{cwd}/pkg", "."),
    ("path:/abs/./pkg/", "path", "path:/abs/pkg", "."),
    ("file:///srv/repo.git", "git", "git:file:///srv/repo.git@" + COMMIT, "oas-package"),
    ("file:///srv/repo.git@v1#.", "git", "git:file:///srv/repo.git@v1", "."),
    ("https://h/o/r.git@v2#dist//oas/", "git", "git:https://h/o/r.git@v2", "dist/oas"),
    ("git:github.com/org/repo@v1.0.0", "git", "git:https://github.com/org/repo.git@v1.0.0", "oas-package"),
    ("git@host:org/repo.git@main#sub", "git", "git:git@host:org/repo.git@main", "sub"),
    ("oas.okf@v1.4.0", "catalog", "catalog:oas.okf@v1.4.0", "oas-package"),
])
def test_sources(spec, kind, locked, root, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    src = sources.parse(spec)
    assert (src.kind, src.locked(COMMIT), src.root) == (kind, locked.format(cwd=tmp_path), root)


@pytest.mark.parametrize("spec", ["", "git:onlyhost", "a#b#c", "./dir#sub", "oas.okf#x", "Not A Source",
                                  "file:///r.git#../up", "file:///r.git#/abs", "file:///r.git#~x"])
def test_bad_sources(spec):
    with pytest.raises(sources.SourceError):
        sources.parse(spec)


def test_locked_sources_are_parsed_strictly():
    assert sources.parse_locked("git:file:///r.git@" + COMMIT).url == "file:///r.git"
    for bad in ("catalog:../evil", "path:relative", "git:ftp://x@v", "git:https://x/y@v#p", "other:x"):
        with pytest.raises(sources.SourceError):
            sources.parse_locked(bad)

