"""Canonical formatting of sources (spec 001 §3.8): frontmatter key order, body, seam.

Keys are reordered as whole line blocks, never through a YAML serialiser, so comments,
quoting, flow style and blank lines survive. A comment run directly above a key moves with
it; a preamble comment block separated from the first key by a blank line stays on top; a
key keeps the blank lines above it (see `reorder`). The result must parse to the same data
as the input, or the file is left untouched (AR100). With `style` (what `agentrc fmt`
does), a body's stylistic findings are fixed too (`body.fix_style`: AR020, AR021, AR022),
so that `fmt` then `lint` is clean; lint's own canonical-form check leaves them out, since
lint reports each of them itself, with its place.
"""

from __future__ import annotations

from agentrc.classcode import dataclass
from agentrc.model import ENTRYPOINTS, Kind
from agentrc.names import is_bundle_file
from agentrc.patterns import pattern
from agentrc.portable.body import fix_style
from agentrc.text.frontmatter import split
from agentrc.text.markdown import format_body
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

# Keys after the kind's own, before the clients' passthrough blocks (registry order).
_TAIL = ("metadata", "requires", "ignore")
_HEADS: Dict[str, Tuple[str, ...]] = {
    "rule": ("schema", "name", "description", "audience", "license", "scope"),
    "skill": ("schema", "name", "description", "audience", "license"),
    "agent": ("schema", "name", "description", "audience", "license", "mode", "model", "tools", "preload-skills"),
    "command": ("schema", "name", "description", "audience", "license", "argument-hint", "agent", "model", "tools"),
    "hook": ("schema", "name", "description", "audience", "license", "event", "tools", "matcher", "if", "script",
             "timeout", "async"),
    "context": ("schema", "name", "description", "audience", "license", "order"),
}
BUNDLE_ORDER = ("schema", "name", "description", "license", "items", "requires", "plugins", "mcps", "metadata")


def key_order(kind: str, blocks: Sequence[str]) -> Tuple[str, ...]:
    """The canonical frontmatter key order of `kind`: its own keys, the SSOT tail, then the
    passthrough blocks `blocks` (the client registry's, in its order)."""
    if kind == "bundle":
        return BUNDLE_ORDER
    return _HEADS[kind] + _TAIL + tuple(blocks)


KEY_LINE_RE = pattern(r"""^(?:"([^"]+)"|'([^']+)'|([^\s#'"\-?:][^:#]*?|-[^\s:#][^:#]*?))\s*:(?:\s|$)""")
OVERRIDE_RE = pattern(r"^(" + "|".join(k.name for k in Kind) + r")\.[^.]+\.md$")


@dataclass(frozen=True)
class Formatted:
    """One file as `fmt` would write it: its text, whether it changed, or why formatting was refused."""
    text: str
    changed: bool
    error: Optional[str] = None  # set when formatting was refused
    error_line: int = 1
    error_code: str = "AR100"


def kind_of(path: str) -> Optional[str]:
    base = path.rsplit("/", 1)[-1]
    if base in ENTRYPOINTS:
        return ENTRYPOINTS[base].value
    if is_bundle_file(base):
        return "bundle"
    if OVERRIDE_RE.match(base):
        return "override"
    return None


def formattable(path: str) -> bool:
    return kind_of(path) is not None


def format_source(path: str, text: str, blocks: Sequence[str], style: bool = False) -> Formatted:
    """`text` of the source at `path` in canonical form (§3.8), or why it cannot be; `blocks`
    are the passthrough blocks in their canonical order. `style`: the body's stylistic
    findings fixed as well (see the module docstring)."""
    fix = fix_style if style else (lambda body: body)
    kind = kind_of(path)
    text = text.replace("\r\n", "\n")
    if kind is None:
        return Formatted(text, False)
    if kind == "override":
        out = format_body(fix(text))
        return Formatted(out, out != text)
    if kind == "bundle":
        return _checked(text, reorder(text, BUNDLE_ORDER), 0)
    parts = split(text)
    if parts.yaml_text is None or not parts.closed:
        return Formatted(text, False, "no closed frontmatter block", 1)
    yaml_text = reorder(parts.yaml_text, key_order(kind, blocks))
    body = format_body(fix(parts.body))
    out = "---\n" + yaml_text + "---\n" + ("\n" + body if body else "")
    checked = _checked(parts.yaml_text, yaml_text, 1)
    if checked.error:
        return Formatted(text, False, checked.error, checked.error_line, checked.error_code)
    return Formatted(out, out != text)


