"""The source locator (agentrc.sources.dsl) and the lockfile model (agentrc.sources.lock)."""

from __future__ import annotations

import json

import pytest

from agentrc.sources import dsl
from agentrc.sources import lock as lockmod
from agentrc.sources.dsl import GIT, PATH, SourceError, parse


@pytest.mark.parametrize("text,kind,location,ref,subpath", [
    ("owner/repo", GIT, "https://github.com/owner/repo.git", None, ""),
    ("owner/repo@v1.2.0", GIT, "https://github.com/owner/repo.git", "v1.2.0", ""),
    ("owner/repo.git@feature/x#skills/core", GIT, "https://github.com/owner/repo.git", "feature/x", "skills/core"),
    ("https://example.com/team/reg.git@main", GIT, "https://example.com/team/reg.git", "main", ""),
    ("https://example.com:8443/team/reg@v2#sub/", GIT, "https://example.com:8443/team/reg", "v2", "sub"),
    ("ssh://git@example.com/team/reg.git@v3", GIT, "ssh://git@example.com/team/reg.git", "v3", ""),
    ("git@example.com:team/reg.git@v3#a/b", GIT, "git@example.com:team/reg.git", "v3", "a/b"),
    ("git@example.com:team/reg.git", GIT, "git@example.com:team/reg.git", None, ""),
    ("file:///srv/git/reg.git@" + "a" * 40, GIT, "file:///srv/git/reg.git", "a" * 40, ""),
    ("./registry", PATH, "./registry", None, ""),
    ("../shared/reg#skills", PATH, "../shared/reg", None, "skills"),
    ("/abs/reg", PATH, "/abs/reg", None, ""),
    ("~/reg", PATH, "~/reg", None, ""),
])
def test_forms(text, kind, location, ref, subpath):
    s = parse(text)
    assert (s.kind, s.location, s.ref, s.subpath) == (kind, location, ref, subpath)
    assert parse(s.label) == s  # the label parses back to the same source


def test_shorthand_keeps_its_written_form_and_the_key_ignores_the_ref():
    a, b = parse("owner/repo@v1#sub"), parse("owner/repo@v2#sub")
    assert a.name == "owner/repo#sub" and a.label == "owner/repo@v1#sub"
    assert a.key == b.key and a != b
    assert parse("owner/repo@" + "0" * 40).pinned and not a.pinned
    assert a.at("v9").label == "owner/repo@v9#sub"


@pytest.mark.parametrize("text", [
    "", "-uupload-pack=touch /tmp/x", "owner/repo@-x", "owner/repo@a..b", "owner/repo@a b",
    "owner/repo#../../etc", "owner/repo#/abs", "owner/repo#a/./b", "owner/repo#-x", "owner/repo#a\\b",
    "http://example.com/r.git", "git://example.com/r.git", "ext::sh -c touch% /tmp/pwned", "fd::17",
    "file://host/r.git", "https://example.com", "https:///r.git", "https://exa mple.com/r", "./reg@v1",
    "owner", "a/b/c", "owner/repo@v1@v2x:", "ssh://h/-oProxyCommand=x", "https://h/a/../b", "o/r\x00",
    "owner/repo@ref~1", "owner/repo@x.lock", "x" * 3000, "ssh://-oProxyCommand=x/r.git", "git@-oProxy:r.git",
    "a/.git", "owner/.git@v1", "ssh://-ouser@host/x", "ssh://-o@host/x",
])
def test_invalid_locators_are_source_errors(text):
    with pytest.raises(SourceError) as info:
        parse(text)
    assert info.value.code == "AR200"


@pytest.mark.parametrize("text", [
    "https://user:s3cr3t@example.com/r.git", "https://ghp_TOKEN@host/repo.git@v1", "https://user:PASSWORD@h/p.git@v1#.",
    "ssh://u:PASSWORD@host/r.git", "u:PASSWORD@host:org/r.git", "file://tok@/srv/r.git", "HTTPS://x:PASSWORD@h/r",
])
def test_credentials_are_refused_without_being_shown(text):
    with pytest.raises(SourceError) as info:
        parse(text)
    assert info.value.code == "AR225"
    for secret in ("s3cr3t", "TOKEN", "PASSWORD", "tok@"):
        if secret in text:
            assert secret not in str(info.value)
    assert dsl.redact(text) == dsl.credentials(text) and "***@" in dsl.redact(text)


@pytest.mark.parametrize("text", ["git@github.com:org/repo", "ssh://git@host/r.git", "owner/repo@v1",
                                  "https://host/r.git", "./reg", "file:///srv/r.git"])
def test_ssh_user_names_and_plain_locators_are_not_credentials(text):
    assert dsl.credentials(text) is None and dsl.redact(text) == text
    parse(text)


def test_check_ref_refuses_options():
    with pytest.raises(SourceError):
        dsl.check_ref("--upload-pack=x")
    assert dsl.check_ref("release/1.0") == "release/1.0"


