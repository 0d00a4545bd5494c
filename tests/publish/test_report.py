"""The static report: self-contained, deterministic, one key per trend line, answering first, and rendered by
headless Chromium (axe-core in both colour schemes at both widths; the first screen carries the effects)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.analysis import StatisticsSummary
from bench.analysis.headline import headline
from bench.publish import MixedKeysError, TrendLine
from bench.publish.effects import effects
from bench.publish.svg import BAND_COLOURS, CONTROL_COLOUR, TREATMENT_COLOUR
from bench.stages.publish import publish_directory as publish
from tests.publish.axe import audit
from tests.publish.bundle_factory import write_bundle
from tests.publish.png import colour_bands, colour_counts
from tests.publish.screen import first_screen

REPORT = "report/index.html"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("report") / "bundle"
    write_bundle(root)
    publish(root)
    return root


def test_report_is_self_contained(bundle: Path) -> None:
    html = (bundle / REPORT).read_text()
    assert "<script" not in html
    assert not re.search(r"""(src|href)=["']?(https?:|//|file:)""", html), "the report must need no external asset"
    assert html.count("<svg") == 1 + 4 + 2  # the effect chart, four cells' layers, two trend keys
    for section in ("answer", "outcomes", "comparisons", "layers", "continuous", "admissions", "trends"):
        assert f'<section id="{section}" aria-labelledby="{section}-title">' in html
    assert "superseded-by-correction" in html and "not-completed" in html
    assert re.search(r"exploratory \(\d non-zero differences, \d zero: fewer than 5 non-zero, no test computed\)", html)
    assert "pooled (stratified exact)" in html and "At power 0.8 the design detects" in html


def test_trend_line_refuses_two_keys(bundle: Path) -> None:
    summary = StatisticsSummary.model_validate_json((bundle / "receipts/statistics-summary.json").read_bytes())
    keys = {c.key_id for c in summary.cells}
    assert len(keys) == 2
    with pytest.raises(MixedKeysError, match="refusing to draw 2 comparability keys on one trend line"):
        TrendLine.of(summary.cells)
    one_key = [c for c in summary.cells if c.key.challenge == "rename-config"]
    line = TrendLine.of(list(reversed(one_key)))
    assert [c.build.sequence for c in line.cells] == [1, 2, 3]
    with pytest.raises(MixedKeysError):
        TrendLine(key_id=line.key_id, cells=(*line.cells, summary.cells[0]))


def _rgb(colour: str) -> tuple[int, int, int]:
    return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))


def test_report_renders_in_headless_chromium(bundle: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    assert chromium, "headless Chromium is needed: install the Debian package `chromium` (apt-get install -y chromium)"
    shot = tmp_path / "report.png"
    command = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
        # Half scale keeps the whole page (trends at the bottom) in one small image.
        "--force-device-scale-factor=0.5", "--window-size=1100,8400", f"--screenshot={shot}",
        (bundle / REPORT).as_uri(),
    ]  # fmt: skip
    subprocess.run(command, check=True, timeout=180, capture_output=True)
    assert shot.stat().st_size > 10_000
    counts = colour_counts(shot.read_bytes(), step=1)
    assert len(counts) > 100, "a near single-colour screenshot means nothing was drawn"
    assert counts.most_common(1)[0][0] == (255, 255, 255)
    for colour in (CONTROL_COLOUR, TREATMENT_COLOUR):
        assert counts[_rgb(colour)] > 500, f"{colour} plot marks missing"
    for colour in BAND_COLOURS.values():  # only the trend plots use the band tints
        assert counts[_rgb(colour)] > 100, f"trend interval bands {colour} missing"


def _summary(bundle: Path) -> StatisticsSummary:
    return StatisticsSummary.model_validate_json((bundle / "receipts/statistics-summary.json").read_bytes())


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [1300, 390])
def test_report_has_no_serious_accessibility_violation_and_fits_the_width(
    bundle: Path, tmp_path: Path, width: int, dark: bool
) -> None:
    result = audit(bundle / REPORT, width, tmp_path, dark)
    serious = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], serious
    assert result["scrollWidth"] <= result["clientWidth"], result  # nothing runs off the side; tables scroll


