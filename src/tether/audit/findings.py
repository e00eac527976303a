"""The finding record every audit producer emits, and the closed class vocabulary.

Classes from shellcheck (``shellcheck/SC2086``) are an open id space owned by the tool;
every other class tether emits is listed in ``RULES`` and documented in docs/audit.md.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Final

SEVERITIES: Final = ("error", "warning", "suggestion")
VOCABULARIES: Final = ("tether", "gaia")
SHELLCHECK_PREFIX: Final = "shellcheck/"


@dataclass(frozen=True)
class Suppression:
    """An in-file ``# tether-audit: allow RULE -- REASON`` that lowered a finding."""

    line: int  # the directive's line
    reason: str
    severity: str  # the finding's severity before it was lowered to a suggestion

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "reason": self.reason, "severity": self.severity}


@dataclass(frozen=True)
class Finding:
    finding_class: str
    severity: str
    path: str
    line: int
    title: str
    failure_mode: str
    verified_by: str
    suggested_fix: str
    area_tags: tuple[str, ...] = ()
    linked_tests: tuple[str, ...] = ()  # bats suites that pin this script's output
    suppression: Suppression | None = None

    def to_json(self, vocabulary: str = "tether") -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.linked_tests:
            extra["linked_tests"] = list(self.linked_tests)
        if self.suppression is not None:
            extra["suppressed"] = self.suppression.to_json()
        return {
            "finding_class": translate_class(self.finding_class, vocabulary),
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "title": self.title,
            "failure_mode": self.failure_mode,
            "verified_by": self.verified_by,
            "suggested_fix": self.suggested_fix,
            "area_tags": list(self.area_tags or default_area_tags(self.path)),
            **extra,
        }

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.path, self.line, self.finding_class, self.title)


def default_area_tags(path: str) -> tuple[str, ...]:
    """The path's directory, ``.`` for a file at the top of the tree."""
    return (posixpath.dirname(path) or ".",)


@dataclass(frozen=True)
class Rule:
    """One class of the closed vocabulary, with the texts a finding of it carries."""

    finding_class: str
    severity: str
    title: str
    failure_mode: str
    suggested_fix: str
    gaia_class: str = "holistic/unclassified"

    def at(self, path: str, line: int, verified_by: str, *, title: str | None = None) -> Finding:
        return Finding(
            finding_class=self.finding_class,
            severity=self.severity,
            path=path,
            line=max(line, 1),
            title=title or self.title,
            failure_mode=self.failure_mode,
            verified_by=verified_by,
            suggested_fix=self.suggested_fix,
        )


_HOLLOW = "holistic/hollow-assertion"