def _lock():
    e1 = lockmod.Entry("skill", "b-skill", "owner/repo", "v1", "a" * 40, "1" * 64, False, ("bundle:core", "agent:x"))
    e2 = lockmod.Entry("bundle", "core", "owner/repo", "v1", "a" * 40, "2" * 64, True, ())
    e3 = lockmod.Entry("agent", "x", "./local", None, None, "3" * 64, False, ("bundle:core",))
    return lockmod.Lock(("claude", "copilot"), (), (lockmod.LockedFile("z.md", "4" * 64),
                                                   lockmod.LockedFile("a.md", "5" * 64, True))).with_entries([e1, e2, e3])


def test_lock_bytes_are_deterministic_and_round_trip():
    lock = _lock()
    raw = lockmod.dumps(lock)
    assert raw.endswith(b"}\n") and not raw.endswith(b"\n\n")
    data = json.loads(raw)
    assert list(data) == sorted(data)
    assert [i["name"] for i in data["items"]] == ["x", "b-skill"]  # by kind, then name
    assert data["items"][1]["required_by"] == ["agent:x", "bundle:core"]
    assert [f["path"] for f in data["files"]] == ["a.md", "z.md"]
    again, diags = lockmod.loads(raw)
    assert diags == () and again == lock and lockmod.dumps(again) == raw
    # Entries given in another order give the same bytes.
    assert lockmod.dumps(lock.with_entries(reversed(lock.entries))) == raw


@pytest.mark.parametrize("raw,needle", [
    (b"{", "not JSON"),
    (b"\xff", "not UTF-8"),
    (b'{"version": 2, "clients": ["claude"], "bundles": [], "items": []}', "version"),
    (b'{"version": 1, "clients": ["claude"], "bundles": [], "items": [], "x": 1}', "Additional properties"),
    (b'{"version": 1, "version": 1, "clients": ["claude"], "bundles": [], "items": []}', "repeated"),
    (b'{"version": 1, "clients": ["claude"], "bundles": [], "items": [{"kind": "skill", "name": "../x", '
     b'"source": "o/r", "ref": null, "commit": null, "sha256": "' + b"0" * 64 + b'", "direct": true, '
     b'"required_by": []}]}', "items/0/name"),
    (b"[" * 100000, "nested"),
])
def test_invalid_locks_are_AR153(raw, needle):
    lock, diags = lockmod.loads(raw)
    assert lock is None and diags and all(d.code == "AR203" for d in diags)
    assert any(needle in d.message for d in diags), [d.message for d in diags]


def test_a_lock_entry_locked_twice_is_AR153():
    lock = _lock()
    data = json.loads(lockmod.dumps(lock))
    data["items"].append(dict(data["items"][0], source="other/repo"))
    got, diags = lockmod.loads(json.dumps(data).encode())
    assert got is None and "locked twice" in diags[0].message


def test_one_repository_written_several_ways_is_one_source():
    keys = {parse(t).key for t in ("owner/repo#sub", "owner/repo.git@v2#sub", "https://github.com/owner/repo.git#sub",
                                   "https://GitHub.com/owner/repo/#sub", "git@github.com:owner/repo.git@v1#sub",
                                   "ssh://git@github.com:22/owner/repo#sub")}
    assert keys == {("git", "github.com/owner/repo", "sub")}
    assert parse("owner/repo").key != parse("owner/other").key
    assert parse("file:///srv/a.git").key != parse("file:///srv/a").key  # local paths are taken as written


# Random input never escapes as anything but a coded error (hypothesis).
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PIECES = st.sampled_from(["owner/repo", "https://", "ssh://", "file://", "git@", "h.example:", "@", "#", "/", "..",
                          "-", ".git", "v1", "~", "\\", " ", "\x00", ":", "//", "a", "ext::", "./", "~/", "é"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=60), st.lists(PIECES, max_size=8).map("".join)))
def test_random_locators_parse_or_raise_a_source_error(text):
    try:
        s = parse(text)
    except SourceError as exc:
        assert exc.code in ("AR200", "AR225")
        return
    assert not s.location.startswith("-") and not (s.ref or "").startswith("-")
    assert ".." not in s.subpath.split("/")
    assert parse(s.label) == s


JSONISH = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
                       lambda kids: st.one_of(st.lists(kids, max_size=3),
                                              st.dictionaries(st.sampled_from(
                                                  ["version", "clients", "bundles", "items", "files", "mcps",
                                                   "plugins", "name", "kind", "source", "ref", "commit", "sha256",
                                                   "direct", "required_by", "path", "x"]), kids, max_size=5)),
                       max_leaves=12)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(JSONISH.map(lambda v: json.dumps(v).encode()), st.binary(max_size=80)))
def test_random_locks_load_or_give_AR153(raw):
    lock, diags = lockmod.loads(raw)
    assert (lock is None) == bool(diags)
    assert all(d.code == "AR203" for d in diags)
