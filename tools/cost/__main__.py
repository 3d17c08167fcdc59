"""`python -m tools.cost`: what a stack's nodes cost, and what a change to it costs.

    python -m tools.cost --stack prod [--base REF] [--format text|markdown|json]
    python -m tools.cost --stack-file path/to/Pulumi.try.yaml [--base REF] ...

Prices the stack's GPU and system node groups from `prices/nebius.yaml` and the stack's
`nebius-dra:priceOverrides` (the same estimate `make plan` prints and the policy
`max-hourly-cost` reads); `--stack-file` prices a stack file outside the stack list, named by
its file name `Pulumi.<stack>.yaml`. With `--base REF` it also prices the stack as it is at the git
revision REF (that revision's `Pulumi.yaml`, `Pulumi.<stack>.yaml` and price table, read with
`git show`, parsed by this checkout's code) and prints the difference per group and in total.
In a pull request's merge commit, `HEAD^1` is the base branch's tip.

Exit status: 0 when the stack could be priced (unpriced groups are listed, not fatal; a base
that cannot be read is reported, not fatal), 2 when this checkout's stack config, its price
table or REF cannot be used.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.config import ConfigError, parse_stack_config
from components.config.errors import shown
from components.config.prices import PRICE_TABLE_FILE, load_price_table, parse_price_table
from components.config.raw import stack_file_raw_config
from components.config.reading import (
    MAX_INPUT_BYTES,
    InputError,
    check_file_flag,
    decode_text,
    markdown_text,
    parse_yaml,
    parsed_arguments,
    printable,
    write_stdout,
)
from components.config.stack_file import PROJECT_DIR, StackFileError, declared_config
from components.model import PriceTable, StackConfig
from components.redaction import redacted, redacted_leaves
from components.values.cost import stack_cost
from tools.cost.render import (
    render_cost_markdown,
    render_cost_text,
    render_diff_markdown,
    render_diff_text,
    with_protected_kept,
)
from tools.plan.minor_upgrade import minor_of
from tools.plan.rollout import Rollout, rollouts_of_config
from tools.plan.stack_source import (
    STACK_FILE_OPTION,
    StackNameError,
    check_stack_name,
    read_stack_source,
    stack_of_file,
)

EXIT_OK, EXIT_UNUSABLE = 0, 2
FORMATS = ("text", "markdown", "json")
PRICE_TABLE = PRICE_TABLE_FILE.relative_to(PROJECT_DIR).as_posix()


class UnusableInputError(Exception):
    """This checkout's config or price table, or the base revision, cannot be used: exit status 2."""


@dataclass
class BaseCost:
    """The stack's cost at the base revision; `document` None with `new_stack` False means it could not be priced."""

    ref: str
    document: dict[str, Any] | None
    note: str | None = None
    new_stack: bool = False
    # The base deploys its GPU groups with Pulumi's protect option (nebius-dra:protect).
    protected: bool = False
    # The base's kubernetesVersion: a move of its minor replaces every group's nodes.
    kubernetes_version: str | None = None

    @property
    def comparable(self) -> bool:
        return self.document is not None or self.new_stack


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.cost", description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--stack", default="dev", help="stack to price: reads Pulumi.<stack>.yaml beside Pulumi.yaml (default dev)"
    )
    which.add_argument(
        STACK_FILE_OPTION,
        type=Path,
        metavar="PATH",
        help="stack file to price instead, anywhere (a variant outside the stack list): named Pulumi.<stack>.yaml; "
        "--base compares it with Pulumi.<stack>.yaml at REF",
    )
    parser.add_argument("--base", metavar="REF", help="git revision to compare with, for example HEAD^1 or origin/main")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    parser.add_argument(
        "--change-only",
        action="store_true",
        help="with --base, print only the change (for a page that already shows the cost, such as the plan)",
    )
    args = parsed_arguments(parser, argv)
    if args.base is not None and not args.base.strip():
        parser.error(
            "--base: got an empty revision; give a git revision such as HEAD^1 or origin/main, or leave --base out"
        )
    if args.change_only and args.base is None:
        parser.error("--change-only needs --base")
    return args


