"""A memory system's image layer: the agent image plus declared Debian and npm packages, built locally from the
real npm package and the configured Debian mirror, idempotent, pinned by ID, labelled as a layer."""

from __future__ import annotations

import json

import docker
import pytest

from bench.images import ImageName, build_image, build_layer, find_image
from bench.images.labels import INPUTS_LABEL, RECIPE_LABEL
from bench.sandbox import RunRequest, container_spec
from bench.sandbox.backends.docker import DockerBackend
from bench.suite.challenge import Environment
from bench.suite.memory_system import ImageLayer

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

LAYER = ImageLayer(debian=("nodejs",), npm=("@modelcontextprotocol/server-memory@2026.8.31",))
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}


def test_the_layer_runs_the_npm_server_as_the_agent_user_and_is_reused(
    engine: docker.DockerClient, backend: DockerBackend, environment: Environment
) -> None:
    built = build_layer(LAYER, backend)
    again = build_layer(LAYER, backend)
    assert (again.built, again.record.image_id) == (False, built.record.image_id)
    labels = engine.images.get(built.record.image_id).labels
    assert labels[RECIPE_LABEL] == "layer" and labels[INPUTS_LABEL] == built.record.inputs
    agent = build_image(ImageName.AGENT, backend).record
    assert find_image(ImageName.AGENT, agent.inputs, backend) == agent  # a layer is never taken for the agent image
    request = json.dumps(INITIALIZE)
    script = f"node --version && command -v claude && echo '{request}' | timeout 20 mcp-server-memory"
    spec = container_spec(built.record.image_id, environment, ("sh", "-c", script))
    outcome = backend.run(RunRequest(spec=spec, workspace=None, timeout_seconds=60, read_back=False))
    lines = outcome.output.splitlines()
    assert lines[0].startswith("v") and lines[1] == "/usr/local/bin/claude", outcome.output
    answer = json.loads(next(line for line in lines if line.startswith("{")))
    assert answer["id"] == 1 and "tools" in answer["result"]["capabilities"], outcome.output


def test_pip_packages_are_fetched_as_wheels_on_the_host_and_installed_offline(
    backend: DockerBackend, environment: Environment
) -> None:
    layer = ImageLayer(debian=("python3-pip",), pip=("six==1.16.0",))
    built = build_layer(layer, backend)
    command = ("python3", "-c", "import six, sys; print(six.__version__, six.__file__.startswith('/usr/local/lib'))")
    spec = container_spec(built.record.image_id, environment, command)  # network none: nothing is fetched here
    outcome = backend.run(RunRequest(spec=spec, workspace=None, timeout_seconds=60, read_back=False))
    assert outcome.output.split() == ["1.16.0", "True"], outcome.output


NATIVE = ImageLayer(node="20.20.2", npm=("better-sqlite3@12.4.1",), install_scripts=True)
OPEN_DATABASE = (
    "const Database = require('/usr/local/lib/node_modules/better-sqlite3');"
    "const db = new Database(':memory:');"
    "db.exec('create table t (x)'); db.prepare('insert into t values (?)').run(41);"
    "console.log(process.version, db.prepare('select x + 1 as y from t').get().y);"
)


def test_a_declared_node_runs_and_a_native_npm_module_built_in_the_layer_opens_a_database(
    engine: docker.DockerClient, backend: DockerBackend, environment: Environment
) -> None:
    """Node.js of the declared version, from npm's own binary package, is the node on PATH; better-sqlite3's
    install script compiled it inside the build (from source, no download), and it opens a real database as the
    agent user with no network. The compiler that built it is not in the image."""
    built = build_layer(NATIVE, backend)
    agent = build_image(ImageName.AGENT, backend).record  # the build stage left behind is never taken for it
    assert agent.image_id == engine.images.get(f"sandbox-agent:{agent.inputs[:12]}").id
    script = f'node --version && node -e "{OPEN_DATABASE}" && (command -v g++ || echo no-compiler)'
    spec = container_spec(built.record.image_id, environment, ("sh", "-c", script))
    outcome = backend.run(RunRequest(spec=spec, workspace=None, timeout_seconds=60, read_back=False))
    assert outcome.output.splitlines() == ["v20.20.2", "v20.20.2 42", "no-compiler"], outcome.output


def test_a_layer_without_install_scripts_leaves_the_native_module_unbuilt(
    backend: DockerBackend, environment: Environment
) -> None:
    """The same package without ``install_scripts``: what issue 33 met (no binding), so the test above can fail."""
    built = build_layer(NATIVE.model_copy(update={"install_scripts": False}), backend)
    spec = container_spec(built.record.image_id, environment, ("node", "-e", OPEN_DATABASE))
    outcome = backend.run(RunRequest(spec=spec, workspace=None, timeout_seconds=60, read_back=False))
    assert outcome.exit_code != 0 and "bindings" in outcome.output, outcome.output
