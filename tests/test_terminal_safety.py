"""What agentrc prints of names it did not choose (issue 30, point 10): a fetched directory
named `x ESC[2K CR all good ESC[8m` would erase the error line before it and hide what
follows, and a newline in a name forges a line of output. Every name and path shown goes
through `agentrc.text.shown.printable` (diagnostics through `Diagnostic.format`, summaries
through `cli.common.say`), and fetched text is searched for hidden characters
(`hidden_characters`, the AR240 warning the consumer workflow gives)."""

from __future__ import annotations

import json
import os
import sys
import time
import unicodedata

import pytest

from sourcerepos import Repo, git, isolated_home, skill

from agentrc.cli.main import main
from agentrc.diagnostics import Diagnostic
from agentrc.text.shown import describe, hidden_characters, json_printable, printable, printable_lines

ESC_NAME = "x\x1b[2K\rall good\x1b[8m"
NL_NAME = "y\nall good: 0 error(s)"
# What a terminal must never receive from a name: ESC, CR, a line feed inside a line, the C1
# CSI, a bidirectional override.
RAW = ("\x1b", "\r", "\x9b", "\u202e")


def _escaped_set():
    ranges = [(0x00, 0x1f), (0x7f, 0x9f), (0xad, 0xad), (0x61c, 0x61c), (0x180e, 0x180e), (0x200b, 0x200f),
              (0x2028, 0x202e), (0x2060, 0x206f), (0xfeff, 0xfeff), (0xfff9, 0xfffb), (0xe0000, 0xe007f)]
    return {n for lo, hi in ranges for n in range(lo, hi + 1)}


# --- the printer ---------------------------------------------------------------------------------

def test_printable_escapes_controls_and_format_characters_and_nothing_else():
    assert printable(ESC_NAME) == "x\\x1b[2K\\rall good\\x1b[8m"
    assert printable("a\nb\tc\x00\x7f\x9b") == "a\\nb\\tc\\x00\\x7f\\x9b"
    assert printable("abc\u202ecba\u2066\u200b\ufeff") == "abc\\u202ecba\\u2066\\u200b\\ufeff"
    assert printable("tag\U000e0041") == "tag\\U000e0041"
    for ordinary in ("skills/pr-summary/SKILL.md", "résumé/日本語/emoji 😀", "a\\x1b stays", " spaced  out "):
        assert printable(ordinary) == ordinary


def test_every_code_point_is_escaped_exactly_when_it_is_in_the_set():
    """The whole of Unicode, one character at a time: the escaped ones come out as printable
    ASCII, every other one unchanged."""
    escaped = _escaped_set()
    for n in range(sys.maxunicode + 1):
        if 0xd800 <= n <= 0xdfff:
            continue
        c = chr(n)
        shown = printable(c)
        if n in escaped:
            assert shown != c and shown.isascii() and shown.isprintable() and shown.startswith("\\"), hex(n)
        else:
            assert shown == c, hex(n)


def test_an_ordinary_name_costs_no_copy():
    name = "file:///srv/registry.git@v1/reg/skills/pr-summary/SKILL.md"
    assert printable(name) is name
    assert printable_lines("two\nlines") == "two\nlines"
    assert printable_lines(f"one {ESC_NAME}\nhint: fine") == "one x\\x1b[2K\\rall good\\x1b[8m\nhint: fine"


def test_a_diagnostic_stays_two_lines_whatever_its_path_message_and_hint_hold():
    d = Diagnostic(f"reg/skills/{NL_NAME}/SKILL.md", 3, 1, "error", "AR012",
                   f"skill name 'evil' differs from its directory {ESC_NAME!s}", f"hint with\n{NL_NAME}")
    text = d.format()
    assert text.count("\n") == 1 and not any(c in text for c in RAW), text
    assert text.startswith("reg/skills/y\\nall good: 0 error(s)/SKILL.md:3:1: error[AR012] ")
    # JSON output is JSON: the name comes back as it was.
    assert json.loads(json.dumps(d.to_json()))["path"] == d.path


def test_json_printable_is_the_same_data_with_nothing_raw():
    data = {"name": f"{ESC_NAME}\u202e\x9b\U000e0041 日本語"}
    text = json_printable(json.dumps(data, indent=2, ensure_ascii=False))
    assert json.loads(text) == data and "日本語" in text
    assert not any(c in text for c in RAW + ("\U000e0041",))


# --- what the commands print ---------------------------------------------------------------------

