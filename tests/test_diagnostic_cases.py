"""One end-to-end CLI case per diagnostic code, as data (tests/cases/diagnostics/<CODE>-*/).

Each case holds `in/` (the sources), optionally `out/` (an existing output directory),
`cmd` (the CLI arguments; `lint in` by default) and `env` (KEY=VALUE lines set for the run). `expected.txt` is the exact stderr and exit
code. A meta-test checks that every registered code is triggered by some case.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from helpers import compare_golden

from agentrc.cli.main import main
from agentrc.codes import CODES

CASES = Path(__file__).parent / "cases" / "diagnostics"
# Codes no on-disk case can reach (they need a git repository, a missing git, a second
# source); each names the unit test that triggers it.
UNIT_TESTED = {"AR270": "test_cap_doctor_health.py::test_without_a_kernel_the_entry_needs_it_and_is_never_a_path_escape",
               "AR090": "test_build.py::test_output_conflict_is_reported",
               "AR262": "test_published.py::test_the_whole_marketplace_is_its_own_plugins_and_names_the_others",
               "AR244": "test_consumer_safety.py::test_add_with_another_client_set_is_refused_and_writes_nothing",
               "AR224": "test_atomic_write.py::test_a_report_planted_as_a_link_is_ar224_and_nothing_is_written",
               "AR241": "test_cli_arguments.py::test_ar241_comes_before_any_cli_is_looked_for",
               "AR227": "test_fetch_cache.py::test_a_file_over_the_bound_is_refused_before_checkout_and_leaves_nothing",
               "AR228": "test_fetch_cache.py::test_a_changed_entry_is_discarded_and_fetched_again",
               "AR229": "test_consent.py::test_without_consent_nothing_is_written_and_each_surface_is_named",
               "AR240": "test_consent.py::test_hidden_unicode_in_fetched_text_is_a_warning_at_its_place",
               "AR242": "test_cap_safety.py::test_a_git_dependency_with_the_packages_own_npmrc_never_runs_its_git",
               "AR243": "test_project_file.py::test_a_broken_project_file_is_every_problem_at_once_and_nothing_is_written",
               "AR226": "test_consumer_cli.py::test_cross_source_conflicts_and_local_paths_from_git_are_refused",
               "AR141": "test_output_safety.py::test_a_second_build_waits_then_fails_with_a_diagnostic",
               "AR132": "test_import_lints_clean.py::test_an_item_that_fails_lint_is_left_out_and_the_rest_lints_clean",
               "AR201": "test_sources_fetch.py::test_unknown_refs_unreachable_remotes_and_missing_subpaths",
               "AR202": "test_sources_fetch.py::test_git_missing_is_AR202",
               "AR204": "test_consumer_cli.py::test_a_source_whose_locked_content_changed_is_drift",
               "AR210": "test_consumer_plugins.py::test_a_missing_cli_is_warned_about_and_skipped",
               "AR211": "test_consumer_plugins.py::test_a_failing_plugin_install_is_not_recorded_and_fails_nothing",
               "AR212": "test_consumer_plugins.py::test_plugins_install_through_the_clients_and_are_locked",
               "AR209": "test_consumer_mcp.py::test_add_warns_about_unset_required_variables",
               "AR216": "test_consumer_mcp.py::test_a_failing_claude_cli_is_a_warning_and_the_rest_installs",
               "AR217": "test_consumer_global.py::test_global_install_writes_the_user_locations_and_the_user_lock",
               "AR218": "test_consumer_global.py::test_global_refuses_config_that_names_the_project",
               "AR222": "test_capability_refs.py::test_a_locked_reference_is_read_at_its_commit_and_checked",
               "AR206": "test_sources_closure.py::test_merge_joins_provenance_and_refuses_a_second_source",
               "AR153": "test_cap_model.py::test_duplicate_ids_and_layer_conflicts",
               "AR161": "test_cap_install.py::test_a_locked_package_never_changes_on_install",
               "AR169": "test_cap_config.py::test_equal_specificity_disagreements_are_ar169",
               "AR172": "test_cap_spawn.py::test_untrusted_hooks",
               "AR173": "test_cap_spawn.py::test_a_failed_required_hook_rolls_the_spawn_back",
               "AR174": "test_cap_spawn.py::test_refusals",
               "AR175": "test_cap_spawn.py::test_an_unidentifiable_home_fails_closed",
               "AR176": "test_cap_spawn.py::test_failed_compensation_quarantines_and_each_tool_retries_the_others",
               "AR177": "test_cap_spawn.py::test_refusals",
               "AR178": "test_cap_migrate.py::test_a_catalog_entry_keeps_the_scope_at_version_1",
               "AR223": "../pants-plugins/agentrc_pants/config_test.py::test_capability_references_build_from_the_locked_commits_only",
               "AR230": "test_cap_requirements.py::test_a_missing_plugin_fails_the_spawn_and_consent_installs_it",
               "AR231": "test_cap_requirements.py::test_an_unsafe_package_spec_is_refused_even_when_skipping",
               "AR232": "test_cap_requirements.py::test_a_consented_install_that_fails_is_a_failure",
               "AR233": "../pants-plugins/agentrc_pants/capability_test.py::test_a_changed_or_missing_capability_fails",
               "AR234": "../pants-plugins/agentrc_pants/capability_test.py::test_a_changed_or_missing_capability_fails",
               "AR250": "test_cap_spawn_modes.py::test_refusals_leave_nothing",
               "AR251": "test_cap_spawn_modes.py::test_refusals_leave_nothing",
               "AR252": "test_cap_spawn_modes.py::test_a_soul_in_two_team_repositories_is_ambiguous",
               "AR253": "test_cap_catalog.py::test_an_invalid_catalog_is_ar253",
               "AR254": "test_cap_spawn_flags.py::test_bad_flags_are_ar254_and_leave_nothing",
               "AR255": "test_cap_closure.py::test_closure_refusals_carry_the_kernels_codes",
               "AR256": "test_cap_closure.py::test_closure_refusals_carry_the_kernels_codes",
               "AR257": "test_cap_closure.py::test_closure_refusals_carry_the_kernels_codes",
               "AR258": "test_cap_spawn_flags.py::test_a_capability_agent_that_is_not_self_contained_is_ar258",
               "AR259": "test_cap_spawn_flags.py::test_a_worktree_without_its_primary_checkout_is_ar259",
               "AR260": "test_cap_soul_scaffold.py::test_soul_scaffold_hooks_run_and_own_what_they_create_as_in_the_kernel",
               "AR179": "test_cap_spawn_flags.py::test_local_soul_refusals_are_ar179"}


def case_dirs():
    return sorted(p for p in CASES.iterdir() if p.is_dir())


@pytest.mark.parametrize("case", case_dirs(), ids=lambda p: p.name)
def test_case(case: Path, tmp_path: Path, capsys, monkeypatch):
    work = tmp_path / "case"
    shutil.copytree(case, work, symlinks=True, ignore=shutil.ignore_patterns("expected.txt", "cmd", "env"))
    cmd = (case / "cmd").read_text().strip() if (case / "cmd").exists() else "lint in"
    if (case / "env").exists():  # KEY=VALUE lines, e.g. a PATH without node for AR111
        for line in (case / "env").read_text().splitlines():
            key, _, value = line.partition("=")
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(work)
    code = main(shlex.split(cmd))
    captured = capsys.readouterr()
    compare_golden(case / "expected.txt", f"$ agentrc {cmd}\n{captured.err}exit: {code}\n")
    expected_code = case.name.split("-", 1)[0]
    assert f"[{expected_code}]" in captured.err + captured.out, f"{case.name} does not trigger {expected_code}"
    # Errors fail the command; a code that only warns must say so.
    assert code != 0 or f"warning[{expected_code}]" in captured.err + captured.out
    if (case / "out").exists():
        # Nothing written on error: the output directory is exactly as it was.
        assert _tree(work / "out") == _tree(case / "out")


def _tree(root: Path):
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_every_code_has_a_case():
    covered = {p.name.split("-", 1)[0] for p in case_dirs()} | set(UNIT_TESTED)
    missing = sorted(set(CODES) - covered)
    assert not missing, f"codes without a triggering test: {missing}"
    here = Path(__file__).parent
    for code, test in UNIT_TESTED.items():
        module, name = test.split("::")
        assert f"def {name}(" in (here / module).read_text(), f"{test} (for {code}) does not exist"
