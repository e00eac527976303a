"""The closed class vocabularies a findings sidecar may carry.

``tether``: the classes in ``findings.RULES`` plus shellcheck's open ``shellcheck/SC<code>``
space. ``gaia``: GAIA's holistic list, read from the checkout's own schema
(``.gaia/cli/src/schemas/finding-class.ts``) when it is there, so the list is never
written twice; tether's copy below is used only when the checkout has none. A class
outside the vocabulary is recorded as ``holistic/unclassified``, never passed through,
with the class it came in as kept under ``original_class``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

from tether.audit.findings import RULES, SHELLCHECK_PREFIX
from tether.fsio import read_bytes

UNCLASSIFIED: Final = "holistic/unclassified"
GAIA_SCHEMA: Final = ".gaia/cli/src/schemas/finding-class.ts"
GAIA_CLASSES: Final = (
    "holistic/hollow-assertion",
    "holistic/uncoupled-restatement",
    "holistic/stale-figure",
    "holistic/unarmed-guard",
    "holistic/fail-open-discovery",
    "holistic/partial-cause-reporting",
    "holistic/dangling-reference",
    "holistic/drifting-duplicate",
    "holistic/ambient-context-resolution",
    "holistic/shared-state-collision",
    "holistic/unbounded-invocation",
    "holistic/overclaimed-guarantee",
    "holistic/incomplete-enumeration",
    "holistic/repeated-round-trip",
    "holistic/swallowed-error",
    "holistic/secret-exposure",
    UNCLASSIFIED,
)
_HOLISTIC: Final = re.compile(r"""["'](holistic/[a-z0-9-]+)["']""")


def gaia_classes(root: Path) -> frozenset[str]:
    """GAIA's holistic classes: the checkout's schema when present, else tether's copy."""
    try:
        text = read_bytes(root / GAIA_SCHEMA).decode("utf-8", "replace")
    except OSError:
        return frozenset(GAIA_CLASSES)
    found = set(_HOLISTIC.findall(text))
    return frozenset(found | {UNCLASSIFIED}) if found else frozenset(GAIA_CLASSES)


def known(finding_class: str, vocabulary: str, root: Path) -> bool:
    if vocabulary == "gaia":
        return finding_class in gaia_classes(root)
    return (
        finding_class in RULES
        or finding_class == UNCLASSIFIED
        or (finding_class.startswith(SHELLCHECK_PREFIX) and len(finding_class) > 11)
    )


def classify_findings(
    findings: list[dict[str, Any]], vocabulary: str, root: Path
) -> list[dict[str, Any]]:
    """The findings with every class outside the vocabulary recorded as unclassified."""
    out = []
    for entry in findings:
        if known(entry["finding_class"], vocabulary, root):
            out.append(entry)
        else:
            out.append(
                {**entry, "finding_class": UNCLASSIFIED, "original_class": entry["finding_class"]}
            )
    return out