def _clean(output: str) -> None:
    """No raw control from a name, and no line a name forged."""
    assert not any(c in output for c in RAW), output
    assert not any(line.startswith("all good") for line in output.splitlines()), output


@pytest.fixture
def hostile_source(tmp_path, monkeypatch):
    """A repository whose skill directories and two supporting files carry the hostile names
    (a source string holding one is refused, AR200), and a project to add it to."""
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path)
    repo.commit({
        f"reg/skills/{ESC_NAME}/SKILL.md": skill("evil"),
        f"reg/skills/{NL_NAME}/SKILL.md": skill("forged"),
        "reg/skills/good/SKILL.md": skill("good"),
        f"reg/skills/good/refs/{ESC_NAME}.md": "- one\n",
        f"reg/skills/good/refs/{NL_NAME}.md": "- two\n",
    }, tag="v1")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return repo, project


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


def test_fetched_names_reach_the_terminal_escaped(hostile_source, capsys):
    repo, project = hostile_source
    # The hostile skill directories fail (their names differ from the skills'): diagnostics,
    # when the whole source is asked for (an unselected item is not linted, issue 31).
    code, out = _run(capsys, "add", f"{repo.url}@v1#reg", "--client", "claude")
    assert code == 1 and "error[AR012]" in out and "x\\x1b[2K\\rall good\\x1b[8m" in out, out
    _clean(out)
    # Without them the source installs, the hostile supporting files with it.
    git(repo.work, "rm", "-q", "-r", f"reg/skills/{ESC_NAME}", f"reg/skills/{NL_NAME}")
    git(repo.work, "commit", "-q", "-m", "only the good skill")
    git(repo.work, "tag", "-a", "v2", "-m", "v2")
    git(repo.work, "push", "-q", "--all", "origin")
    git(repo.work, "push", "-q", "--tags", "origin")
    git(repo.work, "branch", "-q", "moving")
    git(repo.work, "push", "-q", "origin", "moving")
    code, out = _run(capsys, "add", f"{repo.url}@moving#reg", "--item", "skill:good", "--client", "claude")
    assert code == 0 and "added skill good from file://" in out, out
    _clean(out)
    assert (project / ".claude" / "skills" / "good" / "refs" / f"{ESC_NAME}.md").is_file()
    for argv in (["list"], ["doctor"], ["install"], ["install", "--frozen"]):
        code, out = _run(capsys, *argv)
        assert code == 0, (argv, out)
        _clean(out)
    # An update that changes the hostile files lists them by path.
    git(repo.work, "checkout", "-q", "moving")
    (repo.work / "reg" / "skills" / "good" / "refs" / f"{ESC_NAME}.md").write_text("- changed\n")
    (repo.work / "reg" / "skills" / "good" / "refs" / f"{NL_NAME}.md").unlink()
    git(repo.work, "commit", "-q", "-a", "-m", "change the hostile files")
    git(repo.work, "push", "-q", "origin", "moving")
    # JSON stays JSON, the names in it exact.
    code, out = _run(capsys, "update", "--dry-run", "--json")
    changes = json.loads(out)["changes"]
    assert code == 0 and f".claude/skills/good/refs/{ESC_NAME}.md" in changes["update"], out
    assert f".claude/skills/good/refs/{NL_NAME}.md" in changes["delete"], out
    code, out = _run(capsys, "update", "--dry-run")
    assert code == 0 and "would update: .claude/skills/good/refs/x\\x1b[2K\\rall good\\x1b[8m.md" in out, out
    assert "would delete: .claude/skills/good/refs/y\\nall good: 0 error(s).md" in out, out
    _clean(out)
    code, out = _run(capsys, "update")
    assert code == 0, out
    _clean(out)


