"""The pure region engine: declarations, marker scan, masking, comparison, conflict patch."""

from __future__ import annotations

import json

import pytest

from tether.engine.regions import (
    PLACEHOLDER,
    MalformedReason,
    RegenSpec,
    RegionDecl,
    Scan,
    compare_region_file,
    conflict_patch,
    dropped_declarations,
    mask_region,
    parse_region_declarations,
    scan_markers,
)
from tether.flows.regions_plan import RegionPlan, plan_regions
from tether.model.manifest import Manifest, parse_manifest

S = "<!-- gaia:audit-remit:start -->"
E = "<!-- gaia:audit-remit:end -->"


def doc(*lines: str, eol: str = "\n") -> str:
    return "".join(line + eol for line in lines)


def decl_raw(**overrides: object) -> dict[str, object]:
    raw: dict[str, object] = {
        "id": "audit-remit",
        "startMarker": S,
        "endMarker": E,
        "paths": [".claude/agents/a.md"],
        "regenerate": {
            "interpreter": "bash",
            "operand": ".gaia/scripts/write-audit-remits.sh",
            "args": [],
        },
    }
    raw.update(overrides)
    return raw


# --- declarations --------------------------------------------------------------------------


def test_gaia_shape_parses() -> None:
    decls, problems = parse_region_declarations([decl_raw()])
    assert problems == []
    assert decls == [
        RegionDecl(
            id="audit-remit",
            start_marker=S,
            end_marker=E,
            paths=(".claude/agents/a.md",),
            regenerate=RegenSpec("bash", ".gaia/scripts/write-audit-remits.sh", ()),
        )
    ]


def test_snake_case_and_missing_regenerate_parse() -> None:
    raw = {"id": "r", "start_marker": "# s", "end_marker": "# e", "paths": ["a", "a", "b"]}
    decls, problems = parse_region_declarations([raw])
    assert problems == []
    assert decls[0].paths == ("a", "b")
    assert decls[0].regenerate is None


@pytest.mark.parametrize("raw", [None, [], "", "   "])
def test_absent_or_empty_means_no_declarations(raw: object) -> None:
    assert parse_region_declarations(raw) == ([], [])


@pytest.mark.parametrize("raw", ["{not json", {"id": "x"}, 42])
def test_unparsable_means_no_declarations_and_is_reported(raw: object) -> None:
    decls, problems = parse_region_declarations(raw)
    assert decls == []
    assert len(problems) == 1


def test_json_text_is_accepted() -> None:
    decls, problems = parse_region_declarations(json.dumps([decl_raw()]))
    assert [d.id for d in decls] == ["audit-remit"] and problems == []


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("just a string", "not an object"),
        ({k: v for k, v in decl_raw().items() if k != "endMarker"}, "missing field 'endMarker'"),
        (decl_raw(startMarker="   "), "blank"),
        (decl_raw(endMarker=S), "same"),
        (decl_raw(startMarker="a\nb"), "more than one line"),
        (decl_raw(paths=["/etc/passwd"]), "absolute"),
        (decl_raw(paths=["docs/../../x"]), "'..'"),
        (decl_raw(paths=[""]), "empty path"),
        (decl_raw(paths=[]), "'paths' is empty"),
        (decl_raw(paths="a.md"), "not a list"),
        (decl_raw(regenerate={"interpreter": "bash"}), "missing field 'operand'"),
        (decl_raw(regenerate={"interpreter": "bash", "operand": "x", "args": [1]}), "args"),
        (decl_raw(id=""), "'id' is blank"),
    ],
)
def test_malformed_declaration_is_skipped_and_reported(entry: object, expected: str) -> None:
    good = decl_raw(id="good")
    decls, problems = parse_region_declarations([entry, good])
    assert [d.id for d in decls] == ["good"]
    assert len(problems) == 1
    assert problems[0].startswith("regions[0]")
    assert expected in problems[0]


def test_duplicate_id_keeps_the_first() -> None:
    first = decl_raw(paths=["first.md"])
    second = decl_raw(paths=["second.md"])
    decls, problems = parse_region_declarations([first, second])
    assert [d.paths for d in decls] == [("first.md",)]
    assert problems == [
        "regions[1] (audit-remit): duplicate id, the first declaration wins; skipped"
    ]


