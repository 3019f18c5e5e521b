"""The command line's parser is made for the command named (issue 13: making all of them
was a tenth of a build with nothing to do). Proofs that it parses, fails and prints help
exactly as the whole parser, and a count of the arguments a build's command line makes."""

from __future__ import annotations

import argparse
import contextlib
import io
from typing import List, Tuple

import pytest

from agentrc.cli import main as cli

# A line of each kind for every command: valid, missing what it requires, an unknown flag,
# a bad choice, its help.
LINES = [
    ["lint", "reg"], ["lint"], ["lint", "reg", "--format", "xml"], ["lint", "reg", "--bogus"], ["lint", "-h"],
    ["fmt", "reg", "--check"], ["fmt", "--help"],
    ["build", "reg", "--out", "o"], ["build", "reg"], ["build", "reg", "--out", "o", "--jobs", "x"],
    ["build", "reg", "--out", "o", "--layout", "flat"], ["build", "a", "b", "--out", "o", "--client", "claude",
                                                         "--bundle", "x", "--bundle", "y", "--no-cache", "--check",
                                                         "--report", "r.json", "--strict", "--plugin-name", "p"],
    ["build", "-h"], ["build", "reg", "--out", "o", "extra", "--zzz"], ["build", "reg", "--ou", "o"],
    ["inspect", "p", "--json"], ["inspect", "-h"],
    ["add", "owner/repo@v1", "--item", "skill:x", "--global", "--json"], ["add"], ["add", "-h"],
    ["install", "--frozen", "--dir", "d"], ["install", "-h"], ["remove", "x", "--force"], ["remove"],
    ["update", "--dry-run"], ["update", "-h"], ["remove-mcp", "s"], ["remove-mcp", "-h"],
    ["doctor", "--format", "json"], ["doctor", "-h"], ["list", "--json"], ["list", "-h"],
    ["cap"], ["cap", "-h"], ["cap", "install", "--accept-requirement", "a", "--json"], ["cap", "list", "--dir", "d"],
    ["cap", "use", "c", "--type", "t", "--soul", "s"], ["cap", "use", "-h"], ["cap", "spawn", "soul", "--task", "t"],
    ["cap", "retire", "i", "--delete-branch"], ["cap", "migrate", "--recursive"], ["cap", "bogus"],
    ["cap", "trust", "-h"], ["cap", "build", "--out", "o"], ["cap", "pack", "d", "--out", "o"],
    ["import", "proj", "--from", "claude", "--out", "r"], ["import", "proj"], ["import", "-h"],
    [], ["-h"], ["--help"], ["--version"], ["bogus"], ["--version", "build"], ["buil", "reg", "--out", "o"],
]


def _run(parser: argparse.ArgumentParser, argv: List[str]) -> Tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = sorted(vars(parser.parse_args(argv)).items())
        except SystemExit as exc:
            result = ("exit", exc.code)
    return result, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", LINES, ids=" ".join)
def test_the_parser_of_the_command_named_parses_as_the_whole_parser(argv, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")  # the help's width: the same for both
    named = argv[0] if argv and argv[0] in cli._COMMANDS else None
    assert _run(cli._parser(named), argv) == _run(cli._parser(), argv)


@pytest.mark.parametrize("command", sorted(cli._COMMANDS))
def test_each_command_is_made_with_the_same_arguments_alone(command, monkeypatch):
    """Every argument of every command and cap verb: the same options, defaults, choices,
    and help, made alone or with all the others."""
    monkeypatch.setenv("COLUMNS", "100")

    def described(parser: argparse.ArgumentParser) -> list:
        rows = []
        for action in parser._actions:
            row = [type(action).__name__, action.option_strings, action.dest, action.nargs, action.const,
                   action.default, action.type, action.choices, action.required, action.help, action.metavar]
            if isinstance(action, argparse._SubParsersAction):
                row[7] = {name: described(sub) for name, sub in action.choices.items()}
            rows.append(row)
        return rows + [parser.format_help(), parser._defaults]

    alone = cli._parser(command)._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    whole = cli._parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(alone) == [command]
    assert described(alone[command]) == described(whole[command])


def test_a_build_command_line_makes_only_the_build_arguments(tmp_path, monkeypatch):
    """`agentrc build` makes its own 18 arguments and the top level's 3, not the 160 of every
    command (each argument also makes a help formatter and looks its messages up)."""
    made: List[str] = []
    real = argparse.ArgumentParser.add_argument

    def add_argument(self, *args, **kwargs):
        made.append(self.prog)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "add_argument", add_argument)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cli.main(["build", str(tmp_path / "missing"), "--out", str(tmp_path / "out")]) == 2
    assert "no such file or directory" in err.getvalue()
    assert made.count("agentrc build") == 18 and len(made) <= 21, made


@pytest.mark.parametrize("name, ok", [("my-plugin", True), ("Bad_Name", False), ("a--b", False), ("x" * 65, False),
                                      ("x" * 64, True)])
def test_plugin_name_is_checked_as_a_name(tmp_path, name, ok):
    """--plugin-name names the plugin's manifest and marketplace entry: lowercase letters,
    digits and single hyphens, at most 64 characters, else a usage error."""
    from agentrc.cli import build as build_cli
    from agentrc.cli.common import UsageError

    args = cli._parser("build").parse_args(["build", str(tmp_path), "--out", str(tmp_path / "o"), "--layout",
                                            "plugin", "--plugin-name", name])
    if ok:
        assert build_cli.options(args).plugin_name == name
    else:
        with pytest.raises(UsageError, match="a plugin name is lowercase letters, digits and single hyphens"):
            build_cli.options(args)


class _RawParser(argparse.ArgumentParser):
    """argparse's own parser and formatter (descriptions and epilogs as written: the examples
    keep their lines), for its subcommands too."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)


@pytest.mark.parametrize("argv", LINES, ids=" ".join)
def test_the_deferred_formatter_prints_as_argparse_does(argv, monkeypatch):
    """`_Formatter` sets itself up when it first lays text out, and the subcommands' `prog`
    is given rather than laid out: help, usage and errors are argparse's own, byte for byte."""
    monkeypatch.setenv("COLUMNS", "100")
    named = argv[0] if argv and argv[0] in cli._COMMANDS else None
    ours = _run(cli._parser(named), argv)
    real = argparse.ArgumentParser.add_subparsers

    def add_subparsers(self, **kwargs):
        kwargs.pop("prog", None)  # argparse finds it by laying the usage out
        return real(self, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "add_subparsers", add_subparsers)
    monkeypatch.setattr(cli, "_Parser", _RawParser)
    assert _run(cli._parser(named), argv) == ours


def test_a_formatter_is_set_up_only_to_lay_text_out(monkeypatch):
    """Adding arguments makes formatters that are never set up (no terminal width asked);
    printing help sets one up."""
    import shutil

    asked: List[int] = []
    real = shutil.get_terminal_size
    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a: (asked.append(1), real(*a))[1])
    parser = cli._parser("build")
    parser.parse_args(["build", "reg", "--out", "o"])
    assert asked == []
    parser.format_help()
    assert asked
