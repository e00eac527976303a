"""GAIA's release lifecycle, as data (docs/lifecycle.md): the steps of GAIA's own update
procedure that are not file merges, declared in the same shape a publisher writes in
``tether.toml``, so the same code runs them for every profile."""

from __future__ import annotations

import functools

from tether.model.lifecycle import Lifecycle

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from typing import Any

DESIGN_PAGE = "wiki/concepts/Design System.md"
AUDIT_TEMPLATE = ".gaia/cli/templates/workflows/code-review-audit.yml.tmpl"
AUDIT_WORKFLOW = ".github/workflows/code-review-audit.yml"
UPDATE_CHECK_CACHE = ".gaia/local/cache/shared/update-check.json"
# GAIA's `grep -qE '^established:[[:space:]]*true'` on the design page: any line, not only
# the frontmatter; [[:space:]] within a line is a blank, a tab, \r, \f or \v.
DESIGN_ESTABLISHED = r"^established:[ \t\r\f\v]*true"
# GAIA ships each release as the asset gaia-vX.Y.Z.tar.gz of its GitHub release; the tag's
# tree also holds maintainer-only files, so the asset, not the tag, is the release.
DEFAULT_SOURCE = "gh-release:gaia-react/gaia"
# The audit-remit region is derived from the audit roster in .gaia/audit-ci.yml: when that
# file's merge falls back to a whole-file conflict, the region is not regenerated.
REGION_INPUTS: dict[str, tuple[str, ...]] = {"audit-remit": (".gaia/audit-ci.yml",)}
# Pre-flight: run from a linked worktree, the refusal quotes main's cached update check, or
# says why it cannot (GAIA's words).
WORKTREE_CACHE_UNAVAILABLE = (
    "cached state unavailable on main; symlinks may be broken, run "
    "`.gaia/cli/gaia setup link-worktree` to repair"
)
# GAIA Step 1: a project without .gaia/VERSION was not scaffolded from GAIA (or the marker
# was deleted); what GAIA asks for then.
MISSING_MARKER_HINT = (
    "this project was not scaffolded from GAIA, or the marker was deleted; run /gaia-init on "
    "a fresh create-gaia scaffold first (or restore the marker: git checkout -- .gaia/VERSION)"
)
# How the project checks itself after an update (GAIA Step 10).
QUALITY_GATE = "wiki/decisions/Quality Gate.md"
# What confirms the generated regions are current once a region left unregenerated has been
# run by hand (GAIA Step 10: "re-run the roster check").
REGION_CHECK = "bash .gaia/scripts/verify-audit-roster.sh"
# GAIA's regions are audit gate machinery (Step 9, "Audit gate clearance").
AFTER_REGENERATION = (
    "The regenerated files are audit gate machinery: a clearance the audit gate gave on an "
    "earlier push to the same pull request no longer covers them, and the dispatched Code "
    "Audit Team members have to run again on the new HEAD."
)
# Artifacts GAIA names flat in .gaia-merge/, not under the file's folders (Steps 7c, 12).
ARTIFACT_NAMES = {
    ".gaia/audit-ci.yml": "audit-ci.yml",
    AUDIT_WORKFLOW: "code-review-audit.yml",
}
# GAIA Step 9, after the version bump: the adoption ping, best effort (flows/ping.py).
UPDATE_PING = (
    ".gaia/cli/gaia",
    "ping",
    "--event",
    "update",
    "--from",
    "{from_version}",
    "--to",
    "{to_version}",
)
# The environment variable that switches region awareness off for one run.
NO_REGIONS_VARIABLE = "GAIA_UPDATE_NO_REGIONS"

# Shown after "<target> was refreshed from this release's template." (or "would be", in a
# dry run): the words say what follows from the refresh, not whether it happened.
AUDIT_REFRESH_EXPECTATION = (
    "The update pull request then changes a workflow, and CI skips its audit on a "
    "self-modifying pull request: expect one skipped audit, not a clean audit stamp; merge "
    "with a local audit marker or trailer as your PR merge workflow describes."
)
DEFAULT_MODE_NUDGE = (
    "New: per-author audit mode. Your .gaia/audit-ci.yml had no default_mode before this "
    "update, so audits now run locally at merge time by default (CI only for a pinned "
    "per-author override or a fork pull request). Run /setup-gaia to choose the team policy: "
    "keep CI audits, or record your own preference."
)

DECLARATIONS: dict[str, Any] = {
    "migrations": [
        {
            # Folds flat SPEC files into per-SPEC folders. Idempotent, so it runs on every
            # update; exit 4 means a flat file and a folder exist for the same SPEC.
            "id": "spec-folderize",
            "when": "after",
            "run": ["bash", ".specify/extensions/gaia/lib/spec-folderize.sh"],
            "exit": {"ok": [0], "conflict": [4]},
            "summary_pattern": r"migrated (\d+)",
            "summary_default": "0",
            "label": "Specs migrated",
        }
    ],
    "ownership": [
        {
            "paths": [DESIGN_PAGE, ".claude/rules/design-baseline.md"],
            # GAIA's own test, to the letter: a line of the page starting "established:",
            # then blanks, then "true" (a trailing comment still counts).
            "when": {"file": DESIGN_PAGE, "matches": DESIGN_ESTABLISHED},
            "treat_as": "adopter-owned",
        }
    ],
    "templates": [
        {
            "target": AUDIT_WORKFLOW,
            "template": AUDIT_TEMPLATE,
            "install": "if-present",
            "after_refresh": AUDIT_REFRESH_EXPECTATION,
        }
    ],
    "notices": [
        {
            "id": "default-mode-opt-in",
            "when": {"not": {"file": ".gaia/audit-ci.yml", "matches": r"^\s*default_mode\s*:"}},
            "text": DEFAULT_MODE_NUDGE,
        }
    ],
    "post_update": [
        {
            # The session-start update check reads this; left alone it says an update is
            # still available.
            "file": UPDATE_CHECK_CACHE,
            "set": {
                "gaiaCurrent": "{to_version}",
                "gaiaLatest": "{to_version}",
                "gaiaHasUpdate": False,
                "outdatedCount": 0,
                "checkedAt": "{now_unix}",
            },
            "keep": ["serenaLangDrift"],
            "only_if_exists": True,
        }
    ],
    "trailer_invalidations": [{"trailer_key": "GAIA-Audit", "label": "Trailer invalidations"}],
}


@functools.cache
def gaia_lifecycle() -> Lifecycle:
    """Parsed when first asked for (by a GAIA project's run), not when profiles are loaded."""
    from tether.model.lifecycle_declarations import parse_lifecycle

    return parse_lifecycle(DECLARATIONS, "gaia profile")
