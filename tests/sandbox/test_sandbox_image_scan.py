"""Images are scanned for the harness's name: a build log naming the build path (what images built before the fix
carried in /var/log/bootstrap.log) is found by file and term, such an image is refused, and the base and agent
images as the project builds them now scan clean."""

from __future__ import annotations

import io
import json
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from bench.cli import main
from bench.errors import SandboxError
from bench.images import ImageName, ImageNotNeutral, build_image, require_neutral_image, scan_image
from bench.images.tiny import tiny_rootfs
from bench.packaging.identity import CHUNK, IdentityFinding
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.backends.process import ProcessBackend

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

# The kind of line debootstrap wrote when the rootfs was built under the cache directory (recipe 1).
OLD_LOG = (
    b"2026-12-03 13:24:49 URL:http://deb.debian.org/debian/dists/bookworm/InRelease [151075/151075] -> "
    b'"/root/.cache/stele-bench/images/rootfs-dx0twsjr/root/var/lib/apt/lists/partial/InRelease" [1]\n'
)


def _planted_rootfs() -> bytes:
    """The tiny rootfs plus a bootstrap log naming the build path, a directory and a link naming the harness, and
    a file whose term straddles the scanner's chunk boundary on its third line."""
    straddling = b"a\nb\n" + b"x" * (CHUNK - 7) + b"Stele Bench" + b"y" * 100
    rebuilt = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(tiny_rootfs())) as source, tarfile.open(fileobj=rebuilt, mode="w") as out:
        for member in source:
            out.addfile(member, source.extractfile(member) if member.isreg() else None)
        for name, data in (("var/log/bootstrap.log", b"first line\n" + OLD_LOG), ("srv/blob", straddling)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
        directory = tarfile.TarInfo("opt/stele_bench")
        directory.type = tarfile.DIRTYPE
        out.addfile(directory)
        link = tarfile.TarInfo("etc/tool")
        link.type, link.linkname = tarfile.SYMTYPE, "/srv/SteleBench/tool"
        out.addfile(link)
        condition = tarfile.TarInfo("opt/treatmentLayer")  # a path naming the arm's condition
        condition.type = tarfile.DIRTYPE
        out.addfile(condition)
    return rebuilt.getvalue()


@pytest.fixture
def planted_image(engine: docker.DockerClient, backend_engine: DockerBackend) -> Iterator[str]:
    image_id = backend_engine.import_image(_planted_rootfs(), tag="sandbox-planted:scan", labels={}, env={})
    yield image_id
    engine.images.remove(image_id, force=True)  # this test's own image (a fresh ID per import), nobody else's


def test_a_planted_build_log_is_found_by_file_and_term_and_the_image_refused(
    planted_image: str, backend_engine: DockerBackend, tmp_path: Path
) -> None:
    scan = scan_image(planted_image, backend_engine)
    assert set(scan.findings) == {
        IdentityFinding("var/log/bootstrap.log", 2, "stele-bench"),
        IdentityFinding("srv/blob", 3, "stele bench"),
        IdentityFinding("opt/stele_bench", None, "stele_bench"),
        IdentityFinding("etc/tool", None, "stelebench"),
        IdentityFinding("opt/treatmentLayer", None, "treatment"),
    }
    assert scan.files > 1 and scan.bytes > CHUNK
    with pytest.raises(ImageNotNeutral, match=re.escape("var/log/bootstrap.log:2: stele-bench")) as refused:
        require_neutral_image(planted_image, backend_engine, tmp_path)
    assert refused.value.image_id == planted_image and len(refused.value.findings) == 5
    assert not (tmp_path / "scans").exists()  # no clean verdict is remembered for a refused image


def test_the_scan_cli_answers_one_json_object_and_exits_1_on_findings(
    planted_image: str, tiny_image: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--json", "image", "scan", planted_image]) == 1
    found = json.loads(capsys.readouterr().out)
    assert found["clean"] is False
    assert {"path": "var/log/bootstrap.log", "line": 2, "term": "stele-bench"} in found["findings"]
    assert main(["--json", "image", "scan", tiny_image]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert clean["clean"] is True and clean["findings"] == [] and clean["files"] >= 1


@pytest.mark.parametrize("name", [ImageName.BASE, ImageName.AGENT])
def test_the_images_built_now_scan_clean(name: ImageName, backend_engine: DockerBackend, tmp_path: Path) -> None:
    image_id = build_image(name, backend_engine).record.image_id  # refused by the build itself were it not clean
    scan = require_neutral_image(image_id, backend_engine, tmp_path)
    assert scan is not None and scan.findings == ()
    assert scan.files > 5000 and scan.bytes > 100_000_000  # the whole Debian tree was read, not a stub
    assert require_neutral_image(image_id, backend_engine, tmp_path) is None  # remembered: not read again


def test_the_process_backend_refuses_to_export_an_image() -> None:
    with ProcessBackend() as backend, pytest.raises(SandboxError, match="lacks the images capability"):
        scan_image("sha256:" + "0" * 64, backend)
