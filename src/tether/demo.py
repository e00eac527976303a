"""The bundled demo: a small upstream with two releases and an adopter that customised it."""

from __future__ import annotations

import json
from pathlib import Path

UPSTREAM = "acme-kit"

_GUIDE_V1 = """# Acme guide

## Install
Run `make install`.

## Usage
Run `acme start` to begin.

## Support
Open an issue.
"""
_GUIDE_V2 = _GUIDE_V1.replace("Run `make install`.", "Run `make install` (needs make 4).")
_GUIDE_MINE = _GUIDE_V1.replace("Open an issue.", "Ask in #acme-help on our chat first.")

_SETTINGS_V1 = "# acme settings\nlevel: info\nretries: 3\ntheme: light\n"
_SETTINGS_V2 = _SETTINGS_V1.replace("retries: 3", "retries: 5")
_SETTINGS_MINE = _SETTINGS_V1.replace("retries: 3", "retries: 10")

_PACKAGE_V1 = {
    "name": "acme-app",
    "version": "1.0.0",
    "scripts": {"lint": "acme lint", "test": "acme test"},
    "devDependencies": {"acme-cli": "^1.0.0"},
}


def _package(version: str, cli: str) -> str:
    doc = dict(_PACKAGE_V1, version=version, devDependencies={"acme-cli": cli})
    return json.dumps(doc, indent=2) + "\n"


RELEASES: dict[str, dict[str, str]] = {
    "1.0.0": {
        "docs/guide.md": _GUIDE_V1,
        "docs/faq.md": "# FAQ\n\nNothing yet.\n",
        "config/settings.yml": _SETTINGS_V1,
        "bin/lint.sh": "#!/bin/sh\nset -eu\nshellcheck bin/*.sh\n",
        "bin/format.sh": "#!/bin/sh\nset -eu\nshfmt -w bin\n",
        "templates/issue.md": "## What happened\n",
        "templates/old-pr.md": "## Old PR template\n",
        "package.json": _package("1.0.0", "^1.0.0"),
    },
    "1.1.0": {
        "docs/guide.md": _GUIDE_V2,
        "docs/faq.md": "# FAQ\n\nQ: Does acme run on macOS?\nA: Yes.\n",
        "config/settings.yml": _SETTINGS_V2,
        "bin/lint.sh": "#!/bin/sh\nset -eu\nshellcheck -x bin/*.sh\n",
        "bin/format.sh": "#!/bin/sh\nset -eu\nshfmt -w bin\n",
        "bin/release.sh": '#!/bin/sh\nset -eu\ngit tag "v$1"\n',
        "templates/issue.md": "## What happened\n## What you expected\n",
        "package.json": _package("1.1.0", "^1.2.0"),
    },
}
CLASSES = {"bin/lint.sh": "owned", "bin/format.sh": "owned", "bin/release.sh": "owned"}
CHANGELOG = (
    "# Changelog\n\n## [1.1.0]\n### Added\n- bin/release.sh\n\n## [1.0.0]\n- first release\n"
)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def build_upstream(shelf: Path) -> None:
    """A directory of releases: ``shelf/<version>/`` with a manifest each."""
    for version, files in RELEASES.items():
        root = shelf / version
        for rel, text in files.items():
            _write(root, rel, text)
            if rel.endswith(".sh"):
                (root / rel).chmod(0o755)
        _write(root, "CHANGELOG.md", CHANGELOG)
        manifest = {
            "schema": 1,
            "name": UPSTREAM,
            "version": version,
            "files": {p: CLASSES.get(p, "shared") for p in sorted(files)},
            "sentinels": ["CHANGELOG.md"],
            "merge": {"package.json": {"preset": "npm-package"}},
        }
        _write(root, ".tether/manifest.json", json.dumps(manifest, indent=2) + "\n")


# What the adopter did after installing 1.0.0, one line each for the demo's output.
CUSTOMISATIONS = (
    ("docs/guide.md", "edited the Support section (upstream edited Install: merges cleanly)"),
    ("config/settings.yml", "set retries: 10 (upstream set retries: 5: a real conflict)"),
    ("docs/faq.md", "deleted it (upstream changed it: the deletion is respected)"),
    ("package.json", "renamed the package (upstream bumped a devDependency)"),
    ("notes/team.md", "added a file of their own (tether never touches it)"),
)


def customise(project: Path) -> None:
    _write(project, "docs/guide.md", _GUIDE_MINE)
    _write(project, "config/settings.yml", _SETTINGS_MINE)
    (project / "docs/faq.md").unlink()
    package = json.loads((project / "package.json").read_text())
    package["name"] = "our-app"
    _write(project, "package.json", json.dumps(package, indent=2) + "\n")
    _write(project, "notes/team.md", "# Team notes\n")