_RULES: tuple[Rule, ...] = (
    Rule(
        "audit/invalid-suppression",
        "warning",
        "`# tether-audit: allow` directive without a known rule and a reason",
        "the directive suppresses nothing: it names no class tether's lenses report, or it "
        "gives no reason after `--`, and an unexplained suppression is not accepted",
        "write `# tether-audit: allow CLASS -- why this line is right` on the finding's line "
        "or the line above it",
    ),
    Rule(
        "audit/cannot-analyse",
        "error",
        "cannot analyse this file",
        "the analyser could not read or parse the file, so nothing about it was checked",
        "make the file parse (or install the missing analyser) and run the audit again",
    ),
    # bash 3.2 is /bin/bash on macOS; each of these is a syntax or runtime error there.
    Rule(
        "bash32/assoc-array",
        "error",
        "associative array (declare -A) needs bash 4",
        "bash 3.2 rejects `-A` ('invalid option'), so the array is never created and every "
        "later lookup reads an indexed array keyed by the arithmetic value of the string",
        "use two indexed arrays, a case statement, or a newline-separated key=value string",
    ),
    Rule(
        "bash32/nameref",
        "error",
        "nameref (declare -n / local -n) needs bash 4.3",
        "bash 3.2 rejects `-n`, so the variable is a plain string and writes through it are lost",
        "pass the variable name and use `eval` or `printf -v` to assign through it",
    ),
    Rule(
        "bash32/mapfile",
        "error",
        "mapfile/readarray needs bash 4",
        "bash 3.2 has no such builtin: the command is not found and the array stays empty",
        'read lines with `while IFS= read -r line; do arr+=("$line"); done`',
    ),
    Rule(
        "bash32/case-modification",
        "error",
        "case modification (${v^^}, ${v,,}, declare -l/-u) needs bash 4",
        "bash 3.2 reports 'bad substitution' and stops the script, or ignores the attribute",
        "convert case with `tr '[:lower:]' '[:upper:]'` (or the reverse)",
    ),
    Rule(
        "bash32/param-transform",
        "error",
        "parameter transformation (${v@Q}) needs bash 4.4",
        "bash 3.2 reports 'bad substitution' and stops the script",
        "quote with `printf '%q'` instead",
    ),
    Rule(
        "bash32/append-both-redirect",
        "error",
        "`&>>` needs bash 4",
        "bash 3.2 parses `&>>` as a syntax error, so the whole script fails to run",
        "write `>>file 2>&1`",
    ),
    Rule(
        "bash32/pipe-both",
        "error",
        "`|&` needs bash 4",
        "bash 3.2 parses `|&` as a syntax error, so the whole script fails to run",
        "write `2>&1 |`",
    ),
    Rule(
        "bash32/negative-index",
        "error",
        "negative array index needs bash 4.3",
        "bash 3.2 reports 'bad array subscript' instead of reading from the end",
        "index with `${arr[${#arr[@]}-1]}`",
    ),
    Rule(
        "bash32/bashpid",
        "error",
        "$BASHPID needs bash 4",
        "bash 3.2 leaves $BASHPID unset, so it expands to nothing (an error under set -u)",
        "use `$$` when the parent's pid is enough, or `sh -c 'echo $PPID'` inside a subshell",
    ),
    Rule(
        "bash32/wait-n",
        "error",
        "`wait -n` needs bash 4.3",
        "bash 3.2 rejects the option, so the script stops waiting at once and loses the status",
        'wait for each recorded pid in turn with `wait "$pid"`',
    ),
    Rule(
        "bash32/coproc",
        "error",
        "coproc needs bash 4",
        "bash 3.2 runs `coproc` as an unknown command, so the co-process never starts",
        "use a named pipe (mkfifo) or a temporary file",
    ),
    Rule(
        "bash32/test-v",
        "error",
        "`[[ -v name ]]` needs bash 4.2",
        "bash 3.2 reports 'conditional binary operator expected' and the test fails, so the "
        "variable reads as unset whatever its value",
        'test `[ -n "${name+set}" ]` instead',
    ),
    Rule(
        "bash32/shopt",
        "error",
        "shopt option needs bash 4 or later",
        "bash 3.2 rejects the option name ('invalid shell option name'), so `**` stays a "
        "plain `*` (or the setting is silently off) and the script walks fewer files",
        "drop the option: walk folders with `find … -print0 | while IFS= read -r -d '' f`",
    ),
    Rule(
        "bash32/case-fallthrough",
        "error",
        "`;;&` / `;&` case terminators need bash 4",
        "bash 3.2 parses them as a syntax error, so the whole script fails to run",
        "end each arm with `;;` and repeat (or call a function for) the shared commands",
    ),
    Rule(
        "bash32/new-variable",
        "error",
        "$EPOCHSECONDS / $EPOCHREALTIME / $SRANDOM need bash 5",
        "bash 3.2 leaves the variable unset, so it expands to nothing (an error under set -u) "
        "and every time computed from it is wrong",
        "use `date +%s` (and `perl -MTime::HiRes` or python for sub-second times)",
    ),
    Rule(
        "bash32/declare-global",
        "error",
        "`declare -g` needs bash 4.2",
        "bash 3.2 rejects `-g`, so the variable is never set and later reads are empty",
        "assign the global without declare (`name=value`) outside the function's locals",
    ),
    Rule(
        "bash32/printf-time",
        "error",
        "`printf '%(…)T'` needs bash 4.2",
        "bash 3.2 reports an invalid format character, so the timestamp is never printed",
        "use `date +FORMAT`",
    ),
    Rule(
        "bash32/negative-length",
        "error",
        "negative substring length (${v:off:-n}) needs bash 4.2",
        "bash 3.2 reports 'substring expression < 0' and stops, so the trimmed value is "
        "never produced",
        "compute the length: `${v:0:${#v}-1}`, or trim with `${v%?}`",
    ),
    Rule(
        "bash32/named-fd",
        "error",
        "named file descriptor (exec {fd}>…) needs bash 4.1",
        "bash 3.2 reads `{fd}` as a command word, so the redirection never opens the file "
        "and the variable stays empty",
        "pick a fixed descriptor (`exec 3>file`) and close it when done (`exec 3>&-`)",
    ),
    # GNU-only forms of common tools fail, or silently do something else, on macOS and BSD.
    Rule(
        "portability/sed-in-place",
        "warning",
        "`sed -i` without an attached suffix differs between GNU and BSD sed",
        "BSD sed takes the next argument as the backup suffix, so the script is read as a "
        "file name (or GNU sed reads an empty suffix as the script) and the edit fails",
        "write `sed -i.bak … && rm file.bak`, or write to a temporary file and move it back",
    ),
    Rule(
        "portability/date-d",
        "warning",
        "`date -d` is GNU-only",
        "BSD date treats -d as a DST flag (or rejects it), so the date is not parsed",
        "branch on `date --version` (GNU) versus `date -j -f` (BSD), or compute in awk",
    ),
    Rule(
        "portability/grep-perl",
        "warning",
        "`grep -P` is GNU-only",
        "BSD grep rejects -P, so the match never runs and the pipeline reports no match",
        "use `grep -E` with a POSIX pattern, or sed/awk",
    ),
    Rule(
        "portability/readlink-f",
        "warning",
        "`readlink -f` is GNU-only (macOS before 12.3 lacks it)",
        "older BSD readlink rejects -f, so the path comes back empty",
        'resolve with `cd "$(dirname "$p")" && pwd -P`',
    ),
    Rule(
        "portability/stat-format",
        "warning",
        "`stat -c` is GNU-only",
        "BSD stat uses -f for formats and reads -c as an error, so the value is empty",
        "branch on the platform (`stat -f` on BSD) or use `wc -c`/`ls -l` for sizes",
    ),
    Rule(
        "portability/xargs-r",
        "warning",
        "`xargs -r` is GNU-only",
        "BSD xargs rejects -r on older systems, so the pipeline fails",
        'guard the input (`[ -n "$list" ] &&`) and drop -r',
    ),
    Rule(
        "portability/cp-parents",
        "warning",
        "`cp --parents` is GNU-only",
        "BSD cp rejects the option, so nothing is copied",
        'create the directory with `mkdir -p "$(dirname "$dest")"` and copy the file',
    ),
    Rule(
        "portability/find-printf",
        "warning",
        "`find -printf` is GNU-only",
        "BSD find rejects the primary, so the listing is empty",
        "use `-exec stat …` or print paths and post-process them",
    ),
    Rule(
        "portability/head-negative",
        "warning",
        "`head -n -N` (all but the last N lines) is GNU-only",
        "BSD head rejects a negative count, so the output is empty",
        "use `sed '$d'` (one line) or `awk` with a buffer; `tail -n +N` is portable",
    ),
    Rule(
        "portability/gnu-command",
        "warning",
        "command missing on macOS and BSD (`tac`, `timeout`)",
        "the command is not found on a stock macOS, so the step fails with 127",
        "use `tail -r` for tac; for timeout, branch on `command -v timeout gtimeout`",
    ),
    Rule(
        "portability/du-bytes",
        "warning",
        "`du -b` is GNU-only",
        "BSD du rejects -b, so the size is empty",
        "use `wc -c < file` for a file's size, or `du -k` for folders",
    ),
    Rule(
        "portability/sort-version",
        "warning",
        "`sort -V` is missing from older BSD and busybox sort",
        "where sort lacks -V the sort fails and the version list comes back empty",
        "split the version on dots: `sort -t. -k1,1n -k2,2n -k3,3n`",
    ),
    Rule(
        "portability/awk-gnu-function",
        "warning",
        "awk program calls a GNU awk function (gensub, strftime, systime, asort …)",
        "macOS awk (one true awk) has none of them: the call is a fatal 'calling undefined "
        "function' error",
        "use sub/gsub and split, or compute dates with `date` outside awk",
    ),
    # Scripts run from any directory on any machine.
    Rule(
        "paths/machine-path",
        "warning",
        "path into one person's machine (/Users/NAME, /home/NAME)",
        "the path exists only on the author's machine: everywhere else the file is missing "
        "and the step fails or silently acts on nothing",
        'derive the location (`git rev-parse --show-toplevel`, `$HOME`, `"$(dirname "$0")"`)',
    ),
    Rule(
        "paths/absolute-cd",
        "warning",
        "`cd` into a fixed absolute folder",
        "the folder is one machine's layout; elsewhere the cd fails (or, unchecked, the "
        "script runs on in the caller's folder) and every later relative path is wrong",
        'cd into a derived root (`cd "$(git rev-parse --show-toplevel)"`), in a subshell',
    ),
    Rule(
        "paths/caller-cwd",
        "warning",
        "relative path resolved against the caller's working directory",
        "run from another folder (a hook, CI, a sibling script), `source lib/x.sh` reads "
        "a different file or none, so the script fails or runs the wrong code",
        'anchor it: `here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"; . "$here/lib/x.sh"`',
        gaia_class="holistic/ambient-context-resolution",
    ),
    # Failure discipline of scripts that are not hooks.
    Rule(
        "paths/library-cd",
        "warning",
        "`cd` in a sourced library changes the caller's directory",
        "a library runs in its caller's shell: after the function returns, the hook chain or "
        "script goes on in another directory and resolves every relative path there",
        "run the `cd` in a subshell (`( cd dir && … )`), or use absolute paths "
        '(`git -C "$root"`, `"$root/…"`)',
        gaia_class="holistic/ambient-context-resolution",
    ),
    Rule(
        "discipline/no-errexit",
        "suggestion",
        "script without errexit and without explicit status handling",
        "a failed command (a git call, a grep) does not stop the script, so a wrong or empty "
        "result flows on into what the script decides",
        "add `set -euo pipefail` (`set -eu` for sh), or handle each status (`|| exit 1`)",
    ),
    Rule(
        "discipline/no-pipefail",
        "warning",
        "errexit without pipefail ahead of a pipeline",
        "set -e ignores the failure of every pipeline stage but the last, so when the first "
        "command fails (a fetch, a `git` call) the script goes on with empty or partial "
        "output and the gate that reads it decides on nothing",
        "add pipefail (`set -euo pipefail`), or check the first command on its own",
    ),
    Rule(
        "discipline/fail-open-trap",
        "warning",
        "script traps errors into `exit 0` (fails open)",
        "every internal error ends the script with success, so a gate built on it passes "
        "exactly when it could not decide",
        "exit non-zero from the trap (fail closed); failing open is for hooks only",
    ),
    # bats runs every @test with set -e; these shapes slip past it.
    Rule(
        "bats/hollow-assertion",
        "error",
        "assertion cannot fail the test",
        "set -e does not stop the test when this check fails, so the test passes while "
        "the condition it states is false",
        "end the check with `|| return 1` (or `|| fail`), use `run ! cmd`, or make it the "
        "test's last command",
        gaia_class=_HOLLOW,
    ),
    Rule(
        "bats/and-list-assertion",
        "suggestion",
        "`A && B` in a test: a failing A is ignored",
        "set -e ignores a failure on the left of `&&`, so when A is false the test goes on "
        "as if the check held",
        "split it into two checks, or add `|| return 1` when both must hold",
        gaia_class=_HOLLOW,
    ),
    Rule(
        "bats/final-guard-fails",
        "error",
        "final `cond && return 1` fails the passing case",
        "when the condition is false (the case the test expects) the list's status is the "
        "condition's 1, which is the test's status, so the test fails exactly when it should pass",
        "write `! cond` with `run`, or append `|| true`, or end the test with `return 0`",
    ),
    Rule(
        "bats/swallowed-check",
        "error",
        "check swallowed by `|| true` cannot fail the test",
        "the right side of `||` succeeds whenever the check fails, so the list always "
        "succeeds and the test passes while the checked condition is false",
        'drop the `|| true` (or end it with `|| return 1` / `|| fail "why"`)',
        gaia_class=_HOLLOW,
    ),
    Rule(
        "bats/unchecked-run",
        "error",
        "`run` whose status and output are never checked",
        "bats' `run` always succeeds and stores the status in $status: when nothing reads "
        "$status/$output before the next `run` or the end, a failing command passes the test",
        'check the result (`[ "$status" -eq 0 ]`, `assert_success`), or use `run !`/`run -N`',
        gaia_class=_HOLLOW,
    ),
    Rule(
        "bats/condition-only-check",
        "error",
        "check used only as an `if`/`while` condition",
        "a false condition only skips the body; no arm fails the test or checks anything, so "
        "the test passes whatever the checked result is",
        'assert the condition directly, or fail in the other arm (`else fail "…"`)',
        gaia_class=_HOLLOW,
    ),
    Rule(
        "bats/unreachable-code",
        "error",
        "code after an unconditional `return`/`exit` never runs",
        "the test ends at the `return`/`exit`, so every check after it is never executed "
        "and the test's verdict ignores them",
        "remove the early `return`/`exit`, or make it conditional",
    ),
    Rule(
        "bats/always-matches",
        "error",
        "pattern that matches every input",
        "`== *`, `=~ .*`, `=~ ^` (and `grep ''`/`grep '.*'`) hold for any value, so the "
        "check passes whatever the output is",
        'match the expected text (`[ "$output" = expected ]`, or an anchored pattern)',
        gaia_class=_HOLLOW,
    ),
    Rule(
        "bats/unconditional-skip",
        "warning",
        "unconditional `skip`: the test never runs",
        "a `skip` not guarded by a precondition retires the test (every test, in `setup`), "
        "so the behaviour it guards has no check while the suite reports it as skipped",
        'guard it with the missing precondition (`command -v jq >/dev/null || skip "no jq"`) '
        "or delete the test and say why",
    ),
    Rule(
        "bats/ci-skip",
        "warning",
        "`skip` guarded by a condition that holds on every CI run",
        "the guard reads a CI variable (`$CI`, `$GITHUB_ACTIONS` …) that every runner sets, "
        "so the test is skipped exactly where the suite is supposed to enforce it",
        "guard on the precondition the test really needs (`command -v tool || skip`), or fix "
        "what fails on the runner",
    ),
    Rule(
        "bats/dropped-test",
        "warning",
        "a @test the base had was dropped",
        "the test's checks no longer run, so what it guarded has no check left while the "
        "suite stays green",
        "restore the test, or state in the change why its coverage is no longer needed",
    ),
    Rule(
        "bats/removed-assertion",
        "warning",
        "a @test has fewer checks than at the base",
        "a deleted assertion stops guarding what it checked; the test still passes, now over less",
        "restore the check, or state in the change why it is no longer needed",
    ),
    Rule(
        "bats/weakened-assertion",
        "warning",
        "an exact check became a looser match",
        "a substring or pattern match admits outputs the exact comparison rejected, so a "
        "regression in the wording or the status passes",
        'compare exactly again (`[ "$output" = "…" ]`, `assert_output "…"`), or say '
        "why the looser match is what the script guarantees",
        gaia_class=_HOLLOW,
    ),
    Rule(
        "bats/added-skip",
        "warning",
        "a @test that ran at the base now skips",
        "a new skip, guarded or not, retires the test wherever its guard holds, silently",
        "fix what made the test fail, or guard the skip on a genuine missing precondition "
        "and say so in the change",
    ),
    Rule(
        "bats/deleted-suite",
        "warning",
        "a bats suite was deleted",
        "the suite's @test cases no longer run, so the scripts they guarded keep their gate "
        "in name only while the branch's list of shell files reads as nothing to review",
        "restore the suite, or state in the change why its coverage is no longer needed and "
        "acknowledge the finding with that reason",
    ),
    # Declarative files decide what ships, who reviews and what runs (audit/policy.py).
    Rule(
        "policy/unexcluded",
        "warning",
        "an entry was removed from release-exclude",
        "the file it excluded now ships to every adopter, while the diff reads as tidying",
        "restore the entry, or state in the change why the file should ship",
    ),
    Rule(
        "policy/unshipped",
        "warning",
        "a file stops shipping in the release manifest",
        "adopters keep their last copy forever: the release no longer updates it, fixes "
        "included, while the diff reads as tidying",
        "restore the entry, or state in the change why adopters no longer need the file",
    ),
    Rule(
        "policy/ships",
        "suggestion",
        "a file starts shipping in the release manifest",
        "every adopter receives the file on their next update",
        "make sure the file is meant for adopters (no local or test-only content)",
    ),
    Rule(
        "policy/hook-unregistered",
        "warning",
        "a hook registration was removed from the settings",
        "the guard the hook stood for no longer runs on any tool call",
        "restore the registration, or state in the change why the hook is retired",
    ),
    Rule(
        "policy/permission-widened",
        "warning",
        "a permission was widened in the settings",
        "a tool call that asked or was denied now runs without asking",
        "restore the narrower permission, or state in the change why the wider one is safe",
    ),
    Rule(
        "policy/owner-removed",
        "warning",
        "a CODEOWNERS rule or owner was removed",
        "changes to those paths no longer need that owner's review",
        "restore the rule, or state in the change who reviews those paths now",
    ),
    Rule(
        "policy/remit-narrowed",
        "warning",
        "an audit roster member or glob was removed",
        "the member no longer reviews paths it used to, so a change there merges unreviewed",
        "restore the glob, or state in the change which member reviews those paths now",
    ),
    Rule(
        "policy/remit-reaches-copies",
        "warning",
        "a roster glob reaches the framework's generated copies",
        "the copies are rebuilt wholesale from a source another member reviews and pinned "
        "to it by a drift guard: a member reading them reviews nothing new, and its glob "
        "hides that the carve-out is deliberate",
        "narrow the glob so it stops at the copies' folder",
    ),
    Rule(
        "policy/stale-rate",
        "warning",
        "a dated entry is past its date",
        "the computation keeps using a rate its own file says no longer applies",
        "update the rate and its effective_through date",
    ),
    # Hooks read one JSON document on stdin and answer allow or block.
    Rule(
        "hook/stdin-reread",
        "error",
        "hook reads stdin more than once",
        "the first read consumes the JSON document; later reads see an empty stream, so "
        "every field they parse falls back to its default",
        "read stdin once into a variable (`input=$(cat)`) and parse fields from it",
    ),
    Rule(
        "hook/missing-script",
        "error",
        "a registered hook command names a script that is not in the checkout",
        "the agent runner runs the registered command on every matching tool call; with its "
        "script moved, renamed or never committed, the command fails on every call and the "
        "guard it stood for no longer runs",
        "point the `command` in the settings file at the script's new path, or commit the script",
    ),
    Rule(
        "hook/unguarded-field",
        "warning",
        "jq field read without a `// default` fallback",
        "a missing field prints `null`, which the hook then treats as a real value",
        'write the filter as `.field // ""` (or another explicit default)',
    ),
    Rule(
        "hook/interpolated-json",
        "error",
        "JSON built by string interpolation",
        "a value containing a quote, backslash or newline breaks the document or injects "
        "fields into it, so the runner misreads the hook's decision",
        "build the document with `jq -n --arg name \"$value\" '{…: $name}'`",
    ),
    Rule(
        "hook/errexit-exit",
        "error",
        "errexit without a trap: an internal error exits with an arbitrary status",
        "with set -e a missing tool or malformed input ends the hook with that command's "
        "status, which is neither an allow nor a deliberate block",
        "trap ERR (or EXIT) and turn internal errors into a deliberate allow or block",
    ),
    Rule(
        "hook/unguarded-dependency",
        "warning",
        "a tool is used without checking that it is installed",
        "on a machine without the tool (jq, gh, git, node …) the call fails: the hook exits "
        "127 or acts on empty values",
        "check `command -v TOOL >/dev/null` first and decide deliberately what to do without it",
    ),
    Rule(
        "hook/non-block-exit",
        "error",
        "hook exits with a status that is neither 0 (allow) nor 2 (block)",
        'the runner reads any other status (and `exit "$var"`/`exit $?`, whose value is '
        "whatever ran last) as a hook failure rather than a decision",
        "exit 0 to allow or 2 to block, and report the reason on stderr",
    ),
    Rule(
        "hook/status-leak",
        "error",
        "the hook's last command can fail, and its status becomes the hook's",
        "when the last command (a `gh`/`git` call, a `test && …` list) fails, the hook exits "
        "with that status: neither an allow nor a deliberate block, so the runner reports a "
        "broken hook",
        "end the hook with `exit 0` (or guard the call: `gh … || true`)",
    ),
    Rule(
        "hook/unvalidated-jq-pipe",
        "error",
        "jq output piped into a command without validation",
        "the tool input is attacker- or model-controlled JSON; piping its fields into xargs, "
        "a shell, eval or rm runs whatever those fields say",
        "read the values into variables, validate each (a case pattern or `grep -E` anchor), "
        "and pass them as quoted arguments",
    ),
    Rule(
        "hook/decision-json",
        "error",
        "hook decision JSON has an unknown key or an undocumented decision value",
        "the runner ignores an unknown (misspelled) key and an undocumented value, so the "
        "decision the hook means to return (a deny) is silently not made",
        "spell the documented keys (`hookSpecificOutput.permissionDecision`: allow, deny or "
        "ask) and build the document with `jq -n --arg`",
    ),
)

RULES: Final[dict[str, Rule]] = {rule.finding_class: rule for rule in _RULES}


def rule(finding_class: str) -> Rule:
    return RULES[finding_class]


def translate_class(finding_class: str, vocabulary: str) -> str:
    """The class under ``vocabulary``: tether's own, or GAIA's (unclassified when none fits)."""
    if vocabulary == "tether":
        return finding_class
    known = RULES.get(finding_class)
    return known.gaia_class if known else "holistic/unclassified"
