"""What publication would refuse in a restore response is refused as restore answers, before any arm runs."""

from __future__ import annotations

import pytest

from bench.agent.mounted import require_publishable
from bench.errors import ContractError
from bench.provision.messages import RestoreLocations, RestoreResponse
from bench.suite.memory_system import Attachment, MemorySystem, StateMount

SYSTEM = MemorySystem(
    name="kg",
    version="1",
    provisioner=("provision",),
    attachment=Attachment(mounts=(StateMount(location="graph", target="/opt/kg"),)),
)


def _restored(path: str) -> RestoreResponse:
    locations = RestoreLocations(paths={"graph": path})
    return RestoreResponse(project="p1", queue_before_count=0, restore_seconds=0.1, locations=locations)


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("/home/alice/.local/share/kg/p1", "home directory"),
        ("/root/.kg/p1", "root home directory"),
        ("/tmp/h-0123456789abcdef/kg", "runner scratch folder"),
    ],
)
def test_a_restore_location_publication_would_refuse_is_refused_at_restore(path: str, found: str) -> None:
    with pytest.raises(ContractError) as refused:
        require_publishable(SYSTEM, _restored(path))
    said = str(refused.value)
    assert "\n" not in said and "'kg'" in said and found in said and f"'graph' ({path})" in said
    assert refused.value.exit_code == 6


def test_a_restore_location_in_a_temporary_directory_is_accepted() -> None:
    require_publishable(SYSTEM, _restored("/tmp/recall/p1/graph"))
