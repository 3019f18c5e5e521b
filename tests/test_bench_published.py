"""bench/gen_published.py makes issue 36's second corpus, shaped like published content:
byte-identical for one seed, no lint errors (only the warnings such content causes), and
the measured mix (more skills than rules or agents, half the skills with supporting files,
most bodies as an import leaves an H1 first line, most agents without a tool list)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import sys

from helpers import ROOT

from agentrc.cli.main import main


def _generator():
    sys.path.insert(0, str(ROOT / "bench"))  # it imports gen_registry's vocabulary by name
    spec = importlib.util.spec_from_file_location("gen_published", ROOT / "bench" / "gen_published.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_published", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _body(text: str) -> str:
    return text.split("\n---\n", 1)[1].lstrip("\n")


def test_the_published_corpus_is_deterministic_lints_without_errors_and_has_the_measured_mix(tmp_path):
    gen = _generator()
    files = gen.generate(str(tmp_path / "pub"), 400, seed=3)
    assert files == gen.render(gen.plan(400, 3), 3)  # deterministic
    assert files != gen.render(gen.plan(400, 4), 4)
    entry = {kind: [p for p in files if p.endswith(f"/{kind}.md")] for kind in ("RULE", "SKILL", "AGENT")}
    assert [len(entry[k]) for k in ("RULE", "SKILL", "AGENT")] == [117, 168, 115]  # 455:642:448
    skill_dirs = {p.rsplit("/", 1)[0] for p in entry["SKILL"]}
    with_files = {d for d in skill_dirs if any(p.startswith(d + "/") and not p.endswith("/SKILL.md") for p in files)}
    assert 0.4 <= len(with_files) / len(skill_dirs) <= 0.62  # measured: 50%
    bodies = {k: [_body(files[p]) for p in ps] for k, ps in entry.items()}
    h1_first = [b.startswith("## ") for b in bodies["SKILL"]]
    assert sum(h1_first) / len(h1_first) >= 0.85  # measured 95%, written as an import demotes them
    sizes = sorted(len(b.encode()) for bs in bodies.values() for b in bs)
    assert sizes[0] < 1024 and sizes[-1] > 12000  # beyond the first corpus's 1-6 KiB
    assert sum("```text\n" in b for b in bodies["SKILL"]) >= 20  # bare fences, given `text`
    tools = [p for p in entry["AGENT"] if "\ntools:\n" in files[p]]
    assert 0.2 <= len(tools) / len(entry["AGENT"]) <= 0.5  # measured: 35%
    scoped = [p for p in entry["RULE"] if "\nscope:\n  paths:" in files[p]]
    assert 0.3 <= len(scoped) / len(entry["RULE"]) <= 0.6  # measured: 44%
    flat_rules = [p for p in entry["RULE"] if p.startswith("rules/")]
    assert len(flat_rules) >= len(entry["RULE"]) // 3  # rules side by side in one directory
    bundles = [text for p, text in files.items() if p.endswith(".bundle.yaml")]
    assert len(bundles) >= 40
    servers = [m for text in bundles for m in re.findall(r"^  ([a-z-]+):\n    (?:local|remote):", text, re.M)]
    assert len(servers) == len(set(servers)) == 5
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["lint", str(tmp_path / "pub")])
    assert code == 0 and " 0 error(s)," in err.getvalue(), err.getvalue()[-2000:]
    codes = set(re.findall(r"warning\[(AR\d+)\]", err.getvalue()))
    assert codes == {"AR015"}, codes  # long skill descriptions, as published ones are


def _bench_run():
    _generator()  # bench/run.py imports both generators by name
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_translates_the_published_corpus_and_reports_files_per_item(tmp_path):
    """bench/run.py gives ruler the second corpus too (an agent without a tool list keeps
    none: every tool, as in agentrc), and says how many files and bytes each tool writes per
    item, agentrc with shared copies on and off (issue 36: "files written per item, before
    and after")."""
    import yaml

    run = _bench_run()
    assert set(run.GENERATORS) == {"registry", "published"}
    reg = tmp_path / "reg"
    _generator().generate(str(reg), 60, seed=2)
    run.to_ruler(str(reg), str(tmp_path / "ruler"))
    agents = sorted((tmp_path / "ruler" / ".ruler" / "agents").iterdir())
    assert len(agents) == 17
    metas = [yaml.safe_load(p.read_text().split("---\n")[1]) for p in agents]
    assert 0 < sum("tools" in m for m in metas) < len(metas)
    assert len(list((tmp_path / "ruler" / ".ruler" / "skills").iterdir())) == 26
    res = {"corpus": "published", "items": 1000,
           "outputs": {"agentrc": {"files": 3018, "bytes": 35_000_000}, "cp -r": {"files": 3018, "bytes": 1},
                       run.SEPARATE: {"files": 3900, "bytes": 41_000_000}, "ruler": {"files": 1803, "bytes": 18e6}}}
    lines = run.files_table(res).splitlines()
    assert lines[0] == "Files written, published corpus, 1,000 items:"
    assert "| agentrc | 3,018 | 3.02 | 35.0 | 35.0 |" in lines
    assert "| agentrc, shared-copies: false | 3,900 | 3.90 | 41.0 | 41.0 |" in lines
    assert not any(line.startswith("| cp -r") for line in lines)
