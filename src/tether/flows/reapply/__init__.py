"""``tether reapply``: merge saved local patches back into a freshly installed release.

Some installers (GSD's, for one) do not merge: before wiping their files they copy every file
whose sha256 differs from their install manifest into a patches folder, with a
``backup-meta.json`` naming each file and the sha256 it had as installed (its *pristine hash*),
then install the new release over the top. This flow brings those customisations back:

* per saved file, a **baseline** (the bytes the user started from) is looked for in priority
  order, and only bytes whose sha256 equals the recorded pristine hash count: (a) a pristine
  folder, (b) the git history of the target, (c) the baseline release from a source, (d) none
  (``baseline``);
* the saved copy (ours) and the installed file (theirs) are merged on that baseline with the
  text-merge engine; with no baseline nothing is guessed: the file becomes a conflict showing
  both versions, since a backed-up file is customised by definition (``decide``);
* the decisions become ``FileAction``s that the shared crash-safe writer carries out
  (``plan``, ``run``): ``flows.apply.execute_plan`` backs the installed version up, journals
  and writes, and verifies every clean merge on the bytes on disk with the preservation
  verifier; a file that fails is put back to the installed version and the run exits 1 with
  the missing lines.

Crash safety is the writer's: the run holds the target's lock, its journal is
``<journal>.reapply`` beside the profile's own (so ``update`` never reads reapply's runs), and
the installed version of every file is backed up (``<patches>/../tether-reapply-backup/
<run-id>/installed/<path>``) before it is first written. A rerun of an interrupted run
resumes under the same run id, takes the installed bytes from that first backup, and never
writes a second backup over it.

``save_patches`` (``save``) is the installer's backup step done safely: each call writes a
new timestamped folder and never touches an earlier one.
"""

from tether.flows.apply import check_written
from tether.flows.reapply.baseline import BaselineFinder, BaselineOptions, Found
from tether.flows.reapply.decide import Decision, both_versions, decide_saved_file
from tether.flows.reapply.job import ReapplyRequest
from tether.flows.reapply.locate import PATCHES_FOLDER, PRISTINE_FOLDER, candidate_places
from tether.flows.reapply.patches import META_FILE, PatchSet, find_patch_set, load_patch_set
from tether.flows.reapply.report import (
    BY_HAND,
    CONFLICT,
    DROPPED_CHOICES,
    FAILED,
    INCORPORATED,
    MERGED,
    RESOLVED,
    STATUS_BUCKETS,
    FileResult,
    ReapplyReport,
    record_verification_failure,
)
from tether.flows.reapply.resolve import Pending
from tether.flows.reapply.run import reapply
from tether.flows.reapply.save import SaveReport, save_patches
from tether.flows.reapply.target import BACKUP_FOLDER, backup_root
from tether.model.plan import AUTO_CHOICES, CONFLICT_STYLES

__all__ = [
    "AUTO_CHOICES",
    "BACKUP_FOLDER",
    "BY_HAND",
    "CONFLICT",
    "CONFLICT_STYLES",
    "DROPPED_CHOICES",
    "FAILED",
    "INCORPORATED",
    "MERGED",
    "META_FILE",
    "PATCHES_FOLDER",
    "PRISTINE_FOLDER",
    "RESOLVED",
    "STATUS_BUCKETS",
    "BaselineFinder",
    "BaselineOptions",
    "Decision",
    "FileResult",
    "Found",
    "PatchSet",
    "Pending",
    "ReapplyReport",
    "ReapplyRequest",
    "SaveReport",
    "backup_root",
    "both_versions",
    "candidate_places",
    "check_written",
    "decide_saved_file",
    "find_patch_set",
    "load_patch_set",
    "reapply",
    "record_verification_failure",
    "save_patches",
]
