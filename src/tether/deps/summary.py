"""The document ``tether deps apply`` ends with (the run folder keeps it as summary.json).

Its words are rendered from it in ``tether.report.deps``, the suggested next steps it
carries included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tether.deps.align import Plan, package_json
from tether.deps.dossier import in_scope
from tether.deps.overrides import BoundOverride
from tether.deps.scan import common_sections
from tether.deps.subset import Chosen
from tether.deps.surfaces import LEFT_AS_IS
from tether.deps.work import ApplyRun, ProjectResult
from tether.report.deps import apply_next_steps
from tether.runs import sections

Doc = dict[str, Any]


# --- apply summary -----------------------------------------------------------------------


def _project(result: ProjectResult) -> Doc:
    work = result.work
    return {
        "name": work.name,
        "project_dir": str(work.root),
        "bumps": [b.to_json() for b in work.bumps],
        "overrides": [
            {"id": o.entry.id, "command": o.to_json()["command"]} for o in work.overrides
        ],
        "files": result.files,
        "steps": [s.to_json() for s in result.steps],
        "log": str(result.log),
        "install_with": work.install_with,
    }


def _failed(result: ProjectResult) -> Doc:
    failure = sections.failure(result.failed_step, result.exit_code, result.error, result.log)
    return {**_project(result), **failure}


def _not_isolated(result: ProjectResult) -> Doc:
    note = result.isolation.note if result.isolation else ""
    return {"name": result.work.name, "project_dir": str(result.work.root), "reason": note}


def _isolation(results: Sequence[ProjectResult], requested: str) -> Doc:
    used = [(r.work.name, r.isolation.to_json()) for r in results if r.isolation is not None]
    return sections.isolation(requested, used)


def summary_document(
    plan: Plan | None,
    bound: Sequence[BoundOverride],
    run: ApplyRun | None,
    status: str,
    meta: Doc,
) -> Doc:
    """The whole outcome of ``tether deps apply``; ``meta`` carries run id, folder, flags."""
    results = run.results if run else []
    skipped = [p for p in plan.packages if p.skipped_by] if plan else []
    doc: Doc = {
        **meta,
        "status": status,
        "applied": [_project(r) for r in results if r.state == "applied"],
        "failed": [_failed(r) for r in results if r.state == "failed"],
        "pending": [_project(r) for r in results if r.state == "pending"],
        "skipped_isolation": [_not_isolated(r) for r in results if r.state == "skipped"],
        "skipped_path_missing": [],
        "skipped_scan_failed": [],
        "skipped_by_user": [package_json(p) for p in skipped if p.skipped_by == "user"],
        "skipped_by_conflict_policy": [
            package_json(p) for p in skipped if p.skipped_by == "conflict-policy"
        ],
        "skipped_by_override": [
            package_json(p) for p in skipped if (p.skipped_by or "").startswith("override:")
        ],
        "skipped_unsupported_range": [],
        "left_as_is": [],
        "skipped_by_release_age": [],
        "overrides": [b.to_json() for b in bound],
        "warnings": list(plan.warnings) if plan else [],
        "isolation": _isolation(results, meta.get("isolate", "none")),
    }
    if plan is not None:
        sections = common_sections(plan.scan)
        doc["skipped_path_missing"] = sections["skipped_path_missing"]
        doc["skipped_scan_failed"] = sections["scan_failed"]
        doc["skipped_unsupported_range"] = [
            s for s in sections["skipped"] if s["kind"] == "unsupported-range"
        ]
        doc["left_as_is"] = [s for s in sections["skipped"] if s["kind"] == LEFT_AS_IS]
        doc["skipped_by_release_age"] = sections["skipped_by_release_age"]
        doc["warnings"] = sections["warnings"] + doc["warnings"]
    unlocked = _unlocked_python(doc, plan) if plan is not None else []
    doc["suggested_next_steps"] = apply_next_steps(doc, unlocked)
    return doc


def _unlocked_python(doc: Doc, plan: Plan) -> list[str]:
    """Applied projects with a Python bump and no lock tool tether knows (their environment
    or lock is the person's to refresh)."""
    tools = {p.name: p.python_tool for p in plan.scan.scanned}
    return [
        p["name"]
        for p in doc["applied"]
        if any(b["ecosystem"] == "pypi" for b in p["bumps"]) and not tools.get(p["name"])
    ]


def improvement_sections(chosen: Chosen | None, doc: Doc, projects: Sequence[str]) -> Doc:
    """The dossier's improvements after the run: the ones selected, with the projects they
    concern that did not fail or stay pending (tether changes versions only: a person or an
    agent takes these up), and the ones left out."""
    if chosen is None or chosen.offered is None:
        return {"selected_improvements": [], "skipped_improvements": []}
    blocked = {p["name"] for key in ("failed", "pending", "skipped_isolation") for p in doc[key]}
    taken = chosen.taken
    return {
        "selected_improvements": in_scope(taken, [p for p in projects if p not in blocked]),
        "skipped_improvements": [
            {**item.to_json(), "reason": "not selected"}
            for item in chosen.offered
            if item not in taken
        ],
    }


# --- scan and plan -----------------------------------------------------------------------
