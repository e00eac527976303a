"""The changelog engine: sections between two versions, adopter actions, declared packages."""

from __future__ import annotations

import pytest

from tether.engine.keep_a_changelog import (
    AdopterAction,
    adopter_actions,
    applicable_actions,
    declared_packages,
    parse_changelog,
    sections_between,
)

LOG = """\
# Changelog

All notable changes to this project are documented here.

## [Unreleased]
### Added
- something not released yet

## [2.0.0] - 2024-06-01
### Removed
- Dropped the left-pad shim. **Action required:** run `pnpm remove left-pad`.

## [2.0.0-rc.2] - 2024-05-20
### Fixed
- rc.2 fix

## [2.0.0-rc.1] - 2024-05-10
### Changed
- rc.1 change

## [1.x] - a heading that is not a version
- never shown

## [1.3.0] - 2024-03-01
### Added
- 1.3 feature

```
## [9.9.9] - inside a code block, not a heading
```

## [1.1.0] - 2024-02-01
### Fixed
- 1.1 fix

## [1.0.0] - 2024-01-01
- first release

[Unreleased]: https://example.org/compare/v2.0.0...HEAD
[2.0.0]: https://example.org/compare/v1.3.0...v2.0.0
[1.0.0]: https://example.org/releases/v1.0.0
"""


def versions(sections):
    return [s.version for s in sections]


def test_range_skips_versions_without_sections_and_is_newest_first():
    # 1.2.0 was never released: the range is simply what the file has in between.
    assert versions(sections_between(LOG, "1.0.0", "1.3.0")) == ["1.3.0", "1.1.0"]


def test_range_is_exclusive_below_inclusive_above():
    assert versions(sections_between(LOG, "1.1.0", "1.1.0")) == []
    assert versions(sections_between(LOG, "1.0.0", "1.1.0")) == ["1.1.0"]


def test_prereleases_take_their_semver_place():
    assert versions(sections_between(LOG, "1.3.0", "2.0.0")) == [
        "2.0.0",
        "2.0.0-rc.2",
        "2.0.0-rc.1",
    ]
    assert versions(sections_between(LOG, "2.0.0-rc.1", "2.0.0")) == ["2.0.0", "2.0.0-rc.2"]
    assert versions(sections_between(LOG, "1.3.0", "2.0.0-rc.2")) == ["2.0.0-rc.2", "2.0.0-rc.1"]


def test_versions_compare_by_semver_not_text_and_file_order_does_not_matter():
    text = "## [1.2.0]\n- a\n## [1.10.0]\n- c\n## [1.9.0]\n- b\n"
    assert versions(sections_between(text, "1.2.0", "1.10.0")) == ["1.10.0", "1.9.0"]
    assert versions(sections_between(text, "v1.2.0", "v1.9.0")) == ["1.9.0"]


def test_unreleased_unparsable_headings_fences_and_link_references_are_dropped():
    sections = parse_changelog(LOG)
    assert versions(sections) == ["2.0.0", "2.0.0-rc.2", "2.0.0-rc.1", "1.3.0", "1.1.0", "1.0.0"]
    by_version = {s.version: s for s in sections}
    assert "never shown" not in by_version["2.0.0-rc.1"].body
    assert "inside a code block" in by_version["1.3.0"].body
    assert by_version["1.0.0"].body == "- first release"
    assert by_version["2.0.0"].date == "2024-06-01"


def test_missing_target_section_and_no_changelog_at_all():
    assert versions(sections_between(LOG, "2.0.0", "3.0.0")) == []
    assert sections_between("", "1.0.0", "2.0.0") == []
    assert sections_between("# Changelog\n\nNothing yet.\n", "1.0.0", "2.0.0") == []


def test_from_none_means_from_the_beginning():
    assert versions(sections_between(LOG, None, "1.1.0")) == ["1.1.0", "1.0.0"]


