"""The markdown tables of a tools/corpus/run.py results file (docs/fidelity.md, "A corpus as
published")."""

from __future__ import annotations

from typing import Any, Dict, List

JUDGES = ("claude", "copilot", "opencode", "codex", "gemini")


def _errors(step: Dict[str, Any]) -> int:
    return sum(n for k, n in step.get("diagnostics", {}).items() if k.startswith("error"))


def _judged(step: Dict[str, Any]) -> str:
    cells = []
    for c in JUDGES:
        j = step.get("judge", {}).get(c)
        if not j:
            cells.append("–")
            continue
        cell = "%d/%d" % (j["discovered"], j["observable"])
        if j["n_unreported"]:
            cell += " (%d unreported)" % j["n_unreported"]
        if j["dups"]:
            cell += " %d dup%s" % (len(j["dups"]), "" if j["dups_named"] else " unnamed")
        if j["error"]:
            cell += " !"
        cells.append(cell)
    return " | ".join(cells)


def _add_row(repo: str, label: str, step: Dict[str, Any]) -> str:
    items = ", ".join("%d %s" % (n, k) for k, n in sorted(step.get("items", {}).items())) or "0"
    return "| %s | %s | %d | %s | %d | %s | %.0f |" % (
        repo, label, step["rc"], items, _errors(step), _judged(step), step["secs"])


def _import(im: Dict[str, Any]) -> str:
    return "exit %d, %s, %d errors, %.0f s" % (im.get("rc", -1), ", ".join(
        "%d %s" % (n, k) for k, n in sorted(im.get("items", {}).items())) or "nothing", _errors(im), im.get("secs", 0))


def render(results: Dict[str, Any]) -> str:
    lines: List[str] = []
    lines.append("| repository | step | exit | items in | errors | " + " | ".join(JUDGES) + " | s |")
    lines.append("|" + " --- |" * (6 + len(JUDGES)))
    for r in results["repos"]:
        repo = r["repo"]
        lines.append(_add_row(repo, "add (whole)", r["whole"]))
        for c, step in sorted((r.get("whole_per_client") or {}).items()):
            lines.append(_add_row(repo, "add (whole) --client " + c, step))
        if r.get("bundle"):
            lines.append(_add_row(repo, "add --bundle", r["bundle"]))
        if r.get("item"):
            lines.append(_add_row(repo, "add --item", r["item"]))
    lines.append("")
    lines.append("| repository | install --frozen | update | remove | import |")
    lines.append("|" + " --- |" * 5)
    for r in results["repos"]:
        lc = r.get("lifecycle", {})
        fr = lc.get("frozen")
        up = lc.get("update")
        rm = lc.get("remove")
        im = r.get("import", {})
        frozen = "exit %d, %s, %.0f s" % (fr["rc"], "same files" if fr["same_files"] else
                                          "%d files differ" % len(fr["diff"]), fr["secs"]) if fr else "–"
        update = "exit %d, %s, %.0f s" % (up["rc"], ", ".join("%s %s" % (v, k) for k, v in sorted(
            up.get("changes", {}).items())), up["secs"]) if up else "–"
        remove = "exit %d, %d files left, %d empty dirs, %.0f s" % (
            rm["rc"], len(rm["left"]), rm["empty_dirs"], rm["secs"]) if rm else "–"
        imp = _import(im)
        if r.get("import_from"):
            imp += "; %s: %s" % (" ".join(r["import_from"]["args"][-2:]), _import(r["import_from"]))
        lines.append("| %s | %s | %s | %s | %s |" % (r["repo"], frozen, update, remove, imp))
    lines.append("")
    lines.append("| repository | build for | exit | generated | not generated | " + " | ".join(JUDGES) + " | s |")
    lines.append("|" + " --- |" * (6 + len(JUDGES)))
    for r in results["repos"]:
        for c, b in sorted((r.get("builds") or {}).items()):
            lines.append("| %s | %s | %d | %d | %d | %s | %.0f |" % (
                r["repo"], c, b["rc"], b["generated"], b["not_generated"], _judged(b), b["secs"]))
    return "\n".join(lines)
