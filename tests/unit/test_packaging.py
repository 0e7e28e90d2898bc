"""Project hygiene: the license, the metadata, one version (pyproject.toml, read at run time),
the CHANGELOG in keep-a-changelog form with the version as its newest release, the release
script that keeps them together, and README links that work from the package index page."""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import store

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SECTION = re.compile(r"^## \[(?P<version>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?$", re.M)


def released(changelog: str) -> list[tuple[str, str]]:
    return [(m["version"], m["date"]) for m in SECTION.finditer(changelog)
            if m["version"] != "Unreleased"]


def test_the_license_is_mit_in_the_repo_and_the_metadata():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in text
    assert PYPROJECT["project"]["license"] == "MIT"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]


def test_the_metadata_has_classifiers_urls_and_authors():
    project = PYPROJECT["project"]
    assert project["authors"] and all(a.get("name") for a in project["authors"])
    assert {"Repository", "Issues", "Changelog", "Documentation"} <= set(project["urls"])
    assert all(url.startswith("https://") for url in project["urls"].values())
    classifiers = project["classifiers"]
    assert "Typing :: Typed" in classifiers
    assert not any(c.startswith("License ::") for c in classifiers)  # the SPDX field says it
    minimum = project["requires-python"].removeprefix(">=")
    assert f"Programming Language :: Python :: {minimum}" in classifiers


def test_the_version_is_written_once_and_read_at_run_time():
    version = PYPROJECT["project"]["version"]
    assert store.__version__ == importlib.metadata.version("transcript-store") == version
    written = [p for p in (ROOT / "store").rglob("*.py")
               if re.search(rf"""["']{re.escape(version)}["']""", p.read_text())]
    assert written == []


def test_the_changelog_is_keep_a_changelog_and_its_newest_release_is_the_version():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert changelog.startswith("# Changelog\n")
    assert "keepachangelog.com" in changelog
    sections = [m["version"] for m in SECTION.finditer(changelog)]
    assert sections[0] == "Unreleased"  # new entries go there
    versions = released(changelog)
    assert versions, "no released section"
    keys = [tuple(int(n) for n in v.split(".")) for v, _ in versions]
    assert keys == sorted(keys, reverse=True)
    dates = [d for _, d in versions]
    assert all(dates) and dates == sorted(dates, reverse=True)
    assert versions[0][0] == PYPROJECT["project"]["version"] == store.__version__
    for version in ["Unreleased", *(v for v, _ in versions)]:
        assert re.search(rf"^\[{re.escape(version)}\]: https://", changelog, re.M), version


def _release(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "release"), *args, "--root",
                           str(tmp_path)], capture_output=True, text=True, timeout=60)


def test_the_release_script_cuts_the_unreleased_section_and_bumps_the_version(tmp_path):
    for name in ("CHANGELOG.md", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    # right after a release the real Unreleased section is empty: give the copy an entry
    changelog = (tmp_path / "CHANGELOG.md").read_text()
    (tmp_path / "CHANGELOG.md").write_text(changelog.replace(
        "## [Unreleased]\n", "## [Unreleased]\n\n### Added\n- An entry of this test.\n", 1))
    before = (tmp_path / "CHANGELOG.md").read_text()
    current = PYPROJECT["project"]["version"]
    major, minor, _ = (int(n) for n in current.split("."))
    new = f"{major}.{minor + 1}.0"
    done = _release(tmp_path, new, "--date", "2099-01-02")
    assert done.returncode == 0, done.stderr
    after = (tmp_path / "CHANGELOG.md").read_text()
    assert tomllib.loads((tmp_path / "pyproject.toml").read_text())["project"]["version"] == new
    assert released(after)[0] == (new, "2099-01-02")
    assert [m["version"] for m in SECTION.finditer(after)][:2] == ["Unreleased", new]
    # the entries moved under the new version, none lost
    assert sorted(line for line in after.splitlines() if line.startswith("- ")) == sorted(
        line for line in before.splitlines() if line.startswith("- "))
    unreleased = after.split("\n## [Unreleased]\n", 1)[1].split(f"\n## [{new}]", 1)[0]
    assert unreleased.strip() == ""
    assert f"[Unreleased]: https://github.com/transcript-store/transcript-store/compare/v{new}" \
        "...HEAD" in after
    assert f"[{new}]: https://github.com/transcript-store/transcript-store/compare/v{current}" \
        f"...v{new}" in after
    assert after.count("[Unreleased]: ") == 1
    # a second cut has nothing to release; a lower version is refused
    again = _release(tmp_path, f"{major}.{minor + 2}.0")
    assert again.returncode != 0 and "no entries" in again.stderr
    lower = _release(tmp_path, current)
    assert lower.returncode != 0 and "not above" in lower.stderr
    bad = _release(tmp_path, "two")
    assert bad.returncode != 0 and "not a version" in bad.stderr


def test_readme_links_and_images_work_from_the_package_index_page():
    """PyPI shows the README without the repository beside it: every link and image is an
    absolute URL (or an anchor)."""
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"!?\[[^\]]*\]\(([^)\s]+)", readme)
    targets += re.findall(r"""<img[^>]+src=["']([^"']+)""", readme)
    assert targets
    relative = [t for t in targets if not t.startswith(("https://", "#"))]
    assert relative == []
    repo = PYPROJECT["project"]["urls"]["Repository"]
    raw = repo.replace("https://github.com/", "https://raw.githubusercontent.com/") + "/main/"
    for target in targets:
        if target.endswith(".png"):
            assert target.startswith(raw), target
            assert (ROOT / target.removeprefix(raw)).is_file(), target
        elif target.startswith(repo + "/blob/main/"):
            assert (ROOT / target.removeprefix(repo + "/blob/main/").split("#")[0]).exists()
