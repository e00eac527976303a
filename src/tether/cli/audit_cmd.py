"""tether audit: the deterministic half of a review gate for shipped shell.

Subcommands: scope, shell, findings write, digest, clear, gate (docs/audit.md).
Exit codes: 0 done (gate: every member cleared; shell: no error finding), 1 an error or a
withheld clearance, 2 usage, 3 shell found errors or the gate is not cleared.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tether.cli.common import (
    add_jobs,
    add_json,
    add_list,
    add_project_dir,
    add_removed,
    jobs,
    print_json,
    verbose_line,
)
from tether.errors import Exit, UsageError


def _add_root(parser: argparse.ArgumentParser) -> None:
    add_project_dir(
        parser,
        refuse_argument=False,
        help="the checkout's top folder (default: the checkout around the current folder)",
    )
    add_removed(parser, "--root", "use -C DIR")
    parser.add_argument(
        "--profile",
        choices=("native", "gaia"),
        help="where the roster and records live (default: detected)",
    )
    add_json(parser)


def _add_remit(parser: argparse.ArgumentParser, *, machinery: bool = False) -> None:
    parser.add_argument(
        "--remit",
        action="append",
        default=[],
        metavar="GLOB",
        help="ad hoc remit glob (gitignore style; repeatable)",
    )
    parser.add_argument("--remit-file", metavar="FILE", help="file of remit globs, one a line")
    parser.add_argument(
        "--member", metavar="NAME", help="roster member, or the name of the ad hoc remit"
    )
    if machinery:
        parser.add_argument(
            "--machinery",
            action="append",
            default=[],
            metavar="GLOB",
            help="extra gate-machinery glob covered by the digest (repeatable)",
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tether.audit.clearance import PROVENANCES
    from tether.audit.findings import VOCABULARIES

    sub = parser.add_subparsers(dest="audit_command", metavar="SUBCOMMAND", required=True)

    scope = sub.add_parser("scope", help="files a branch changed, filtered by a remit")
    _add_root(scope)
    _add_remit(scope)
    scope.add_argument(
        "--base-ref",
        dest="base_ref",
        metavar="REF",
        help="review against REF (default: the member's last clearance, else the fork point)",
    )
    add_removed(scope, "--base", "use --base-ref REF")

    shell = sub.add_parser("shell", help="shellcheck and tether's lenses over in-scope shell")
    _add_root(shell)
    _add_remit(shell)
    shell.add_argument(
        "paths", nargs="*", metavar="PATH", help="check these files only (relative to the root)"
    )
    shell.add_argument(
        "--base-ref",
        dest="base_ref",
        metavar="REF",
        help="only files changed since the merge base with REF",
    )
    add_removed(shell, "--base", "use --base-ref REF")
    shell.add_argument(
        "--diff-only",
        action="store_true",
        help="errors on lines the diff does not touch become suggestions",
    )
    add_jobs(shell, "files checked")
    shell.add_argument(
        "--vocabulary",
        choices=VOCABULARIES,
        default="tether",
        help="the finding classes to report in: tether's, or GAIA's (default: tether)",
    )
    shell.add_argument(
        "--hooks",
        action="append",
        default=None,
        metavar="GLOB",
        help="hook-contract glob (default: the roster's hooks)",
    )
    shell.add_argument(
        "--posix",
        action="append",
        default=None,
        metavar="GLOB",
        help="POSIX sh glob (default: the roster's posix, else .husky/**)",
    )
    shell.add_argument("--cache-dir", metavar="DIR", help="result cache (default: user cache)")
    shell.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")

    findings = sub.add_parser("findings", help="findings sidecar")
    findings_sub = findings.add_subparsers(dest="findings_command", metavar="ACTION", required=True)
    write = findings_sub.add_parser("write", help="validate and write a member's findings sidecar")
    _add_root(write)
    write.add_argument(
        "--member", required=True, metavar="NAME", help="the roster member the findings are for"
    )
    write.add_argument(
        "--base-ref",
        dest="base_ref",
        required=True,
        metavar="SHA",
        help="the audit key's base commit",
    )
    add_removed(write, "--base", "use --base-ref SHA")
    write.add_argument("--findings", required=True, metavar="FILE", help="JSON array; - for stdin")
    write.add_argument(
        "--review-base", metavar="SHA", help="the commit the member's review started from"
    )
    write.add_argument(
        "--base-reason",
        metavar="TOKEN",
        help="why that commit (trailer, no-anchor, explicit); needed with --review-base",
    )
    write.add_argument("--anchor-tree", metavar="TREE", help="'' on a no-anchor round")
    write.add_argument(
        "--vocabulary",
        choices=VOCABULARIES,
        help="closed class list (default: gaia under the gaia profile, else tether)",
    )
    write.add_argument(
        "--remit",
        action="append",
        default=[],
        metavar="GLOB",
        help="ad hoc remit glob (gitignore style; repeatable)",
    )
    write.add_argument("--remit-file", metavar="FILE", help="file of remit globs, one a line")
    write.add_argument(
        "--machinery",
        action="append",
        default=[],
        metavar="GLOB",
        help="extra gate-machinery glob covered by the digest (repeatable)",
    )

    digest = sub.add_parser("digest", help="content digest of a member's committed files")
    _add_root(digest)
    _add_remit(digest, machinery=True)

    clear = sub.add_parser("clear", help="record a clearance or refusal for the current digest")
    _add_root(clear)
    _add_remit(clear, machinery=True)
    clear.add_argument(
        "--provenance",
        required=True,
        choices=PROVENANCES,
        help="earned: the member cleared the digest; refused: the member refused it",
    )
    clear.add_argument("--scope-digest", metavar="DIGEST", help="the digest the review started on")
    clear.add_argument(
        "--supersede-refusal",
        metavar="REASON",
        help="replace a refusal of the same digest (earned only)",
    )
    clear.add_argument(
        "--acknowledge",
        metavar="REASON",
        help="earn the clearance although error/warning findings stand (recorded with REASON)",
    )

    gate = sub.add_parser("gate", help="refused / cleared / pending per member; 0 when all cleared")
    _add_root(gate)
    _add_remit(gate, machinery=True)
    add_list(
        gate,
        "--members",
        none_when_absent=True,
        metavar="NAME",
        help="members to check (default: the roster's)",
    )
    gate.add_argument(
        "--trailer",
        action="store_true",
        help="print the <member>-Audit commit trailer lines when every member is cleared",
    )


def run(args: argparse.Namespace) -> int:
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "scope": _scope,
        "shell": _shell,
        "findings": _findings_write,
        "digest": _digest,
        "clear": _clear,
        "gate": _gate,
    }
    return handlers[args.audit_command](args)


# --- shared setup ----------------------------------------------------------------------------


def _context(args: argparse.Namespace) -> tuple[Path, Any]:
    from tether.audit.workspace import choose_layout, resolve_root

    root = resolve_root(args.project)
    verbose_line(args, f"project {root}")
    return root, choose_layout(root, args.profile)


def _remit(args: argparse.Namespace, root: Path, layout: Any, *, require_member: bool) -> Any:
    from tether.audit.roster import load_roster, read_remit_file, resolve_remit

    globs = list(args.remit) + (read_remit_file(args.remit_file) if args.remit_file else [])
    return resolve_remit(
        load_roster(root, layout),
        remits=globs,
        member=args.member,
        machinery=getattr(args, "machinery", []),
        require_member=require_member,
    )


# --- scope -----------------------------------------------------------------------------------


def _scope(args: argparse.Namespace) -> int:
    from tether.audit.scope import member_scope
    from tether.report.audit import render_scope, scope_document

    root, layout = _context(args)
    remit = _remit(args, root, layout, require_member=False)
    scope = member_scope(root, layout, remit, args.base_ref)
    if args.json:
        print_json(scope_document(scope, root, remit))
    else:
        print(render_scope(scope))
    return Exit.OK


# --- shell -----------------------------------------------------------------------------------


def _shell(args: argparse.Namespace) -> int:
    from tether.audit.commands import ShellRequest, audit_shell
    from tether.report.audit import render_shell

    workers = jobs(args)
    root, layout = _context(args)
    request = ShellRequest(
        base_ref=args.base_ref,
        diff_only=args.diff_only,
        paths=tuple(args.paths),
        hooks=args.hooks,
        posix=args.posix,
        jobs=workers,
        cache=_cache(args),
        vocabulary=args.vocabulary,
    )
    document = audit_shell(root, layout, _remit(args, root, layout, require_member=False), request)
    print_json(document) if args.json else print(render_shell(document))
    return Exit.FOUND if document["counts"]["error"] else Exit.OK


def _cache(args: argparse.Namespace) -> Any:
    from tether.audit.result_cache import ResultCache, default_cache_dir

    if args.no_cache:
        return ResultCache(None)
    return ResultCache(Path(args.cache_dir) if args.cache_dir else default_cache_dir())


# --- findings write --------------------------------------------------------------------------


def _findings_write(args: argparse.Namespace) -> int:
    from tether.audit import sidecar
    from tether.report.audit import findings_document, render_findings

    root, layout = _context(args)
    sidecar.check_member_name(args.member)
    review = sidecar.review_base(args.review_base, args.base_reason, args.anchor_tree)
    findings = sidecar.parse_findings_text(_read_findings(args.findings))
    result = sidecar.write_sidecar(
        root,
        layout,
        member=args.member,
        base=args.base_ref,
        findings=findings,
        review=review,
        attestation=_attestation(args, root, layout),
    )
    if args.json:
        print_json(findings_document(result, root))
    else:
        print(render_findings(result, root))
    return Exit.OK


def _attestation(args: argparse.Namespace, root: Path, layout: Any) -> Any:
    """The member's digest and dirty paths; no digest when its remit is unknown here."""
    from tether.audit.digest import content_digest
    from tether.audit.roster import load_roster
    from tether.audit.scope import dirty_files
    from tether.audit.sidecar import Attestation
    from tether.errors import TetherError

    vocabulary = args.vocabulary or ("gaia" if layout.profile == "gaia" else "tether")
    known = bool(args.remit or args.remit_file)
    if not known:
        try:
            load_roster(root, layout).member(args.member)
            known = True
        except TetherError:
            known = False  # an ad hoc member named without its globs: nothing to attest
    if not known:
        return Attestation(vocabulary=vocabulary)
    remit = _remit(args, root, layout, require_member=True)
    dirty = dirty_files(root, remit, with_machinery=True)
    return Attestation(content_digest(root, remit).digest, tuple(dirty), vocabulary)


