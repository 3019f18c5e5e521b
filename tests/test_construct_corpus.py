"""False positives of client-construct detection (issue 10), measured on authored bodies.

Each entry is a body of one item kind and the constructs a client really interprets in it.
Lookalikes (decorators, prices, spreadsheet references, emails, handles, npm scopes,
product names, code) must not be reported; docs/fidelity.md states the measured rates,
and this test keeps them.
"""

from __future__ import annotations

from agentrc.portable.body import find_constructs
from agentrc.text.markdown import prose, scan

# (kind, body, expected construct tokens)
CORPUS = [
    # --- lookalikes: nothing any client interprets -------------------------------------
    ("rule", "Register handlers with @router.post and @router.get on the API router.", []),
    ("rule", "Pages are built with @Next.js and served by @Node.js behind nginx.", []),
    ("skill", "Upload the extract with PUT to @my_stage, then COPY INTO the table.", []),
    ("rule", "Stage files land in @my_stage/2024/orders.csv before loading.", []),
    ("skill", "The Pro plan costs $5.00 per seat and the Team plan $12.50.", []),
    ("command", "Quote $1,200 for the annual plan and $5.00 for the monthly one.", []),
    ("skill", "Sum the range with =SUM($B$2:$B$6) and freeze the header with $A$1.", []),
    ("command", "Lock the reference as $C$9 so copying the formula keeps it.", []),
    ("rule", "Mail security@example.com or ops@example.co.uk for access.", []),
    ("agent", "Ping @alice or @platform-team in the review thread.", []),
    ("rule", "Install @babel/core, @types/node and @angular/cli@17.0.1 as dev dependencies.", []),
    ("skill", "Use @pytest.fixture for setup and @functools.wraps in decorators.", []),
    ("agent", "Mark overrides with @Override and inject with @Autowired.", []),
    ("rule", "Follow us at @acme.io and @team.dev for release notes.", []),
    ("rule", "Wrap the view in `@login_required` and `@app.route('/x')`.", []),
    ("skill", "```python\n@app.get('/items')\ndef items(): ...\n```", []),
    ("command", "```bash\necho \"$1 and $ARGUMENTS[0]\"\n```", []),
    ("rule", "CSS uses @media (max-width: 600px) and @import url(theme.css).", []),
    ("agent", "Docker images are pinned as node@sha256:abc123 in the Dockerfile.", []),
    ("skill", "Expose the price as `$5` in the template and never hard-code it.", []),
    ("rule", "Shell variables such as $HOME, $PATH and $1 mean nothing in a rule.", []),
    ("agent", "Read $ARGUMENTS from the task description the caller gives you.", []),
    ("rule", "The reviewer skill reads @docs/review.md itself; rules do not import it.",
     ["@docs/review.md"]),
    ("skill", "Read @docs/checklist.md before you start.", []),
    ("agent", "Compare your findings with @SECURITY.md.", []),
    ("context", "The coupon SAVE10 takes $10 off; prices like $9.99 include tax.", []),
    ("context", "Deploy with `@vercel/cli` and tag @channel in Slack.", []),
    ("rule", "Version 2.0 of @socket.io is in use.", []),
    ("command", "Refund up to $50.00 without approval; above that, ask.", []),
    ("skill", "The stage name @sales_stage.raw holds raw exports.", []),
    ("rule", "Tweet from @company.official with the #launch hashtag.", []),
    ("agent", "Emails like first.last@corp.example.md are fake test data.", []),
    ("command", "Reference cells $D$4 and $E$10 in the budget sheet.", []),
    ("rule", "Angular components declare @Component({selector: 'app-root'}).", []),
    ("rule", "Status: !`git status` only runs in commands and skills.", []),
    ("skill", "Negate with `!` and test with `!flag` in shell scripts.", []),
    ("agent", "Wow!`npm test` passes, said the log.", []),
    ("skill", "Kotlin data classes use @Serializable and @SerialName(\"id\").", []),
    # --- true constructs ----------------------------------------------------------------
    ("context", "See @README.md for an overview and @docs/architecture.md for the layers.",
     ["@README.md", "@docs/architecture.md"]),
    ("rule", "Follow @./conventions/naming.md when you add a module.", ["@./conventions/naming.md"]),
    ("context", "Personal overrides live in @~/.claude/my-project.md.", ["@~/.claude/my-project.md"]),
    ("command", "Review @src/api/handlers.ts against the style guide.", ["@src/api/handlers.ts"]),
    ("command", "Fix issue $1 with priority $2, then summarise.", ["$1", "$2"]),
    ("skill", "Explain $ARGUMENTS in plain words.", ["$ARGUMENTS"]),
    ("command", "Fix issue $ARGUMENTS.", []),  # the portable placeholder of commands
    ("rule", "Think hard: ultrathink before changing the schema.", ["ultrathink"]),
    ("agent", "Call mcp__github__create_issue to file it.", ["mcp__github__create_issue"]),
    ("rule", "Use #tool:codebase to search and #file:docs/api.md for the spec.",
     ["#tool:codebase", "#file:docs/api.md"]),
    ("command", "Open ${workspaceFolder}/package.json first.", ["${workspaceFolder}"]),
    ("context", "Also read @AGENTS.md.", ["@AGENTS.md"]),
    ("rule", "Schemas are described in @package.json and @config/app.yaml.", ["@package.json", "@config/app.yaml"]),
    ("command", "Costs $5 per seat.", ["$5"]),  # a price, but a command's $5 is Claude's fifth argument
    ("context", "Import @docs/App.tsx when the UI changes.", ["@docs/App.tsx"]),
    ("command", "Current branch: !`git branch --show-current`", ["!`git branch --show-current`"]),
    ("skill", "Changed files: !`git diff --name-only` (run before the skill).", ["!`git diff --name-only`"]),
]