def _config(stack: str, project_dir: Path, table: PriceTable | None, stack_file: Path | None) -> StackConfig:
    read = read_stack_source(stack, stack_file, project_dir)
    prices = load_price_table(project_dir / PRICE_TABLE) if table is None else table
    return parse_stack_config(stack_file_raw_config(read), stack, price_table=prices)


@dataclass(frozen=True)
class Head:
    """This checkout's stack: its cost, each group's roll-out (what a replacement's surge costs) and its version."""

    document: dict[str, Any]
    rollouts: dict[str, Rollout]
    kubernetes_version: str


def head_of(stack: str, project_dir: Path, stack_file: Path | None = None) -> Head:
    """`stack` as configured in `project_dir` (or in `stack_file`), priced from `project_dir`'s own table."""
    config = _config(stack, project_dir, None, stack_file)
    return Head(stack_cost(config).as_document(), rollouts_of_config(config), config.cluster.kubernetes_version)


def surge_costs(head: Head) -> dict[str, str]:
    """By group name, what the surge nodes of a roll-out of it cost at this change's price (Rollout.surge_cost)."""
    prices = {str(g.get("name")): g.get("usdPerNodeHour") for g in head.document.get("groups") or []}
    return {
        name: rollout.surge_cost(None if prices.get(name) is None else float(prices[name]))
        for name, rollout in head.rollouts.items()
    }


def minor_move(base: BaseCost, head: Head) -> str | None:
    """`kubernetesVersion A -> B` when the change moves the cluster's minor (every group's nodes are replaced)."""
    before, after = minor_of(base.kubernetes_version), minor_of(head.kubernetes_version)
    if before is None or after is None or before == after:
        return None
    return f"kubernetesVersion {base.kubernetes_version} -> {head.kubernetes_version}"


def _git(project_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(project_dir), *args], capture_output=True, text=True, timeout=60)


def _show(project_dir: Path, ref: str, path: str) -> str | None:
    """The file at `path` (relative to the project) in revision `ref`, or None when it has no such file.

    Its size is asked first, so that a file past the input limit is refused before git prints it.
    """
    size = _git(project_dir, "cat-file", "-s", f"{ref}:./{path}")
    if size.returncode != 0:
        return None
    if not size.stdout.strip().isdigit() or int(size.stdout) > MAX_INPUT_BYTES:
        raise InputError(
            f"{ref}:{path}: larger than {MAX_INPUT_BYTES >> 20} MiB, the limit on one input (MAX_INPUT_BYTES)"
        )
    shown = subprocess.run(["git", "-C", str(project_dir), "show", f"{ref}:./{path}"], capture_output=True, timeout=60)
    if shown.returncode != 0:
        raise UnusableInputError(
            f"git show {ref}:./{path} failed: {printable(shown.stderr.decode(errors='replace').strip())}"
        )
    return decode_text(shown.stdout, f"{ref}:{path}")


def _with_new_declarations(base_project: str, project_dir: Path, label: str) -> str:
    """The base's Pulumi.yaml plus the keys this checkout declares and it does not, with their defaults.

    A key added by the change reads as its default in the base, which is what the base program did without it.
    """
    document = parse_yaml(base_project, label, StackFileError)
    declared = document.get("config", {}) if isinstance(document, dict) else None
    if not isinstance(declared, dict):
        raise StackFileError(f"{label}: expected a map with a config: map of declared keys, got {shown(document)}")
    for key, spec in declared_config(project_dir / "Pulumi.yaml").items():
        declared.setdefault(key, spec)
    return yaml.safe_dump(document, sort_keys=False)


