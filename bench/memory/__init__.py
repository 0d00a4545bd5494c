"""The reference memory system: a separate executable speaking the provisioner protocol, so the whole apparatus
runs with no third-party memory system installed.

State is one SQLite file (FTS5 passages, a graph of documents, decisions and file anchors, optional MiniLM vectors)
backfilled from an evidence corpus (:mod:`.corpus` documents the convention). ``python -m bench.memory`` runs the
verbs; :mod:`.recall` is the standalone hook program the agent's container runs; :mod:`.install` says where it goes.
"""

from .install import HOOK_PATH, POST_TOOL_MATCHER, STATE_PATH, hook_program, hook_settings
from .provisioner import STATE_FILE, state_path

__all__ = [
    "HOOK_PATH",
    "POST_TOOL_MATCHER",
    "STATE_FILE",
    "STATE_PATH",
    "hook_program",
    "hook_settings",
    "state_path",
]
