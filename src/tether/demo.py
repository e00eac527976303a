"""The bundled demo: a small upstream with two releases and an adopter that customised it."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.errors import TetherError

if TYPE_CHECKING:
    from tether.flows.install import InitReport
    from tether.flows.status import StatusReport
    from tether.flows.update_report import UpdateReport

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

_SETTINGS_V1 = "# acme settings\nlevel: info\ntheme: light\nretries: 3\n"
_SETTINGS_V2 = _SETTINGS_V1.replace("level: info", "level: warn").replace(
    "retries: 3", "retries: 5"
)
_SETTINGS_MINE = _SETTINGS_V1.replace("retries: 3", "retries: 10")
SETTINGS = "config/settings.yml"

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
            "schema_version": 1,
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
    (
        SETTINGS,
        "set retries: 10 (upstream set retries: 5, a real conflict, and level: warn two "
        "lines above)",
    ),
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


def demo_dir(wanted: str | None) -> Path:
    """Where to build the demo: ``wanted`` when it is new or an empty folder, else a new
    temporary folder."""
    if not wanted:
        return Path(tempfile.mkdtemp(prefix="tether-demo-"))
    base = Path(wanted)
    if base.exists() and not (base.is_dir() and not any(base.iterdir())):
        raise TetherError(f"{base}: already exists and is not an empty folder; give a new one")
    return base


@dataclass(frozen=True)
class DemoReport:
    """Each step of ``tether demo`` and what it returned."""

    base: Path
    shelf: Path  # the upstream's releases
    project: Path
    installed: InitReport
    before: StatusReport
    update: UpdateReport
    after: StatusReport
    # The same update on a copy of the customised project, with --auto ours: the conflict
    # settled hunk by hunk (upstream's other change in the file kept).
    by_hunk: Path
    by_hunk_update: UpdateReport
    by_hunk_text: str  # the settled file as that update left it

    def to_json(self) -> dict[str, Any]:
        return {
            "demo_dir": str(self.base),
            "upstream": {"name": UPSTREAM, "releases": list(RELEASES)},
            "source": str(self.shelf),
            "project_dir": str(self.project),
            "init": self.installed.to_json(),
            "customised": [{"path": p, "what": what} for p, what in CUSTOMISATIONS],
            "status_before": self.before.to_json(),
            "update": None,  # each update's document is report/demo.demo_document's
            "status_after": self.after.to_json(),
            "hunk_level": {
                "command": HUNK_LEVEL_COMMAND,
                "project_dir": str(self.by_hunk),
                "update": None,
                "file": SETTINGS,
                "text": self.by_hunk_text,
            },
        }


def run_demo(wanted: str | None, started: Callable[[Path], None] = lambda base: None) -> DemoReport:
    """Build the upstream, install 1.0.0, customise, update to the newest release; then the
    same update of a copy of the customised project with ``--auto ours``.

    ``started`` hears the demo's folder once it is chosen, before anything is built there."""
    from tether.flows.install import install_release
    from tether.flows.plan import UpdateOptions
    from tether.flows.status import project_status
    from tether.flows.update import UpdateRequest, run_update

    base = demo_dir(wanted)
    started(base)
    shelf, project = base / "upstream", base / "project"
    build_upstream(shelf)
    installed = install_release(project, str(shelf), "1.0.0")
    customise(project)
    by_hunk = base / "project-ours"
    shutil.copytree(project, by_hunk, symlinks=True)
    before = project_status(project, check_latest=True)
    update = run_update(UpdateRequest(project, options=UpdateOptions()))
    after = project_status(project)
    ours = UpdateOptions(auto="ours")
    command = HUNK_LEVEL_COMMAND
    settled = run_update(UpdateRequest(by_hunk, options=ours, command=command), lambda _: True)
    text = (by_hunk / SETTINGS).read_text()
    return DemoReport(
        base, shelf, project, installed, before, update, after, by_hunk, settled, text
    )


HUNK_LEVEL_COMMAND = "update --yes --auto ours"