def base_cost(stack: str, ref: str, project_dir: Path = PROJECT_DIR) -> BaseCost:
    """The stack's cost at revision `ref`, read with git and parsed by this checkout's code."""
    if _git(project_dir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
        raise UnusableInputError(
            f"--base {shown(ref)} is not a git revision of this repository (or its history is not fetched)"
        )
    try:
        project = _show(project_dir, ref, "Pulumi.yaml")
        stack_file = _show(project_dir, ref, f"Pulumi.{stack}.yaml")
        table_text = _show(project_dir, ref, PRICE_TABLE)
    except InputError as error:
        return BaseCost(ref, None, f"the base {ref} cannot be read: {error}")
    if project is None or stack_file is None:
        return BaseCost(ref, None, f"{ref} has no stack {stack}: the whole cost is new", new_stack=True)
    note = (
        None if table_text is not None else f"{ref} has no {PRICE_TABLE}; its config is priced with this change's table"
    )
    with tempfile.TemporaryDirectory(prefix="nebius-dra-cost-") as directory:
        folder = Path(directory)
        try:
            (folder / "Pulumi.yaml").write_text(_with_new_declarations(project, project_dir, f"{ref}:Pulumi.yaml"))
            (folder / f"Pulumi.{stack}.yaml").write_text(stack_file)
            table = (
                load_price_table(project_dir / PRICE_TABLE)
                if table_text is None
                else parse_price_table(table_text, f"{ref}:{PRICE_TABLE}")
            )
            config = _config(stack, folder, table, None)
        except ConfigError as error:
            return BaseCost(ref, None, f"the base {ref} cannot be priced by this checkout's code: {error}")
    return BaseCost(
        ref,
        stack_cost(config).as_document(),
        note,
        protected=config.protect,
        kubernetes_version=config.cluster.kubernetes_version,
    )


def render(stack: str, current: Head, base: BaseCost | None, output: str, change_only: bool = False) -> str:
    head = current.document
    replaced_by = None if base is None else minor_move(base, current)
    if output == "json":
        document = {
            "stack": stack,
            "cost": head,
            "base": None if base is None else {"ref": base.ref, "cost": base.document, "note": base.note},
        }
        # Redacted leaf by leaf before it is encoded: a redaction of the encoded text could cut a JSON escape in two.
        return json.dumps(redacted_leaves(document), indent=2, sort_keys=True) + "\n"
    label = f"base {base.ref}" if base is not None else ""
    after, kept = with_protected_kept(base.document, head, base.protected) if base is not None else (head, [])
    if output == "markdown":
        lines = [] if change_only else [f"### Cost of stack `{stack}`", "", *render_cost_markdown(head), ""]
        if base is not None:
            lines += [f"#### What this change costs to `{stack}` ({markdown_text(label)})", ""]
            # The note can quote the base revision's files: escaped, on one line, so it stays one quote.
            lines += [f"> {markdown_text(base.note)}", ""] if base.note else []
            if base.comparable:
                lines += render_diff_markdown(
                    base.document, after, markdown_text(label), surge_costs(current), replaced_by
                )
                lines += ["", *(f"- {markdown_text(note)}" for note in kept)] if kept else []
        return "\n".join(lines) + "\n"
    lines = [] if change_only else [f"Cost of stack {stack}", "", *render_cost_text(head), ""]
    if base is not None:
        lines += [f"note: {printable(base.note, lines=True)}"] if base.note else []
        if base.comparable:
            lines += render_diff_text(base.document, after, printable(label), surge_costs(current), replaced_by)
            lines += [f"  note: {note}" for note in kept]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.stack_file is not None:
            check_file_flag(args.stack_file, STACK_FILE_OPTION, must_exist=True)
        stack = stack_of_file(args.stack_file) if args.stack_file else check_stack_name(args.stack)
        head = head_of(stack, PROJECT_DIR, stack_file=args.stack_file)
        base = base_cost(stack, args.base) if args.base is not None else None
    except (
        StackNameError,
        ConfigError,
        UnusableInputError,
        InputError,
        OSError,
        subprocess.SubprocessError,
    ) as unusable:
        print(f"python -m tools.cost: {printable(redacted(str(unusable)), lines=True)}", file=sys.stderr)
        return EXIT_UNUSABLE
    rendered = render(stack, head, base, args.format, args.change_only)
    write_stdout(rendered if args.format == "json" else redacted(rendered))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