def test_dropped_declarations() -> None:
    base, _ = parse_region_declarations([decl_raw(id="a"), decl_raw(id="b"), decl_raw(id="c")])
    latest, _ = parse_region_declarations([decl_raw(id="c"), decl_raw(id="d")])
    assert dropped_declarations(base, latest) == ["a", "b"]


# --- scanner -------------------------------------------------------------------------------


def test_region_found_with_line_numbers() -> None:
    text = doc("# Agent", S, "- `a/**`", E, "tail")
    assert scan_markers(text, S, E) == Scan("region", start_line=2, end_line=4)


def test_absent() -> None:
    assert scan_markers(doc("# Agent", "body"), S, E) == Scan("absent")


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        ((S, "x", S, "y", E), "duplicate-start"),
        ((S, "x", E, "y", E), "duplicate-end"),
        ((S, "x"), "unbalanced"),
        (("x", E), "unbalanced"),
        ((E, "x", S), "inverted"),
    ],
)
def test_malformations(lines: tuple[str, ...], reason: MalformedReason) -> None:
    assert scan_markers(doc(*lines), S, E) == Scan("malformed", reason=reason)


def test_adjacent_markers_are_an_empty_region() -> None:
    text = doc("a", S, E, "b")
    assert scan_markers(text, S, E) == Scan("region", start_line=2, end_line=3)
    assert mask_region(text, scan_markers(text, S, E)) == doc("a", S, PLACEHOLDER, E, "b").encode()


def test_markers_with_surrounding_spaces_do_not_match() -> None:
    # A marker quoted in indented prose or a code block must not open a region.
    assert scan_markers(doc("  " + S, "x", "  " + E), S, E).kind == "absent"
    assert scan_markers(doc(S + " ", "x", E), S, E) == Scan("malformed", reason="unbalanced")


def test_marker_inside_a_longer_line_does_not_match() -> None:
    assert scan_markers(doc(f"see {S} here", E + "."), S, E).kind == "absent"


def test_crlf_lines_match_with_the_cr_stripped() -> None:
    text = doc("a", S, "body", E, "b", eol="\r\n")
    scan = scan_markers(text.encode(), S, E)
    assert scan == Scan("region", start_line=2, end_line=4)
    masked = mask_region(text, scan)
    assert masked == doc("a", S, PLACEHOLDER, E, "b", eol="\r\n").encode()


def test_last_line_without_newline_matches() -> None:
    text = f"a\n{S}\nbody\n{E}"
    assert scan_markers(text, S, E) == Scan("region", start_line=2, end_line=4)
    assert mask_region(text, scan_markers(text, S, E)) == f"a\n{S}\n{PLACEHOLDER}\n{E}".encode()


def test_non_utf8_bytes_survive_masking() -> None:
    text = b"caf\xe9\n" + S.encode() + b"\n\xff\n" + E.encode() + b"\n\xfe\n"
    masked = mask_region(text, scan_markers(text, S, E))
    assert masked == b"caf\xe9\n" + f"{S}\n{PLACEHOLDER}\n{E}\n".encode() + b"\xfe\n"


@pytest.mark.parametrize(("start", "end"), [("", E), (S, "  "), (S, S)])
def test_unusable_markers_raise(start: str, end: str) -> None:
    with pytest.raises(ValueError):
        scan_markers("x\n", start, end)


def test_masking_is_independent_of_the_body() -> None:
    one = doc("a", S, "- `x/**`", "- `y/**`", E, "b")
    two = doc("a", S, E, "b")
    assert mask_region(one, scan_markers(one, S, E)) == mask_region(two, scan_markers(two, S, E))


# --- comparison ----------------------------------------------------------------------------

BASE = doc("# Agent", "intro v1", S, "- `a/**`", E, "outro")


def test_region_only_divergence_is_no_upstream_change() -> None:
    latest = doc("# Agent", "intro v1", S, "- `a/**`", "- `upstream/**`", E, "outro")
    current = doc("# Agent", "intro v1", S, "- `a/**`", "- `mine/**`", E, "outro")
    result = compare_region_file(BASE, latest, current, S, E)
    assert result.verdict == "no-upstream-change"
    assert not result.bailed and result.fallback is None
    assert all(result.side(name).masked for name in ("baseline", "latest", "current"))


def test_adopter_changed_only_the_region_takes_latest() -> None:
    latest = doc("# Agent", "intro v2", S, "- `a/**`", E, "outro")
    current = doc("# Agent", "intro v1", S, "- `mine/**`", E, "outro")
    assert compare_region_file(BASE, latest, current, S, E).verdict == "no-adopter-drift"


