from __future__ import annotations

import argparse

from tether.cli.common import add_status_arguments, list_limit, print_json
from tether.cli.status_cmd import status_of
from tether.cli.update_cmd import add_template_arguments
from tether.errors import Exit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_status_arguments(parser, "also fail when a newer release exists")
    add_template_arguments(parser, data=False)


def run(args: argparse.Namespace) -> int:
    from tether.report.human import render_check

    report = status_of(args)
    reasons = report.check_reasons()
    if args.json:
        print_json({"ok": not reasons, "reasons": reasons, **report.to_json()})
    else:
        print(render_check(report, reasons, list_limit(args)))
    return Exit.FOUND if reasons else Exit.OK