def _checked(before: str, after: str, offset: int) -> Formatted:
    try:
        a = load_yaml(before, offset)
    except YamlError as exc:
        return Formatted(before, False, f"cannot format invalid YAML: {exc.message}", exc.pos[0],
                         exc.code or "AR001")
    try:
        b = load_yaml(after, offset)
    except YamlError as exc:  # pragma: no cover - reorder keeps YAML valid; guarded anyway
        return Formatted(before, False, f"reordering produced invalid YAML: {exc.message}", exc.pos[0])
    if a.duplicates:
        return Formatted(before, False, "duplicate keys: reordering would change which value wins",
                         a.duplicates[0][1][0])
    if a.data != b.data:  # pragma: no cover - reorder moves whole blocks; guarded anyway
        return Formatted(before, False, "reordering would change the data", 1)
    return Formatted(after, after != before)


def reorder(yaml_text: str, order: Tuple[str, ...]) -> str:
    """Reorder top-level key blocks of a block-style YAML mapping, keeping its blank lines.

    A block is a top-level key with its value lines and the comments directly above it.
    The comment block that opens the mapping, when a blank line ends it, is the preamble and
    stays on top. Any other comment block separated from the key below it by a blank line is
    a section comment: it moves with the key below it, blank line included (the first one,
    right after the preamble, takes a blank line above it along). Each key keeps the blank
    lines above it wherever it moves (the first key after reordering has none), so the
    blank-line grouping of an already-ordered mapping is left exactly as written; trailing
    comments stay last.
    """
    lines = yaml_text.rstrip("\n").split("\n") if yaml_text.strip() else []
    preamble: List[str] = []
    blocks: List[Tuple[str, int, List[str]]] = []  # (key, blank lines above it, its lines)
    pending: List[str] = []  # comments and blank lines waiting for the next key
    for line in lines:
        m = KEY_LINE_RE.match(line)
        if m and not line.startswith((" ", "\t")):
            key = next(g for g in m.groups() if g is not None).strip()
            if not blocks:
                # The comment block that opens the mapping, when a blank line ends it, is the
                # preamble (spec 001 §3.8); comment blocks after that blank line are sections.
                cut = _preamble_end(pending)
                preamble.extend(pending[:cut])
                pending = pending[cut:]
            gap = 0
            while gap < len(pending) and not pending[gap]:
                gap += 1
            pending = pending[gap:]
            if not blocks and "" in pending:
                gap = max(gap, 1)  # a section comment after the preamble: the preamble's blank line
            blocks.append((key, gap, pending + [line]))
            pending = []
        elif line.startswith("#") or not line.strip():
            pending.append(line if line.strip() else "")
        else:
            target = blocks[-1][2] if blocks else preamble
            target.extend(pending)
            target.append(line)
            pending = []
    if not blocks:
        return yaml_text
    rank = {k: i for i, k in enumerate(order)}
    indexed = sorted(enumerate(blocks), key=lambda ib: (rank.get(ib[1][0], len(order)), ib[0]))
    out: List[str] = []
    pre = list(preamble)
    while pre and not pre[0].strip():
        pre.pop(0)
    out.extend(pre)  # with the blank lines that end it
    for n, (_, (_, gap, block_lines)) in enumerate(indexed):
        if n:
            out.extend([""] * gap)
        out.extend(block_lines)
    while pending and not pending[-1]:
        pending.pop()
    out.extend(pending)
    return "\n".join(out) + "\n"


def _preamble_end(pending: List[str]) -> int:
    """How many of the comment and blank lines before the first key are the preamble: the
    first comment block and the blank lines after it, if any blank line follows it."""
    i = 0
    while i < len(pending) and not pending[i]:
        i += 1
    if i == len(pending):
        return i  # blank lines only: nothing to keep
    while i < len(pending) and pending[i]:
        i += 1
    if i == len(pending):
        return 0  # no blank line between the first comments and the key: they travel with it
    while i < len(pending) and not pending[i]:
        i += 1
    return i