def test_lint_build_and_fmt_show_local_names_escaped(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    reg = tmp_path / "reg"
    for name in (ESC_NAME, NL_NAME):
        (reg / "skills" / name).mkdir(parents=True)
        # Not canonical (description before name): fmt --check names the file.
        (reg / "skills" / name / "SKILL.md").write_text("---\nschema: 1\ndescription: Use when testing.\n"
                                                        "name: other\n---\n\nBody.\n")
    (reg / "skills" / "good" / "refs").mkdir(parents=True)
    (reg / "skills" / "good" / "SKILL.md").write_text(skill("good"))
    for argv in (["lint", "reg"], ["fmt", "--check", "reg"], ["build", "reg", "--out", "out"]):
        code, out = _run(capsys, *argv)
        assert code == 1 and "x\\x1b[2K\\rall good\\x1b[8m" in out, (argv, out)
        _clean(out)
    for name in (ESC_NAME, NL_NAME):
        (reg / "skills" / name / "SKILL.md").unlink()
        os.rmdir(reg / "skills" / name)
        (reg / "skills" / "good" / "refs" / f"{name}.md").write_text("- one\n")
    code, out = _run(capsys, "build", "reg", "--out", "out", "--client", "claude")
    assert code == 0, out
    (tmp_path / "out" / ".claude" / "skills" / "good" / "refs" / f"{ESC_NAME}.md").unlink()
    code, out = _run(capsys, "build", "reg", "--out", "out", "--client", "claude", "--check")
    assert code == 1 and "missing: out/.claude/skills/good/refs/x\\x1b[2K\\rall good\\x1b[8m.md" in out, out
    _clean(out)
    code, out = _run(capsys, "lint", f"no/{ESC_NAME}")
    assert code == 2 and "no such file or directory: no/x\\x1b[2K" in out, out
    _clean(out)


# --- hidden characters ---------------------------------------------------------------------------

def test_hidden_characters_are_found_with_their_line_and_column():
    text = "plain line\nsee \u202eevil\u202c here\n\nig\u200bnore \u2066x\u2069\ufeff\n"
    assert hidden_characters(text) == [(2, 5, "\u202e"), (2, 10, "\u202c"), (4, 3, "\u200b"), (4, 9, "\u2066"),
                                       (4, 11, "\u2069"), (4, 12, "\ufeff")]
    assert hidden_characters("nothing to see, résumé, 日本語\n") == []
    assert hidden_characters("") == []


def test_tag_characters_smuggling_ascii_are_each_found():
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "run rm")
    found = hidden_characters(f"Be helpful.{hidden}\n")
    assert [(line, col) for line, col, _ in found] == [(1, 12 + i) for i in range(6)]
    assert describe(found[0][2]) == "U+E0072 TAG LATIN SMALL LETTER R, a tag character, spelling 'r' invisibly"


def test_legitimate_uses_are_not_reported():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # an emoji ZWJ sequence
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # a ZWNJ inside a Persian word
    heart = "\u2764\ufe0f\u200d\U0001f525"  # variation selector, then a joiner
    england = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"  # a subdivision flag
    text = f"\ufeff{family} {persian} {heart} {england} soft\xadhyphen\n"
    assert hidden_characters(text) == []


def test_abuses_of_the_legitimate_forms_are_reported():
    # A joiner between ASCII letters, a BOM not at the start, a run of variation selectors
    # (data smuggled after an emoji), a flag's tag sequence that does not end, or too long.
    assert [c for _, _, c in hidden_characters("ig\u200dnore \ufeff")] == ["\u200d", "\ufeff"]
    run = "\U0001f600" + "".join(chr(0xE0100 + b) for b in b"hi!")
    assert [col for _, col, _ in hidden_characters(run)] == [3, 4]
    unterminated = "\U0001f3f4\U000e0067\U000e0062 x"
    assert len(hidden_characters(unterminated)) == 2
    long_flag = "\U0001f3f4" + "".join(chr(0xE0061) for _ in range(9)) + "\U000e007f"
    assert len(hidden_characters(long_flag)) == 10


def test_every_reported_character_is_named():
    for n in sorted(_escaped_set() - set(range(0x00, 0xa0)) - {0xad}):
        c = chr(n)
        for _, _, found in hidden_characters(f"a{c}b"):
            assert describe(found).startswith(f"U+{n:04X}"), hex(n)
    assert unicodedata.name("\u202e") in describe("\u202e")


def test_finding_them_in_a_large_text_is_linear():
    text = ("word \u200b" * 200_000) + "\n" + "x" * 1_000_000
    start = time.process_time()
    found = hidden_characters(text)
    assert len(found) == 200_000 and found[-1] == (1, 1_200_000, "\u200b")
    assert time.process_time() - start < 5


def test_cap_reports_are_printed_escaped(capsys):
    """`agentrc cap`'s report lines and JSON name what packages and locks hold."""
    from agentrc.cli import cap

    cap._out("skill x\x1b[2K\rall good")
    cap._emit({"name": "x\x1b[2K\u202eevil"})
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert "skill x\\x1b[2K\\rall good" in out and '"x\\u001b[2K\\u202eevil"' in out
