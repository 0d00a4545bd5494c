"""Images: built locally, idempotent, pinned by ID; a missing one is an error that names the build command."""

from __future__ import annotations

import docker
import pytest

from bench.cli import main
from bench.errors import SandboxError
from bench.harness.claude_code import CLI_VERSION
from bench.images import ImageName, build_image, require_image
from bench.images.debian import configured_mirror
from bench.images.labels import INPUTS_LABEL, RECIPE_LABEL
from bench.sandbox import RunRequest, container_spec
from bench.sandbox.backends.docker import DockerBackend
from bench.suite.challenge import Environment

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes


def test_tiny_build_is_idempotent_and_labelled(
    engine: docker.DockerClient, backend_engine: DockerBackend, tiny_image: str
) -> None:
    again = build_image(ImageName.TINY, backend_engine)
    assert again.built is False
    assert again.record.image_id == tiny_image
    labels = engine.images.get(tiny_image).labels
    assert labels[RECIPE_LABEL] == "tiny"
    assert labels[INPUTS_LABEL] == again.record.inputs


def test_image_build_cli_prints_the_id(tiny_image: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["image", "build", "tiny"]) == 0
    assert capsys.readouterr().out.strip() == tiny_image


def test_a_missing_image_names_the_build_command(backend_engine: DockerBackend) -> None:
    with pytest.raises(SandboxError, match="stele-bench image build"):
        require_image("sha256:" + "0" * 64)  # through the default backend
    with pytest.raises(SandboxError, match="stele-bench image build"):
        require_image("sha256:" + "0" * 64, backend_engine)


def test_running_a_missing_image_names_the_build_command(backend: DockerBackend, environment: Environment) -> None:
    spec = container_spec("sha256:" + "0" * 64, environment, ("true",))
    with pytest.raises(SandboxError, match="stele-bench image build"):
        backend.run(RunRequest(spec=spec, workspace=None, timeout_seconds=10))


def test_mirror_is_read_from_the_apt_sources(tmp_path: pytest.TempPathFactory) -> None:
    apt = tmp_path / "apt"  # type: ignore[operator]
    (apt / "sources.list.d").mkdir(parents=True)
    (apt / "sources.list.d" / "a.sources").write_text(
        "Types: deb\nURIs: http://mirror.invalid/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\n"
        "Types: deb\nURIs: http://mirror.invalid/security\nSuites: bookworm-security\n"
    )
    assert configured_mirror("bookworm", apt) == "http://mirror.invalid/debian"
    (apt / "sources.list.d" / "a.sources").unlink()
    (apt / "sources.list").write_text("# c\ndeb [arch=amd64] http://old.invalid/debian bookworm main\n")
    assert configured_mirror("bookworm", apt) == "http://old.invalid/debian"
    with pytest.raises(SandboxError, match="serves 'trixie'"):
        configured_mirror("trixie", apt)


def test_base_image_has_python_and_git_for_a_non_root_user(
    backend: DockerBackend, base_image: str, environment: Environment
) -> None:
    command = ("sh", "-c", "id -u; python3 -c 'print(6*7)'; git --version")
    outcome = backend.run(
        RunRequest(
            spec=container_spec(base_image, environment, command), workspace=None, timeout_seconds=60, read_back=False
        )
    )
    lines = outcome.output.splitlines()
    assert outcome.exit_code == 0, outcome.output
    assert lines[0] == "1000" and lines[1] == "42" and lines[2].startswith("git version")


def test_agent_image_runs_the_cli_offline_as_non_root(
    engine: docker.DockerClient, backend: DockerBackend, base_image: str, environment: Environment
) -> None:
    agent = build_image(ImageName.AGENT, backend).record.image_id
    command = ("sh", "-c", "id -un; claude --version; ls /usr/local/bin")
    outcome = backend.run(
        RunRequest(
            spec=container_spec(agent, environment, command), workspace=None, timeout_seconds=60, read_back=False
        )
    )
    assert outcome.exit_code == 0, outcome.output
    user, version, *_ = outcome.output.splitlines()
    assert user == "dev"
    assert version.startswith(CLI_VERSION)
    assert (
        engine.images.get(agent).attrs["RootFS"]["Layers"][0]
        == engine.images.get(base_image).attrs["RootFS"]["Layers"][0]
    )
