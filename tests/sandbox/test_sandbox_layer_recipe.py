"""The layer's recipe as data: a layer declaring neither ``node`` nor ``install_scripts`` is built as before (same
Dockerfile), and one running install scripts keeps its compiler in a stage no image is found as."""

from __future__ import annotations

from bench.images.labels import RECIPE_LABEL
from bench.images.layer import layer_dockerfile
from bench.suite.memory_system import ImageLayer

APT = (
    "RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends {} "
    ">/dev/null && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/log/apt/* /var/log/dpkg.log "
    "/var/log/alternatives.log"
)


def test_a_layer_without_node_is_built_from_the_dockerfile_it_had() -> None:
    layer = ImageLayer(debian=("nodejs",), npm=("a@1.0.0",))
    assert layer_dockerfile("AGENT", layer) == f"FROM AGENT\n{APT.format('nodejs')}\nCOPY npm/ /usr/local/\n"


def test_install_scripts_run_in_a_relabelled_stage_and_the_image_gets_only_its_prefix() -> None:
    layer = ImageLayer(debian=("sqlite3",), node="20.20.2", npm=("better-sqlite3@12.4.1",), install_scripts=True)
    lines = layer_dockerfile("AGENT", layer).splitlines()
    final = lines.index("FROM AGENT")
    build, image = lines[:final], lines[final:]
    relabel = f"LABEL {RECIPE_LABEL}=layer-build-stage"
    assert build[:2] == ["FROM AGENT AS build", relabel] and APT.format("g++ make") in build
    assert any("npm_config_build_from_source=true" in line and " rebuild --global " in line for line in build)
    assert image == ["FROM AGENT", relabel, APT.format("sqlite3"), "COPY --from=build /opt/prefix/ /usr/local/"]
