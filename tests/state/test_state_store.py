"""The state file: what is written reads back the same, one line per file record."""

import json

from tether.model.manifest import FileClass
from tether.state.store import (
    ConflictRecord,
    FileRecord,
    State,
    load_state,
    render_state,
    save_state,
    state_to_json,
)


def sample_state() -> State:
    return State(
        profile="native",
        upstream="kit",
        source="/releases",
        version="2.0.0",
        manifest_sha256="ab" * 32,
        files={
            'docs/"quoted" ü.md': FileRecord(FileClass.SHARED, "cd" * 32, 0o644),
            "bin/run.sh": FileRecord(FileClass.OWNED, "ef" * 32, 0o755),
            'odd}, "name}.md': FileRecord(FileClass.SHARED, "01" * 32, 0o644),
        },
        sentinels=["VERSION"],
        conflicts={"a.txt": ConflictRecord("markers", "a.txt", "2.0.0")},
        installed_at="2026-01-01T00:00:00Z",
    )


def test_state_round_trips_and_keeps_one_line_per_file(tmp_path):
    path = tmp_path / "state.json"
    state = sample_state()
    save_state(path, state)
    text = path.read_text()
    assert json.loads(text) == state_to_json(state)
    assert load_state(path) == state
    file_lines = [line for line in text.splitlines() if '"sha256"' in line]
    assert len(file_lines) == 3
    assert all(json.loads("{" + line.strip().rstrip(",") + "}") for line in file_lines)
    assert text.endswith("}\n")


def test_empty_maps_and_lists_render_inline():
    doc = {"schema_version": 1, "files": {}, "held": [], "conflicts": {"x": {"style": "patch"}}}
    text = render_state(doc)
    assert json.loads(text) == doc
    assert '  "files": {},' in text and '  "held": [],' in text