# Known misses and false alarms, kept visible: a bare `@Button.js` reads as a product name
# (like `@Next.js`); a lower-case product name ending in `.js` reads as a file.
KNOWN_MISSED = [("context", "Keep @Button.js small.", ["@Button.js"])]
KNOWN_FALSE_ALARMS = [("rule", "Charts are drawn with @three.js.", [])]


def _found(kind, body):
    out = []
    for ln in prose(scan(body)):
        out.extend(ln.text[s:e] for s, e, _, _ in find_constructs(ln.text, kind))
    return out


def _rates(corpus):
    false_pos = missed = expected = 0
    for kind, body, want in corpus:
        got = _found(kind, body)
        false_pos += len([t for t in got if t not in want])
        missed += len([t for t in want if t not in got])
        expected += len(want)
    return false_pos, missed, expected


def test_corpus_has_no_false_positives_and_misses_nothing_it_lists():
    assert len(CORPUS) >= 45
    for kind, body, want in CORPUS:
        assert _found(kind, body) == want, (kind, body)
    lookalikes = sum(1 for _, _, want in CORPUS if not want)
    assert _rates(CORPUS) == (0, 0, 21) and lookalikes == 38


def test_known_misses_and_false_alarms_stay_documented():
    assert _rates(KNOWN_MISSED) == (0, 1, 1)
    assert _rates(KNOWN_FALSE_ALARMS) == (1, 0, 0)


def test_claude_and_opencode_both_read_the_command_constructs():
    """opencode's commands take `$ARGUMENTS`, `$1`..., `!`cmd`` and `@file` as Claude Code's
    do: in a command, a block for both is enough; in a skill (opencode substitutes nothing in
    skills), only Claude Code's."""
    from agentrc.model import SourceFile, SourceTree
    from agentrc.pipeline import stages

    def lint(kind, body):
        entry = {"command": "COMMAND.md", "skill": "SKILL.md"}[kind]
        text = f"---\nschema: 1\ndescription: d\n---\n\n<!-- @client:claude,opencode -->\n{body}\n<!-- @endclient -->\n"
        tree = SourceTree((SourceFile(f"r/{kind}s/x/{entry}", text.encode()),))
        return [d.message for d in stages.lint(tree)[1] if d.code == "AR023"]

    body = "Fix issue $1: !`gh issue view $1`, see @docs/triage.md."
    assert lint("command", body) == []
    assert lint("skill", body) == [
        "claude-specific substitution variable '$ARGUMENTS'/'$N' in content that reaches claude, opencode",
        "claude-specific shell pre-execution '!`cmd`' in content that reaches claude, opencode",
    ]  # the `$1` inside the command span is code; `@path` is no import in a skill
    assert {frozenset(h[2]) for h in find_constructs(body, "command")} == {frozenset({"claude", "opencode"})}
