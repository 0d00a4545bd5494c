"""Codex's own texts that read as a host path but name none pass publication; a real host path beside or inside
them is still refused.

Codex's turn-metadata header names its root agent ``"agent_name":"/root"`` and its environment context closes the
workspace roots with ``</root>``; both reach a bundle in the gateway's exchange records (seen in a real run).
"""

from __future__ import annotations

import pytest

from bench.leaks import Check, check_leaks

HEADER = rb'"x-codex-turn-metadata":"{\"session_id\":\"01a2\",\"agent_name\":\"/root\",\"turn_id\":\"01a3\"}"'
CONTEXT = rb"<filesystem><workspace_roots><root>/workspace</root></workspace_roots></filesystem>"


@pytest.mark.parametrize("text", [HEADER, CONTEXT, b'{"agent_name":"/root"}'])
def test_codex_s_own_root_names_are_not_host_paths(text: bytes) -> None:
    assert check_leaks("objects/a.json", text) == []


@pytest.mark.parametrize(
    "text",
    [
        HEADER + b" cat /root/.ssh/id_ed25519",
        b"<root>/root/notes</root>",
        b'{"agent_name":"/root/secret"}',
        b"cat</root/x",
        CONTEXT.replace(b"<root>/workspace", b"<root>/home/alice"),
    ],
)
def test_a_host_path_beside_or_inside_them_is_still_refused(text: bytes) -> None:
    assert [finding.check for finding in check_leaks("objects/a.json", text)] == [Check.HOST_PATH]
