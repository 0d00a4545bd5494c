"""Auto-loaded agent context: files a coding harness reads into the prompt without being asked.

Packaging one of these is packaging a hand-written memory system into every arm at once, so redaction removes
them and certification refuses any that remain. A bare name matches that basename anywhere in a tree (``*`` is a
wildcard within the name); a trailing slash matches any entry whose trailing path components are the pattern's
(a directory, or a link standing in for one), anywhere in the tree, and everything beneath it.

Each entry cites the harness documentation that says the files are loaded automatically. Files a harness only
reads when the user names them (Aider's CONVENTIONS.md, Copilot's prompt files) are not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import translate

__all__ = ["AUTO_LOADED_CONTEXT_PATTERNS", "HARNESS_CONTEXT", "HarnessContext", "auto_loaded_match"]


@dataclass(frozen=True)
class HarnessContext:
    """Where one harness documents the files it loads unasked."""

    harness: str
    source: str
    patterns: tuple[str, ...]


HARNESS_CONTEXT: tuple[HarnessContext, ...] = (
    # CLAUDE.md in the tree and its parents (nested ones on demand), CLAUDE.local.md, .claude/CLAUDE.md and
    # .claude/rules/*.md; project-scoped MCP servers in .mcp.json ("Project scope" in the MCP page).
    HarnessContext(
        "Claude Code",
        "https://docs.anthropic.com/en/docs/claude-code/memory",
        ("CLAUDE.md", "CLAUDE.local.md", ".claude/"),
    ),
    HarnessContext("Claude Code", "https://docs.anthropic.com/en/docs/claude-code/mcp", (".mcp.json",)),
    # AGENTS.override.md, then AGENTS.md, in every directory from the project root down; configuration in .codex/.
    HarnessContext(
        "Codex", "https://developers.openai.com/codex/guides/agents-md", ("AGENTS.md", "AGENTS.override.md", ".codex/")
    ),
    # .rules first, then .cursorrules, .windsurfrules, .clinerules, .github/copilot-instructions.md, AGENT.md,
    # AGENTS.md, CLAUDE.md, GEMINI.md: the first one found is included in every agent interaction.
    HarnessContext("Zed", "https://zed.dev/docs/ai/rules", (".rules", "AGENT.md")),
    # GEMINI.md in the workspace and its parents, and just in time in any directory a tool touches; .gemini/ holds
    # project settings.
    HarnessContext("Gemini CLI", "https://geminicli.com/docs/cli/gemini-md", ("GEMINI.md", ".gemini/")),
    # QWEN.md in the project root; .qwen/QWEN.local.md; the context file name is configurable in .qwen/settings.json.
    HarnessContext(
        "Qwen Code", "https://qwenlm.github.io/qwen-code-docs/en/users/features/memory/", ("QWEN.md", ".qwen/")
    ),
    # .github/copilot-instructions.md (repository-wide) and .github/instructions/**/*.instructions.md (path-specific).
    HarnessContext(
        "GitHub Copilot",
        "https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-custom-instructions",
        ("copilot-instructions.md", ".github/instructions/"),
    ),
    # .cursor/rules/*.mdc project rules; .cursorrules, the legacy single file, still read (also summarised at
    # https://cameronbrooks11.github.io/agent-policy/reference/targets/cursor-rules).
    HarnessContext("Cursor", "https://docs.cursor.com/context/rules", (".cursorrules", ".cursor/")),
    # .windsurf/rules in the workspace, its subdirectories and its parents up to the git root; .windsurfrules is the
    # legacy file (still listed by Zed and Cline).
    HarnessContext("Windsurf", "https://docs.windsurf.com/windsurf/cascade/memories", (".windsurfrules", ".windsurf/")),
    # The .clinerules/ folder or a single .clinerules file (and the older mode files .clinerules-{mode}).
    HarnessContext("Cline", "https://docs.cline.bot/features/cline-rules/overview", (".clinerules", ".clinerules-*")),
    # Project configuration in .cline/ (rules, hooks, skills, workflows).
    HarnessContext("Cline", "https://docs.cline.bot/getting-started/config", (".cline/",)),
    # .roo/rules/ and .roo/rules-{mode}/, with .roorules and .roorules-{mode} as fallbacks; custom modes in .roomodes.
    HarnessContext(
        "Roo Code",
        "https://docs.roocode.com/features/custom-instructions",
        (".roo/", ".roorules", ".roorules-*", ".roomodes"),
    ),
    # Local rules in .continue/rules, joined into the system message.
    HarnessContext("Continue", "https://docs.continue.dev/customize/deep-dives/rules", (".continue/",)),
    # .aider.conf.yml from the git root and the current directory; its `read:` list loads files into every chat.
    # CONVENTIONS.md is only loaded when named there or with /read, so it is not listed.
    HarnessContext("Aider", "https://aider.chat/docs/config/aider_conf.html", (".aider.conf.yml",)),
    # Local .goosehints files in the working directory hierarchy.
    HarnessContext("Goose", "https://block.github.io/goose/docs/guides/using-goosehints", (".goosehints",)),
    # .junie/guidelines.md by default.
    HarnessContext("Junie", "https://www.jetbrains.com/help/junie/customize-guidelines.html", (".junie/",)),
    # Every markdown file in .kiro/steering/ is included automatically.
    HarnessContext("Kiro", "https://kiro.dev/docs/steering/", (".kiro/",)),
    # Project rules in .amazonq/rules, used as context automatically.
    HarnessContext(
        "Amazon Q Developer",
        "https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/context-project-rules.html",
        (".amazonq/",),
    ),
    # .openhands/microagents (repo.md is always loaded).
    HarnessContext(
        "OpenHands", "https://docs.openhands.dev/openhands/usage/microagents/microagents-overview", (".openhands/",)
    ),
)

AUTO_LOADED_CONTEXT_PATTERNS: tuple[str, ...] = tuple(
    dict.fromkeys(pattern for harness in HARNESS_CONTEXT for pattern in harness.patterns)
)

_NAME_GLOBS = tuple(pattern for pattern in AUTO_LOADED_CONTEXT_PATTERNS if not pattern.endswith("/"))
# One alternation, a group per glob, so a name is matched once instead of once per pattern.
_NAMES = re.compile("|".join(f"(?P<n{i}>{translate(glob)})" for i, glob in enumerate(_NAME_GLOBS)))
_DIRECTORIES: dict[str, list[tuple[str, ...]]] = {}
for _pattern in AUTO_LOADED_CONTEXT_PATTERNS:
    if _pattern.endswith("/"):
        _components = tuple(_pattern.rstrip("/").split("/"))
        _DIRECTORIES.setdefault(_components[-1], []).append(_components)


def auto_loaded_match(path: str) -> str | None:
    """The pattern that makes the entry at ``path`` (and all below it) auto-loaded context, if any.

    Only the entry's own name is compared; callers walk a tree top-down, so an entry inside a matched directory
    is reached through that directory's match.
    """
    name = path[path.rfind("/") + 1 :]
    found = _NAMES.match(name)
    if found is not None:
        return _NAME_GLOBS[int(str(found.lastgroup)[1:])]
    candidates = _DIRECTORIES.get(name)
    if candidates is None:  # nearly every entry: no split of its path
        return None
    parts = path.split("/")
    for components in candidates:
        if tuple(parts[-len(components) :]) == components:
            return "/".join(components) + "/"
    return None


# Names auto_loaded_match can return a pattern for (a superset, for a caller's one-pass reject).
CANDIDATE_NAMES = _NAMES.pattern + "".join(f"|{re.escape(name)}\\Z" for name in _DIRECTORIES)
