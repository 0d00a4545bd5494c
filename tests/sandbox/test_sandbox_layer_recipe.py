"""The layer's recipe as data: a layer declaring neither ``node`` nor ``install_scripts`` is built as before (same
Dockerfile), one running install scripts keeps its compiler in a stage no image is found as, and the digest of a
fetched tree (part of the layer's inputs, so of which image is found) says the lines it always said."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from bench.images.labels import RECIPE_LABEL
from bench.images.layer import _tree_digest, layer_dockerfile
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


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_fetched_tree_s_digest_covers_files_modes_and_links_in_walk_order(tmp_path: Path) -> None:
    files = {"a.txt": ("a", 0o644), "bin/run": ("r", 0o755), "sub/y": ("y", 0o644), "sub/deeper/x": ("x", 0o600)}
    for name, (text, mode) in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
        (tmp_path / name).chmod(mode)
    (tmp_path / "empty").mkdir()
    os.symlink("a.txt", tmp_path / "link")
    os.symlink("bin", tmp_path / "dirlink")  # a link to a directory is listed as a link, not entered
    lines = [
        f"F a.txt 644 {_sha('a')}",
        "L dirlink bin",
        "L link a.txt",
        f"F bin/run 755 {_sha('r')}",
        f"F sub/y 644 {_sha('y')}",  # a directory's files before its subdirectories
        f"F sub/deeper/x 600 {_sha('x')}",
    ]
    assert _tree_digest(tmp_path) == _sha("".join(line + "\n" for line in lines))
