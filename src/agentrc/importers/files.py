"""The project's files as one import reads them.

What enters is the project as a SourceTree (paths below `root`) and the Diagnostics the
import reports to; what leaves is each file's content decoded the way its client reads it
(UTF-8 text, JSON with JSONC's comments, TOML, markdown with YAML frontmatter, AGENTS.md
without agentrc's block markers), looked up by its path relative to the project root. A file
that cannot be read is reported here, once, with AR131 (`unreadable`), and the caller gets
None; `lossy` reports with AR130 what the canonical shapes cannot hold. Kept apart from the
document being built (`base.Reader`) so that how a client file is decoded, and how a broken
one is reported, is decided in one place for every importer.
"""

from __future__ import annotations

import bisect
import json
import posixpath
import re

from agentrc.diagnostics import Diagnostics
from agentrc.importers.cleanup import strip_jsonc, unmanage
from agentrc.model import SourceFile, SourceTree
from agentrc.text.frontmatter import split
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

try:
    import tomllib  # type: ignore[import-not-found]  # Python >= 3.11
except ImportError:
    try:
        import tomli as tomllib  # type: ignore[import-not-found,no-redef]
    except ImportError:
        tomllib = None  # type: ignore[assignment]


class ProjectFiles:
    """A project's files for one import, by path relative to the project root, and the
    diagnostics reading them produces."""

    def __init__(self, tree: SourceTree, root: str, diags: Diagnostics):
        self.root = root.rstrip("/")
        self.diags = diags
        self.files: Dict[str, SourceFile] = {}
        self._sorted: Optional[List[str]] = None
        for f in tree.files:
            rel = f.path[len(self.root) + 1:] if self.root and f.path.startswith(self.root + "/") else f.path
            self.files[rel] = f

    def path(self, rel: str) -> str:
        f = self.files.get(rel)
        return f.path if f is not None else (posixpath.join(self.root, rel) if self.root else rel)

    def has(self, rel: str) -> bool:
        return rel in self.files

    def under(self, prefix: str, suffix: str = "", depth: Optional[int] = None) -> List[str]:
        """Files below `prefix` whose names end in `suffix` (at most `depth` levels down): the
        names from `prefix` on in the sorted list (sorted once: a sort of every file per skill
        made a 1,000-item import quadratic)."""
        if self._sorted is None:
            self._sorted = sorted(self.files)
        names = self._sorted
        out = []
        for i in range(bisect.bisect_left(names, prefix), len(names)):
            rel = names[i]
            if not rel.startswith(prefix):
                break
            if rel.endswith(suffix) and (depth is None or rel[len(prefix):].count("/") < depth):
                out.append(rel)
        return out

    def lossy(self, rel: str, message: str, line: int = 0) -> None:
        self.diags.warning(self.path(rel), (line, 1 if line else 0), "AR130", message)

    def unreadable(self, rel: str, message: str, pos: Tuple[int, int] = (0, 0), code: str = "") -> None:
        """AR131, or `code` when the reason has its own (AR009: a YAML bound)."""
        self.diags.error(self.path(rel), pos, code or "AR131", message)

    def text(self, rel: str) -> Optional[str]:
        f = self.files.get(rel)
        if f is None:
            return None
        try:
            return f.content.decode("utf-8").replace("\r\n", "\n").lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            self.unreadable(rel, f"not UTF-8 (byte {exc.start})")
            return None

    def json(self, rel: str) -> Optional[Any]:
        """JSON, with the comments and trailing commas JSONC files (VS Code, opencode) allow."""
        text = self.text(rel)
        if text is None:
            return None
        if not text.strip():
            return {}
        try:
            data = json.loads(strip_jsonc(text))
        except ValueError as exc:
            pos = (getattr(exc, "lineno", 0), getattr(exc, "colno", 0))
            self.unreadable(rel, f"invalid JSON: {getattr(exc, 'msg', exc)}", pos)
            return None
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            # A \ud800-style escape decodes to text no imported file could hold.
            self.unreadable(rel, "a string holds a lone surrogate (a \\ud800-style escape), which is not text")
            return None
        return data

    def json_object(self, rel: str) -> Optional[Dict[str, Any]]:
        data = self.json(rel)
        if data is not None and not isinstance(data, dict):
            self.unreadable(rel, "expected a JSON object at the top level")
            return None
        return data

    def toml(self, rel: str) -> Optional[Dict[str, Any]]:
        text = self.text(rel)
        if text is None:
            return None
        if tomllib is None:
            self.unreadable(rel, "reading TOML needs Python 3.11 or the tomli package")
            return None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            self.unreadable(rel, f"invalid TOML: {exc}")
            return None

    def markdown(self, rel: str, raw_keys: Sequence[str] = ()) -> Optional[Tuple[Dict[str, Any], str]]:
        """Frontmatter (empty when the file has none) and body. `raw_keys` are read as the raw
        text after `key:` when written unquoted on one line (Cursor's `globs: **/*.ts`, which
        is not YAML but what Cursor parses)."""
        text = self.text(rel)
        if text is None:
            return None
        parts = split(text)
        if parts.yaml_text is None:
            return {}, text
        if not parts.closed:
            self.unreadable(rel, "the frontmatter block opened with '---' is never closed", (1, 1))
            return None
        yaml_text = parts.yaml_text
        for key in raw_keys:
            yaml_text = re.sub(r"^(%s):[ \t]+([^\s\"'\[{|>].*?)[ \t]*$" % re.escape(key),
                               lambda m: f"{m.group(1)}: {json.dumps(m.group(2))}", yaml_text, flags=re.M)
        try:
            data = load_yaml(yaml_text, parts.yaml_line - 1).data if yaml_text.strip() else {}
        except YamlError as exc:
            self.unreadable(rel, f"invalid YAML frontmatter: {exc.message}", exc.pos, exc.code)
            return None
        if data is None:
            data = {}
        if not isinstance(data, dict):
            self.unreadable(rel, "the frontmatter is not a mapping of keys to values", (2, 1))
            return None
        return data, parts.body

    def context_file(self, rel: str) -> Optional[str]:
        """AGENTS.md-style text: agentrc's block markers and its `# Project instructions` title
        dropped, the text between them kept."""
        text = self.text(rel)
        if text is None:
            return None
        return unmanage(text)