@pytest.mark.parametrize(("width", "height"), [(1300, 900), (390, 844)])
def test_the_first_screen_carries_the_pooled_effect_of_every_comparison(
    bundle: Path, tmp_path: Path, width: int, height: int
) -> None:
    shown = effects(_summary(bundle))
    assert len(shown) == 4  # three builds on one challenge, one on another
    marks = colour_bands(first_screen(bundle / REPORT, width, height, tmp_path), _rgb(TREATMENT_COLOUR))
    # Each comparison is one mark (its interval and its point) on the effect chart, all of it above the fold.
    assert len(marks) == len(shown), marks
    assert all(bottom < height for _, bottom in marks)


def test_report_says_first_what_was_compared_and_what_happened(bundle: Path) -> None:
    html = (bundle / REPORT).read_text()
    title = html.split("<title>", 1)[1].split("</title>", 1)[0]
    assert title.startswith("bundle: mem-1.0, mem-1.1, mem-1.2 against the shared control")  # admitted only
    assert "harness not recorded" in title and "model claude-sonnet-4-5" in title and "mode" in title
    header, main = html.split("<main>", 1)
    assert "<header><h1>" in header and "gateway forward mode" in header
    answer = main.split('<section id="outcomes"', 1)[0]
    assert answer.startswith('<section id="answer"')
    for effect in effects(_summary(bundle)):  # per comparison: its effect, its interval and its exact p
        low, high = effect.interval or (0.0, 0.0)
        row = f"{effect.difference * 100:+.0f} points ({low * 100:+.0f} to {high * 100:+.0f})"
        assert row in answer and f"<td>{effect.p_value:.3g}</td>" in answer
    assert "mem-1.2</strong> on add-flag" in answer and "mem-1.2</strong> on rename-config" in answer
    assert '<meta name="viewport"' in html and "prefers-color-scheme:dark" in html
    assert html.count("<caption>") >= 4 and '<th scope="col">' in html
    assert 'href="../records/' in html  # whole record paths, as links
    assert "(exploratory: fewer than 5 pairs)" in html


def test_the_report_and_the_headline_count_each_memory_system_s_exclusions_by_reason(bundle: Path) -> None:
    """The factory's bundle excludes the three pairs of the corrected v1 and the aborted one, of one system."""
    summary = StatisticsSummary.model_validate_json((bundle / "receipts/statistics-summary.json").read_bytes())
    counts = {(c.condition, c.reason.value): c.pairs for c in summary.exclusions}
    assert counts == {("reference-memory", "not-completed"): 1, ("reference-memory", "superseded-by-correction"): 3}
    html = (bundle / REPORT).read_text()
    assert "<caption>Excluded pairs per memory system and reason</caption>" in html
    assert "<td>reference-memory</td><td>superseded-by-correction</td><td>3</td>" in html
    lines = headline(summary).lines()
    assert lines[-1] == "excluded reference-memory: 1 not-completed, 3 superseded-by-correction"


def test_report_names_the_comparator_in_plain_words_and_says_power_in_sentences(bundle: Path) -> None:
    html = (bundle / REPORT).read_text()
    assert "R only" not in html and "the reference" not in html and "T only" not in html
    assert "passed only with: mem-1.0 / the control" in html and "favour the control" in html
    assert "none detectable" not in html  # the garbled "planned none detectable at 5 pairs; admitted none ..."
    sentence = (
        r"At power 0\.8 the design detects (nothing|a difference of \d+ points or more) with the \d+ planned pairs; "
    )
    assert re.search(sentence + r"(nothing|a difference of \d+ points or more) with the \d+ admitted pairs\.", html)


def test_systems_keep_one_order_in_every_table(bundle: Path) -> None:
    html = (bundle / REPORT).read_text()
    outcomes = html.split('<section id="outcomes"', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r"<tr><td>([a-z-]+)</td><td>(mem-[0-9.]+)</td>", outcomes)
    assert rows and rows == sorted(rows)  # by challenge, then by system, whatever the keys' digests
