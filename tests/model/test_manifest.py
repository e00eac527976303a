import json

import pytest

from tether.errors import TetherError
from tether.model.manifest import FileClass, ManifestFormat, parse_manifest
from tether.sources.manifest_file import load_manifest


def native(files, **extra):
    return {"schema_version": 1, "name": "kit", "version": "1.0.0", "files": files, **extra}


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("/etc/passwd", "absolute"),
        ("a/../b", "'..'"),
        ("a\x00b", "NUL"),
        ("a\\b", "backslash"),
        ("a//b", "empty segment"),
        ("a/", "empty segment"),
        ("", "empty path"),
    ],
)
def test_rejects_unsafe_paths(path, problem):
    with pytest.raises(TetherError) as err:
        parse_manifest(native({path: "owned"}), "kit/manifest.json")
    assert "kit/manifest.json" in str(err.value)
    assert problem in str(err.value)


def test_rejects_case_and_unicode_collisions():
    with pytest.raises(TetherError, match="collide"):
        parse_manifest(native({"Docs/A.md": "owned", "docs/a.md": "owned"}), "m")
    # NFC vs NFD spelling of the same name
    with pytest.raises(TetherError, match="collide"):
        parse_manifest(native({"caf\u00e9.md": "owned", "cafe\u0301.md": "owned"}), "m")


def test_rejects_unknown_class_naming_the_entry():
    with pytest.raises(TetherError, match=r"'a\.md': unknown class 'mine'"):
        parse_manifest(native({"a.md": "mine"}), "m")


def test_rejects_path_that_is_file_and_folder():
    with pytest.raises(TetherError, match="listed as a file and as a folder"):
        parse_manifest(native({"docs": "owned", "docs/a.md": "shared"}), "m")


def test_keeps_unknown_top_level_keys():
    m = parse_manifest(native({"a.md": "owned"}, future={"x": 1}), "m")
    assert m.extra == {"future": {"x": 1}}
    assert m.files == {"a.md": FileClass.OWNED}


def test_sentinels_are_not_managed():
    m = parse_manifest(
        native({"a.md": "owned", "CHANGELOG.md": "owned"}, sentinels=["CHANGELOG.md"]), "m"
    )
    assert m.managed_paths() == ["a.md"]


def test_gaia_shape():
    data = {
        "version": "2.1.0",
        "generated": "x",
        "files": {"a.md": "wiki-owned", "b.sh": "owned"},
        "regions": [{"id": "r"}],
    }
    m = parse_manifest(data, ".gaia/manifest.json", ManifestFormat.GAIA)
    assert m.version == "2.1.0"
    assert m.files["a.md"].is_shared
    assert m.regions == ({"id": "r"},)
    assert m.extra == {"generated": "x"}


def test_load_errors_name_the_file(tmp_path):
    bad = tmp_path / "manifest.json"
    bad.write_text("{not json")
    with pytest.raises(TetherError, match=str(bad) + ": manifest is not valid JSON"):
        load_manifest(bad)
    with pytest.raises(TetherError, match="manifest not found"):
        load_manifest(tmp_path / "missing.json")
    bad.write_text(json.dumps({"schema_version": 1}))
    with pytest.raises(TetherError, match="missing 'files'"):
        load_manifest(bad)


def test_the_spelling_before_schema_version_is_refused_in_one_line():
    """0.1.0 was never released, so no manifest spelled 'schema' is owed a reading: the
    error names the new key and how to write it."""
    old = {"schema": 1, "name": "kit", "version": "1.0.0", "files": {"a.md": "owned"}}
    with pytest.raises(TetherError) as err:
        parse_manifest(old, "kit/.tether/manifest.json")
    assert str(err.value) == (
        "kit/.tether/manifest.json: 'schema' is spelled 'schema_version': "
        "run 'tether manifest build'"
    )
    assert parse_manifest(native({"a.md": "owned"}), "m").files