def _read_findings(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--findings {source}: {error}") from None


# --- digest, clear, gate ---------------------------------------------------------------------


def _digest(args: argparse.Namespace) -> int:
    from tether.audit.digest import content_digest
    from tether.report.audit import digest_document

    root, layout = _context(args)
    found = content_digest(root, _remit(args, root, layout, require_member=True))
    if args.json:
        print_json(digest_document(found))
    else:
        print(found.digest)
    return Exit.OK


def _clear(args: argparse.Namespace) -> int:
    from tether.audit.clearance import clear
    from tether.report.audit import clear_document, render_clear

    root, layout = _context(args)
    remit = _remit(args, root, layout, require_member=True)
    result = clear(
        root,
        layout,
        remit,
        provenance=args.provenance,
        scope_digest=args.scope_digest,
        supersede_reason=args.supersede_refusal,
        acknowledge=args.acknowledge,
    )
    if args.json:
        print_json(clear_document(result, root))
    else:
        print(render_clear(result, root))
    return Exit.ERROR if result.withheld else Exit.OK


def _gate(args: argparse.Namespace) -> int:
    from tether.audit.clearance import trailer_lines
    from tether.audit.commands import audit_gate
    from tether.report.audit import gate_document, render_gate

    root, layout = _context(args)
    names = _member_names(args.members)
    ad_hoc = None
    if args.remit or args.remit_file:
        if len(names) != 1 and not args.member:
            raise UsageError("an ad hoc remit gates exactly one member: --members NAME")
        args.member = args.member or names[0]
        ad_hoc = _remit(args, root, layout, require_member=True)
    entries = audit_gate(root, layout, names, args.machinery, ad_hoc)
    trailers = trailer_lines(root, entries) if args.trailer else None
    document = gate_document(entries, root, trailers)
    print_json(document) if args.json else print(render_gate(entries, trailers or ()))
    return Exit.OK if document["cleared"] else Exit.FOUND


def _member_names(given: list[str] | None) -> list[str]:
    if given == []:  # given, but only blanks: never the roster's members by accident
        raise UsageError("--members names no member")
    return given or []
