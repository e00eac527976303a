"""One name per concept in the JSON documents tether defines (docs/cli.md, "One name per
concept").

``BANNED`` holds every synonym the documents once used for a concept that has one name now,
with the name to use instead. The test below reads every schema under ``schemas/``;
``tests/architecture/test_json_schemas.py`` applies the same list to the documents real
runs print. A document whose shape a specification fixes keeps that shape and is not
checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
DOCS_CLI = Path(__file__).resolve().parents[2] / "docs" / "cli.md"

# banned key: the one name for its concept
BANNED: dict[str, str] = {
    "exit": "exit_code",
    "installed": "installed_version",
    "latest": "latest_version",
    "from": "from_version",
    "to": "to_version",
    "state": "status",
    "result": "status",
    "outcome": "status",
    "path_missing": "skipped_path_missing",
    "root": "project_dir",
    "project": "project_dir",
    "dir": "project_dir",
    "folder": "project_dir",
    "worktree": "worktree_dir",
    "schema": "schema_version",
}
# Documents whose shape a specification fixes (GAIA's merge report and region oracle).
SPEC_FIXED = {"merge-fields", "region-compare"}
# A banned word that names another concept in one place: (schema, key) and why.
OTHER_CONCEPT: dict[tuple[str, str], str] = {
    ("lifecycle", "exit"): "a migration's declared exit contract ({ok, conflict, error}: lists "
    "of codes, written by a publisher), not the code a run ended with",
}
# Objects whose keys are data (paths, ids, names), not field names: (schema, key path).
DATA_KEYED = {
    ("deps-scan", ("registries",)),
    ("deps-plan", ("registries",)),
    ("update-report", ("files",)),  # refresh: each file's state, by path
    ("campaign", ("counts",)),  # by status name (up-to-date)
    ("campaign", ("repositories", "buckets")),  # by bucket name
}


def keys_of(
    value: Any, schema_name: str, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every field name of a document (with the path to it), outside data-keyed objects."""
    if isinstance(value, dict):
        data_keyed = (schema_name, path) in DATA_KEYED
        for key, item in value.items():
            if not data_keyed:
                yield path, key
            yield from keys_of(item, schema_name, (*path, key))
    elif isinstance(value, list):
        for item in value:
            yield from keys_of(item, schema_name, path)


def schema_keys(
    schema: Any, schema_name: str, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every property name a schema declares (with the document path to it)."""
    if isinstance(schema, dict):
        data_keyed = (schema_name, path) in DATA_KEYED
        for key, sub in schema.get("properties", {}).items():
            if not data_keyed:
                yield path, key
            yield from schema_keys(sub, schema_name, (*path, key))
        for word, sub in schema.items():
            if word != "properties":
                yield from schema_keys(sub, schema_name, path)
    elif isinstance(schema, list):
        for sub in schema:
            yield from schema_keys(sub, schema_name, path)


def banned_in(
    schema_name: str,
    found: Callable[[Any, str], Iterator[tuple[tuple[str, ...], str]]],
    value: Any,
) -> list[str]:
    """Each banned key of a document or schema as ``path/key -> the name to use``."""
    if schema_name in SPEC_FIXED:
        return []
    return sorted(
        {
            f"{'/'.join((*path, key))} -> {BANNED[key]}"
            for path, key in found(value, schema_name)
            if key in BANNED and (schema_name, key) not in OTHER_CONCEPT
        }
    )


def banned_keys(document: Any, schema_name: str) -> list[str]:
    """The banned keys of a document a real run printed
    (tests/architecture/test_json_schemas.py)."""
    return banned_in(schema_name, keys_of, document)


def test_no_schema_uses_a_banned_synonym() -> None:
    found = {
        path.stem: banned_in(path.stem, schema_keys, json.loads(path.read_text()))
        for path in sorted(SCHEMAS.glob("*.json"))
    }
    assert {name: keys for name, keys in found.items() if keys} == {}


def test_the_walk_finds_a_banned_key_at_any_depth() -> None:
    schema = {
        "properties": {
            "projects": {"items": {"properties": {"exit": {"type": "integer"}}}},
            "files": {"properties": {"exit": {}}},
        }
    }
    assert banned_in("status", schema_keys, schema) == [
        "files/exit -> exit_code",
        "projects/exit -> exit_code",
    ]
    assert banned_in("update-report", schema_keys, schema) == ["projects/exit -> exit_code"]
    assert banned_in("merge-fields", schema_keys, schema) == []
    document = {"projects": [{"name": "a", "exit": 1}], "files": {"exit": "unchanged"}}
    assert banned_keys(document, "update-report") == ["projects/exit -> exit_code"]


def test_docs_name_every_banned_synonym_and_its_replacement() -> None:
    """docs/cli.md's table of names is this list, row for row."""
    text = DOCS_CLI.read_text()
    section = text.split("### One name per concept", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)` \| (.+?) \|", section, re.MULTILINE)
    documented = {
        banned.strip("` "): use
        for use, banned_list in rows
        for banned in banned_list.split(",")
        if banned.strip("` ")
    }
    assert documented == BANNED


def _keys_anywhere(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys_anywhere(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys_anywhere(item)


def test_records_tether_writes_spell_schema_version(tmp_path: Path) -> None:
    """The records tether keeps (state, stat cache, pristine-cache index, a snapshot) and
    the manifest ``manifest build`` writes say ``schema_version``, never ``schema``."""
    from builders import call, git, make_release, write_files

    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"a.txt": "a\nb\n"})
    make_release(shelf, "1.1.0", {"a.txt": "a\nB\n"})
    project = tmp_path / "p"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "a.txt").write_text("a\nmine\n")
    assert call("status", "-C", str(project)) == 0  # fills the stat cache
    assert call("update", "--yes", "-C", str(project)) == 4
    assert call("snapshot", "-C", str(project), "--out", str(tmp_path / "snap.json")) == 0
    upstream = tmp_path / "upstream"
    write_files(upstream, {"tether.toml": 'name = "kit"\nversion = "1.0.0"\n', "x.txt": "x\n"})
    git(upstream, "init", "-q", "-b", "main")
    assert call("manifest", "build", "-C", str(upstream)) == 0
    records = [
        *(project / ".tether").rglob("*.json"),
        *(project / ".tether").rglob("*.idx"),
        tmp_path / "snap.json",
        upstream / ".tether" / "manifest.json",
    ]
    versioned = {path.name for path in records if path.suffix in (".json", ".idx")}
    assert {"state.json", "stat.json", "snap.json", "manifest.json"} <= versioned
    for path in records:
        keys = set(_keys_anywhere(json.loads(path.read_text())))
        assert "schema" not in keys, path
        if path.name in ("state.json", "stat.json", "snap.json", "manifest.json"):
            assert isinstance(json.loads(path.read_text())["schema_version"], int), path
