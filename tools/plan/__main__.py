"""`make plan`: what `pulumi up` would do to a stack, without a cloud account or the Pulumi CLI.

    python -m tools.plan --stack dev [--format text|markdown|json] [--out build/plan]
                         [--policy-config policies/policy-config.json]
                         [--baseline main-plan.json | --base REF | --no-base]
                         [--graph]
    python -m tools.plan --stack-file path/to/Pulumi.try.yaml ...

Runs the real program with the stack's real config under the SDK's mock engine, then
prints what the change does to running nodes, the policy verdicts, the cost, the roll-outs,
the critical path of a first `pulumi up`, the resource tree with key settings and, with
`--graph` (always, folded, in markdown), the dependency graph (Mermaid), and writes every Kubernetes object
and Helm values file under `<out>/<stack>/`. `--stack-file` plans a stack file that is not in
the stack list (a variant, anywhere on disk), named by its file name `Pulumi.<stack>.yaml`.
`--policy-config` takes the same JSON document
as `pulumi preview --policy-pack-config`. `--baseline` takes the JSON plan of the same stack made
earlier (for example on the main branch), `--base REF` makes it from the revision REF's own
code and config (`tools/plan/base_plan.py`); without either, a plan in a git checkout compares with
the last commit's plan (`--no-base` turns it off). Against the baseline the plan says what each
change does, as the table of consequences (policies/dra_guardrails/consequences.py) has it: the
nodes it replaces, with batches and duration, what reaches only new nodes, Helm upgrades, claim
templates replaced; a kubernetesVersion move that skips or lowers a minor is refused, and so is a
move of the DRA driver back from 0.4.x to 25.x.

Exit status: 0 when `pulumi up` could proceed, 1 when a mandatory policy is violated, `pulumi up` would fail
deleting a protected node group, or no policy ran (--policy-config disabled them all),
2 when the program itself refuses the config (the message names the key), the DRA driver moves
back from 0.4.x to 25.x or kubernetesVersion skips or lowers a minor against the baseline (only the
refusal is printed, on stderr, naming the key, the move and the allowed path, and no file is written), or the stack
name, the stack file or the policy config cannot be used (an unknown policy or setting is
refused, not ignored), or the output directory is not safe to write: the plan never writes
or deletes through a symbolic link in `<out>/<stack>/`.
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    # A plan is one run that exits: no cyclic collection, from the first import on, walks the validation models and
    # pending registrations that stay live to the end (components/cyclic_gc.py has the measurements).
    gc.disable()

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from components.config.reading import (
    DuplicateHandler,
    InputError,
    check_file_flag,
    check_output_flag,
    load_json,
    parse_json,
    parsed_arguments,
    printable,
    write_stdout,
)
from components.redaction import redacted
from components.shown import quotable, shape, shown
from policies.dra_guardrails import PolicyConfigError
from tools.plan.base_plan import (
    BasePlanFailedError,
    NoBaselineError,
    UnknownRevisionError,
    base_plan,
    default_base,
)
from tools.plan.baseline import BaselineError
from tools.plan.model import DEFAULT_OUT, Plan, build_plan
from tools.plan.report import RENDERERS, render_error, render_error_markdown
from tools.plan.stack_source import STACK_FILE_OPTION, StackNameError, check_stack_name, stack_of_file

EXIT_OK, EXIT_POLICY, EXIT_PROGRAM = 0, 1, 2
NO_FILES = "none"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.plan", description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--stack",
        default="dev",
        help="stack to plan: reads Pulumi.<stack>.yaml beside Pulumi.yaml (default dev); letters, digits, '-', '_' "
        "and '.' only",
    )
    which.add_argument(
        STACK_FILE_OPTION,
        type=Path,
        metavar="PATH",
        help="stack file to plan instead, anywhere (a variant outside the stack list): named Pulumi.<stack>.yaml, "
        "read against this checkout's Pulumi.yaml",
    )
    parser.add_argument("--format", choices=sorted(RENDERERS), default="text", help="output format (default text)")
    parser.add_argument(
        "--out",
        default=str(DEFAULT_OUT),
        help=f"where the YAML files go, per stack; '{NO_FILES}' writes none (default {DEFAULT_OUT})",
    )
    parser.add_argument(
        "--policy-config", type=Path, help="policy pack config, as for pulumi preview --policy-pack-config"
    )
    against = parser.add_mutually_exclusive_group()
    against.add_argument(
        "--baseline",
        type=Path,
        help="JSON plan of the same stack to compare with (--format json of the base branch): names the node "
        "groups whose nodes this change recreates",
    )
    against.add_argument(
        "--base",
        metavar="REF",
        help="git revision whose own plan of the stack is the baseline (for example HEAD^1, a PR's base): made "
        "from its files with git archive; when it has none, the plan says why. Default in a git checkout: HEAD, "
        "the last commit. It RUNS THAT REVISION'S CODE (with only PATH, HOME, the locale, TMPDIR and VIRTUAL_ENV of "
        "the environment): give only revisions you trust, a fork's branch is code from outside",
    )
    against.add_argument(
        "--no-base",
        action="store_true",
        help="compare with nothing: without it a plan in a git checkout compares with the plan of the last commit",
    )
    parser.add_argument(
        "--graph",
        action="store_true",
        help="add the dependency graph (Mermaid) to the text plan; the markdown plan always has it, folded",
    )
    return parsed_arguments(parser, argv)


def read_option(path: Path | None, option: str, on_duplicate: DuplicateHandler | None = None) -> Any:
    """The JSON document an option names, read within the input limits; a given file is never ignored,
    so `null` in it is refused rather than read as "no such option"."""
    if path is None:
        return None
    named = f"{option} {shown(str(path))}"
    document = load_json(path, named, on_duplicate=on_duplicate)
    if document is None:
        raise InputError(f"{named}: the document is null; give the JSON object it takes, or leave {option} out")
    return document


def _base(stack: str, ref: str | None) -> tuple[Any, str]:
    """The baseline of --base REF, or by default the last commit's plan; and how the plan names it."""
    if ref is not None:
        return parse_json(base_plan(stack, ref), f"the plan at {shown(ref)}"), (
            f"the plan of {shown(ref)} made by its own code (--base)"
        )
    commit = default_base()
    return (
        parse_json(base_plan(stack, commit), f"the plan at {commit[:12]}"),
        f"the plan of the last commit {commit[:12]} (HEAD) made by its own code: the default in a git checkout; "
        "--base REF names another revision, --no-base turns it off",
    )