@pytest.mark.parametrize(
    ("heading", "version", "date"),
    [
        ("## [1.2.0] - 2024-01-01", "1.2.0", "2024-01-01"),
        ("## 1.2.0 - 2024-01-01", "1.2.0", "2024-01-01"),
        ("## v1.2.0 (2024-01-01)", "1.2.0", "2024-01-01"),
        ("## [1.2.0](https://x/compare) - 2024-01-01 [YANKED]", "1.2.0", "2024-01-01 [YANKED]"),
        ("## [1.2.0]", "1.2.0", ""),
    ],
)
def test_heading_shapes(heading, version, date):
    (section,) = parse_changelog(f"{heading}\n- x\n")
    assert (section.version, section.date, section.body) == (version, date, "- x")


def test_not_a_version_raises_value_error():
    with pytest.raises(ValueError, match="not a version"):
        sections_between(LOG, "one", "2.0.0")


ACTIONS_LOG = """\
## [3.0.0] - 2024-09-01
### Removed
- Dropped two shims. **Action required:** run `pnpm remove left-pad is-odd`.
- The old lint script is gone: `rm -f scripts/old-lint.sh`.
- `legacy()` was removed (a code span, not a command: no action).
### Changed
- **Action required:** rename `theme` to `palette` in your config.
- Moved to uv:
  ```sh
  python -m pip uninstall Foo_Bar
  ```
### Added
- `npm uninstall not-an-action` (only Removed and Changed count)

## [2.5.0] - 2024-08-01
### Removed
- Old docs: `rm -r docs/legacy/` and `pnpm remove left-pad` again.

## [2.0.0] - 2024-06-01
### Removed
- `yarn remove outside-range`
"""


def test_actions_are_extracted_per_target_from_removed_and_changed_only():
    actions = adopter_actions(sections_between(ACTIONS_LOG, "2.0.0", "3.0.0"))
    summary = [(a.version, a.kind, a.target, a.command) for a in actions]
    assert summary == [
        ("3.0.0", "remove-package", "left-pad", "pnpm remove left-pad"),
        ("3.0.0", "remove-package", "is-odd", "pnpm remove is-odd"),
        ("3.0.0", "remove-file", "scripts/old-lint.sh", "rm -f scripts/old-lint.sh"),
        ("3.0.0", "other", None, None),
        ("3.0.0", "remove-package", "Foo_Bar", "python -m pip uninstall Foo_Bar"),
        # 2.5.0 asks for left-pad again: kept once, from the newest section.
        ("2.5.0", "remove-file", "docs/legacy", "rm -r docs/legacy"),
    ]
    assert "rename `theme`" in actions[3].text


@pytest.mark.parametrize(
    ("command", "kind", "target"),
    [
        ("npm uninstall -D @scope/pkg@2", "remove-package", "@scope/pkg"),
        ("yarn remove chalk", "remove-package", "chalk"),
        ("pip uninstall -y requests", "remove-package", "requests"),
        ("uv pip uninstall attrs", "remove-package", "attrs"),
        ("git rm old.txt", "remove-file", "old.txt"),
        ("$ rm ./tools/x.sh", "remove-file", "tools/x.sh"),
    ],
)
def test_recognised_commands(command, kind, target):
    text = f"## [1.1.0]\n### Removed\n- run `{command}`\n"
    (action,) = adopter_actions(sections_between(text, "1.0.0", "1.1.0"))
    assert (action.kind, action.target) == (kind, target)


@pytest.mark.parametrize("command", ["rm /etc/passwd", "rm ../outside", "pnpm install", "ls -la"])
def test_commands_that_are_no_project_removal_are_not_actions(command):
    text = f"## [1.1.0]\n### Removed\n- run `{command}`\n"
    assert adopter_actions(sections_between(text, "1.0.0", "1.1.0")) == []


def action(kind, target, command):
    return AdopterAction("1.0.0", "text", command, kind, target)