def test_already_latest_outside_the_region() -> None:
    latest = doc("# Agent", "intro v2", S, "- `a/**`", E, "outro")
    current = doc("# Agent", "intro v2", S, "- `mine/**`", E, "outro")
    assert compare_region_file(BASE, latest, current, S, E).verdict == "already-latest"


def test_divergence_outside_the_region_conflicts_and_the_patch_hides_the_body() -> None:
    latest = doc("# Agent", "intro v2", S, "- `upstream-secret/**`", E, "outro")
    current = doc("# Agent", "intro mine", S, "- `adopter-secret/**`", E, "outro")
    result = compare_region_file(BASE, latest, current, S, E)
    assert result.verdict == "conflict"
    patch = conflict_patch(result, ".claude/agents/a.md")
    assert patch.startswith("--- a/.claude/agents/a.md\n+++ b/.claude/agents/a.md\n")
    assert "-intro mine\n" in patch and "+intro v2\n" in patch
    assert "secret" not in patch
    assert PLACEHOLDER in patch  # as context, so the reader sees where the region sits


def test_patch_marks_a_missing_final_newline() -> None:
    latest = "# Agent\nnew"
    current = "# Agent\nmine"
    result = compare_region_file("# Agent\nold", latest, current, S, E)
    patch = conflict_patch(result, "f.md")
    assert "-mine\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n" in patch


def test_malformed_side_bails_and_masks_none() -> None:
    latest = doc("# Agent", "intro v1", S, "- `up/**`", E, "outro")
    current = doc("# Agent", "intro v1", S, "- `mine/**`", S, E, "outro")
    result = compare_region_file(BASE, latest, current, S, E)
    assert result.bailed and result.fallback == "malformed-markers"
    assert not any(result.side(name).masked for name in ("baseline", "latest", "current"))
    # Unmasked, the region bodies differ everywhere: a conflict a person must look at.
    assert result.verdict == "conflict"
    assert result.markers_document() == {
        "bailed": True,
        "baseline": {"scan": "region", "masked": False},
        "latest": {"scan": "region", "masked": False},
        "current": {"scan": "malformed", "masked": False, "detail": "duplicate-start"},
    }


def test_absent_markers_compare_raw_and_are_reported() -> None:
    # The adopter's copy predates the region: it compares raw against masked sides.
    current = doc("# Agent", "intro v1", "outro")
    latest = doc("# Agent", "intro v2", S, "- `a/**`", E, "outro")
    result = compare_region_file(BASE, latest, current, S, E)
    assert result.absent_markers == ("current",)
    assert not result.bailed
    assert result.current.masked is False and result.latest.masked is True
    assert result.verdict == "conflict"


def test_document_shape() -> None:
    document = compare_region_file(BASE, BASE, BASE, S, E).document()
    assert document["verdict"] == "no-upstream-change"
    normalized = document["normalized"]
    assert isinstance(normalized, dict)
    assert set(normalized) == {"baseline", "latest", "current"}
    assert PLACEHOLDER in normalized["current"]
    json.dumps(document)


def _manifest(regions: object) -> Manifest:
    data: dict[str, object] = {"schema_version": 1, "name": "x", "version": "1.0.0", "files": {}}
    if regions is not None:
        data["regions"] = regions
    return parse_manifest(data, "manifest.json")


def test_plan_regions_without_declarations_is_empty() -> None:
    """Neither release declares a region: nothing is parsed (the engine is not needed)."""
    assert plan_regions(_manifest(None), _manifest([]), disabled=False) == RegionPlan()
    assert plan_regions(None, _manifest(None), disabled=False) == RegionPlan()


@pytest.mark.parametrize("value", [{}, "audit-remit", 0])
def test_plan_regions_reports_a_regions_value_that_is_not_a_list(value: object) -> None:
    """A ``regions`` value that is no list is malformed, not "no region": it is reported."""
    plan = plan_regions(None, _manifest(value), disabled=False)
    assert plan.declarations == [] and len(plan.problems) == 1


def test_plan_regions_names_a_declaration_the_new_release_dropped() -> None:
    """The installed release declared a region the new one no longer does: named dropped."""
    plan = plan_regions(_manifest([decl_raw()]), _manifest([]), disabled=False)
    assert plan.dropped == ["audit-remit"] and plan.by_path == {}