def warn_policy_config_duplicate(message: str) -> None:
    """A key given twice in the policy config is kept as `pulumi preview --policy-pack-config` keeps it: Go's
    encoding/json keeps the last value (pkg/resource/analyzer/config.go, parsePolicyPackConfig). The plan
    follows the CLI, so that it judges what a preview would, and says so rather than drop the first silently."""
    print(
        f"python -m tools.plan: warning: {message}; the plan keeps the last value, "
        "as `pulumi preview --policy-pack-config` does (Go's encoding/json)",
        file=sys.stderr,
    )


def _texts(value: Any) -> Iterator[str]:
    """Every text of a JSON document: its keys and its string leaves."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def policy_config_refusal(message: str, document: Any) -> str:
    """The pack's refusal of a policy config, each text of the document that a message may not quote (a key or value
    with a credential's shape) replaced as `shown` shows it. The pack cannot import components/ (the Pulumi CLI runs
    it alone), so it quotes what it refuses as the document spells it (JSON, or Python's repr of a list), and the
    plan re-quotes it here; the longest text first, so a text inside another is not cut out of it."""
    for text in sorted({text for text in _texts(document) if quotable(text) != text}, key=len, reverse=True):
        for quoted in (json.dumps(text), repr(text)):
            message = message.replace(quoted, shown(text))
        message = message.replace(text, shape(text))
    return message


def exit_status(plan: Plan) -> int:
    """2 for a config the program or the baseline refuses (bad input, the project's rule), 1 for a mandatory
    policy, a protected group `pulumi up` cannot delete or a plan in which no policy ran, 0 when `pulumi up` could
    go ahead."""
    if plan.error is not None or plan.refusals:
        return EXIT_PROGRAM
    return EXIT_POLICY if plan.blocked else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.out:
        # Path("") is the current folder: the plan's files would land in whatever folder it runs in.
        return _refused(f"--out: empty; give a folder for the plan's files, or '{NO_FILES}' to write none")
    out = None if args.out == NO_FILES else Path(args.out)
    policy_config = None
    try:
        for flag, path in (("--policy-config", args.policy_config), ("--baseline", args.baseline)):
            if path is not None:
                check_file_flag(path, flag, must_exist=True)
        if args.stack_file is not None:
            check_file_flag(args.stack_file, STACK_FILE_OPTION, must_exist=True)
        if out is not None:
            check_output_flag(out, "--out", directory=True)
        stack = stack_of_file(args.stack_file) if args.stack_file else check_stack_name(args.stack)
        policy_config = read_option(args.policy_config, "--policy-config", warn_policy_config_duplicate)
        baseline, no_baseline, baseline_from = read_option(args.baseline, "--baseline"), None, None
        if args.baseline is not None:
            baseline_from = f"the baseline {shown(str(args.baseline))} (--baseline)"
        elif not args.no_base:
            try:
                baseline, baseline_from = _base(stack, args.base)
            except BasePlanFailedError as failed:
                if args.base is not None:
                    # Asked for: comparing with nothing would pass a CI job's check that it never ran.
                    return _refused(
                        f"--base {shown(args.base)}: {failed}; the comparison asked for cannot be made (fix the "
                        "base, give --baseline PLAN.json, or --no-base to compare with nothing)"
                    )
                no_baseline = str(failed)
            except NoBaselineError as none:
                no_baseline = str(none)
        plan = build_plan(stack, out=out, policy_config=policy_config, baseline=baseline, stack_file=args.stack_file)
        plan.no_baseline, plan.baseline_from = no_baseline, baseline_from
    except (StackNameError, UnknownRevisionError) as invalid:
        return _refused(str(invalid))
    except (OSError, InputError, subprocess.SubprocessError) as unusable:
        return _refused(str(unusable))
    except PolicyConfigError as invalid:
        return _refused(f"invalid policy config: {policy_config_refusal(str(invalid), policy_config)}")
    except BaselineError as invalid:
        return _refused(f"{shown(str(args.baseline)) if args.baseline else shown(args.base)}: {invalid}")
    if plan.error is not None and args.format != "json":
        render = render_error_markdown if args.format == "markdown" else render_error
        sys.stderr.write(printable(redacted(render(plan)), lines=True))
    elif not plan.refusals or args.format == "json":
        # A refused config prints only its refusal (below), as every other exit-2 refusal does; JSON keeps its document,
        # as it does for a program error.
        rendered = RENDERERS[args.format](plan, graph=args.graph)
        # JSON is redacted leaf by leaf before it is encoded (`render_json`); text and markdown as a whole.
        write_stdout(rendered if args.format == "json" else redacted(rendered))
    for refusal in plan.refusals:
        print(f"python -m tools.plan: {printable(redacted(refusal), lines=True)}", file=sys.stderr)
    return exit_status(plan)


def _refused(message: str) -> int:
    print(f"python -m tools.plan: {printable(redacted(message), lines=True)}", file=sys.stderr)
    return EXIT_PROGRAM


if __name__ == "__main__":
    status = main()
    # CPython collects every generation at exit, enabled or not (finalize_modules' _PyGC_CollectNoFail), and with
    # sys.modules cleared it walks and frees the whole heap: 0.23 s of dev's 1.18 s plan (median of 11 alternating
    # processes each, 2026-12-04). Frozen, the heap is left to the process's end; files and stdout are closed or
    # flushed before.
    gc.freeze()
    sys.exit(status)