def test_applicable_actions_hide_what_no_longer_applies():
    actions = [
        action("remove-package", "left-pad", "pnpm remove left-pad"),
        action("remove-package", "is-odd", "pnpm remove is-odd"),
        action("remove-package", "Foo_Bar", "pip uninstall Foo_Bar"),
        action("remove-file", "scripts/old.sh", "rm scripts/old.sh"),
        action("remove-file", "docs/legacy", "rm -r docs/legacy"),
        action("remove-file", "tmp/*.log", "rm tmp/*.log"),
        action("other", None, None),
    ]
    shown = applicable_actions(actions, {"left-pad", "foo-bar"}, {"docs/legacy/a.md", "tmp/x.log"})
    assert [a.target for a in shown] == ["left-pad", "Foo_Bar", "docs/legacy", "tmp/*.log", None]
    # Nothing declared and nothing on disk: only what tether cannot check is left.
    assert [a.kind for a in applicable_actions(actions, set(), set())] == ["other"]


def test_npm_names_are_not_normalised_like_python_names():
    shown = applicable_actions(
        [action("remove-package", "foo_bar", "npm rm foo_bar")], {"foo-bar"}, set()
    )
    assert shown == []


def test_declared_packages_from_dependency_files():
    package_json = '{"dependencies": {"left-pad": "1"}, "devDependencies": {"@scope/x": "2"}}'
    assert declared_packages("package.json", package_json) == {"left-pad", "@scope/x"}
    pyproject = """
[project]
dependencies = ["requests>=2", "Foo_Bar[extra] ; python_version > '3'"]
[project.optional-dependencies]
dev = ["pytest"]
[tool.poetry.dependencies]
python = "^3.11"
httpx = "*"
"""
    assert declared_packages("pyproject.toml", pyproject) == {
        "requests",
        "Foo_Bar",
        "pytest",
        "httpx",
    }
    requirements = "# pinned\nattrs==23.1\n-r base.txt\n\nrich  # pretty\n"
    assert declared_packages("requirements-dev.txt", requirements) == {"attrs", "rich"}
    assert declared_packages("package.json", "{not json") == set()
    assert declared_packages("Cargo.toml", "[dependencies]\nserde = '1'\n") == set()


NOISE_LOG = """\
## [2.0.0] - 2024-09-01
### Changed
- Faster audits. **Action required:** none.
- Quieter hooks. **Action required:** None — the hook updates itself.
- Renamed the lint task (`pnpm remove old-lint` is not needed). **Action required:** n/a
- New config key. **Action required:** no action needed; defaults apply.
- Dropped a shim. **Action required:** run `pnpm remove left-pad`.
- **Action required:** rename `theme` to `palette` in your config.
"""


# The forms GAIA's own CHANGELOG uses between v1.6.1 and later releases: "none" followed by
# the pull request numbers the entry came from.
GAIA_NONE_LOG = """\
## [1.7.0] - 2025-06-01
### Changed
- The audit gate reads `.gaia/audit-ci.yml` once per run; `pnpm remove old-audit` is no longer
  documented. **Action required:** none (#1300)
- Hooks moved to `.githooks/`; `rm -rf .husky/_` is done for you. **Action required:** none
  (#1284, #1285)
- Skills load lazily (`pnpm remove lazy-shim` not needed). **Action required:** None [#1290]
- Dropped the shim. **Action required:** run `pnpm remove left-pad` (#1301)
"""


def test_follow_ups_whose_action_required_says_none_with_references_are_dropped():
    actions = adopter_actions(parse_changelog(GAIA_NONE_LOG))
    assert [a.command for a in actions] == ["pnpm remove left-pad"]


def test_follow_ups_whose_action_required_says_none_are_dropped():
    actions = adopter_actions(parse_changelog(NOISE_LOG))
    assert [(a.command, a.text.split(".")[0]) for a in actions] == [
        ("pnpm remove left-pad", "Dropped a shim"),
        (None, "**Action required:** rename `theme` to `palette` in your config"),
    ]
