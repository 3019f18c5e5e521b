"""Official catalog ids in `agentrc cap install` (spec 003, "Distribution packages"): the
catalog is found as the OAS kernel finds it ($OAS_PACKAGE_CATALOG, else the one shipped), in
the kernel's format; judged by installing one catalog id with both tools into twin scopes,
from a catalog written here that points at bare git repositories made here (file://)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentrc.capops import install as capinstall
from test_cap_install import STORE, bare_repo, git, run_json, write_package
from test_cap_judge import OAS

pytestmark = pytest.mark.skipif(not OAS.exists() or not shutil.which("node"),
                                reason="the OAS kernel (../shared/judges/oas-kernel) and node are needed")


def oas(*args):
    proc = subprocess.run(["node", str(OAS), *args, "--json"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NO_COLOR="1"))
    return proc.returncode, (json.loads(proc.stdout) if proc.stdout.strip() else {"stderr": proc.stderr})


@pytest.fixture
def world(tmp_path, monkeypatch):
    """Two scopes, a package in a bare repository at dist/oas tagged v1.0.0, and a catalog
    naming it (with an alias for a capability id of an earlier release)."""
    pkg = write_package(tmp_path / "pkg", pid="acme.tools", caps={"capabilities/demo": ("acme.demo", "")})
    url = bare_repo(tmp_path, "acme", "dist/oas", pkg, tag="v1.0.0")
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"packages": {"acme.tools": {"url": url, "ref": "v1.0.0", "path": "dist/oas"},
                                                "acme.gone": {"url": url + "-missing"}},
                                   "capabilities": {"acme.legacy": "acme.tools"}}, indent=2))
    monkeypatch.setenv("OAS_PACKAGE_CATALOG", str(catalog))
    monkeypatch.setenv("HOME", str(tmp_path))
    a, k = tmp_path / "a", tmp_path / "k"
    a.mkdir()
    k.mkdir()
    return a, k, url, catalog


def test_a_catalog_id_installs_and_restores_as_the_kernel_does(world, capsys):
    a, k, url, _catalog = world
    code, ours = run_json(capsys, "cap", "install", "acme.tools", "--dir", str(a))
    kcode, theirs = oas("install", "acme.tools", "--dir", str(k))
    assert code == kcode == 0, (ours, theirs)
    # The same lock, byte for byte: source catalog:ID, the tag's commit, the entry's path.
    assert (a / "oas-lock.json").read_bytes() == (k / "oas-lock.json").read_bytes()
    row = json.loads((a / "oas-lock.json").read_text())["packages"]["acme.tools"]
    assert row["source"] == "catalog:acme.tools" and row["path"] == "dist/oas"
    assert row["commit"] == git("--git-dir", url[len("file://"):], "rev-parse", "v1.0.0")
    assert (a / STORE / "acme.demo" / "oas.json").is_file()
    # Each restores the other's lock from the catalog, pinned to the locked commit.
    for s in (a, k):
        shutil.rmtree(s / STORE / "acme.demo")
    code, ours = run_json(capsys, "cap", "install", "--dir", str(k))
    kcode, theirs = oas("install", "--dir", str(a))
    assert code == kcode == 0, (ours, theirs)
    assert (a / STORE / "acme.demo" / "oas.json").read_bytes() == (k / STORE / "acme.demo" / "oas.json").read_bytes()
    # An explicit selector is kept in the lock's source.
    b, kb = a.parent / "b", a.parent / "kb"
    b.mkdir()
    kb.mkdir()
    code, _o = run_json(capsys, "cap", "install", "acme.tools@v1.0.0", "--dir", str(b))
    kcode, _t = oas("install", "acme.tools@v1.0.0", "--dir", str(kb))
    assert code == kcode == 0
    assert (b / "oas-lock.json").read_bytes() == (kb / "oas-lock.json").read_bytes()
    assert json.loads((b / "oas-lock.json").read_text())["packages"]["acme.tools"]["source"] == \
        "catalog:acme.tools@v1.0.0"


@pytest.mark.parametrize("spec", ["acme.unknown", "acme.tools@v9.9.9", "acme.gone", "acme.tools#dist"])
def test_what_the_catalog_cannot_resolve_is_refused(world, capsys, spec):
    a, k, _url, _catalog = world
    code, ours = run_json(capsys, "cap", "install", spec, "--dir", str(a))
    kcode, theirs = oas("install", spec, "--dir", str(k))
    assert code == kcode == 1 and not ours["ok"] and not theirs["ok"], (ours, theirs)
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR160"
    assert sorted(os.listdir(a)) == sorted(os.listdir(k)) == []


def test_an_invalid_catalog_is_ar253(world, capsys):
    a, k, _url, catalog = world
    for text in ('{"packages": {"acme.tools": {"ref": "v1"}}}', "[1]", "{not json"):
        catalog.write_text(text)
        code, ours = run_json(capsys, "cap", "install", "acme.tools", "--dir", str(a))
        kcode, theirs = oas("install", "acme.tools", "--dir", str(k))
        assert code == kcode == 1, (text, theirs)
        assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR253"
        assert os.listdir(a) == []


def test_without_the_variable_the_bundled_catalog_is_the_kernels(monkeypatch):
    monkeypatch.delenv("OAS_PACKAGE_CATALOG", raising=False)
    cat = capinstall.read_catalog()
    kernel = json.loads((Path(OAS).parent.parent / "package-catalog.json").read_text())
    assert cat.path == capinstall.BUNDLED_CATALOG
    assert {pid: (e.url, e.ref, e.path) for pid, e in cat.packages} == {
        pid: (e["url"], e.get("ref", ""), e.get("path")) for pid, e in kernel["packages"].items()}
    assert dict(cat.aliases) == kernel["capabilities"]
    assert cat.resolve("oas.okf", "v9") == (kernel["packages"]["oas.okf"]["url"], "v9", "oas-package")
    assert cat.package_of("oas.review") == ("oas.dev", "alias") and cat.package_of("oas.okf") == ("oas.okf",
                                                                                                "identity")
