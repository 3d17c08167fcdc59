"""Which stack file an offline tool reads: `Pulumi.<stack>.yaml` beside `Pulumi.yaml`, or one given by path.

`--stack-file PATH` plans a variant (a scratch `Pulumi.try.yaml`, a file in another folder)
without adding it to the repository's stack list, so the tests, the workflows' matrices and
`stack_names` never see it. The file is read by the same reader as a listed stack
(`components.config.stack_file.read_stack_file`), against this checkout's `Pulumi.yaml`: the
stack name comes from the file name, as `pulumi stack init` would have named it.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from components.config import ConfigError, parse_stack_config
from components.config.raw import stack_file_raw_config
from components.config.stack_file import (
    PROJECT_DIR,
    StackFileConfig,
    StackFileError,
    read_stack_file,
)
from components.shown import shown

# Pulumi's own rule (`tokens.IsName` and the 100-character limit that `pulumi stack init` enforces):
# ASCII letters, digits, '-', '_' and '.'. The name becomes `Pulumi.<stack>.yaml` and `<out>/<stack>/`,
# so '.' and '..', which Pulumi would accept, are refused too: as a folder they mean "here" and "up".
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
STACK_NAME_RULE = "1 to 100 ASCII letters, digits, '-', '_' or '.', and not '.' or '..'"


class StackNameError(ValueError):
    """A `--stack` value that is not a Pulumi stack name; it is never used as a path."""


def check_stack_name(stack: str) -> str:
    """`stack`, when it is a stack name Pulumi accepts and a safe single path component; else StackNameError."""
    if not isinstance(stack, str) or not STACK_NAME.fullmatch(stack) or stack in (".", ".."):
        qualified = "; give the bare stack name, not org/project/stack" if "/" in str(stack) else ""
        raise StackNameError(f"invalid stack name {shown(stack)}: a stack name is {STACK_NAME_RULE}{qualified}")
    return stack


STACK_FILE_OPTION = "--stack-file"
STACK_FILE_NAME = re.compile(r"Pulumi\.(?P<stack>.+)\.yaml")


def stack_of_file(path: Path) -> str:
    """The stack a file is for, from its name `Pulumi.<stack>.yaml`; StackNameError names the option otherwise."""
    match = STACK_FILE_NAME.fullmatch(path.name)
    allowed = f"a file named Pulumi.<stack>.yaml, where <stack> is {STACK_NAME_RULE}"
    if match is None:
        raise StackNameError(f"{STACK_FILE_OPTION} {shown(str(path))}: the file name must be {allowed}")
    try:
        return check_stack_name(match["stack"])
    except StackNameError:
        raise StackNameError(
            f"{STACK_FILE_OPTION} {shown(str(path))}: {shown(match['stack'])} is not a stack name; give {allowed}"
        ) from None


def read_stack_source(stack: str, stack_file: Path | None = None, project_dir: Path = PROJECT_DIR) -> StackFileConfig:
    """The stack's config strings: from `Pulumi.<stack>.yaml` in `project_dir`, or from `stack_file` when given.

    A given file is linked, under its own name, beside a link to `project_dir`'s `Pulumi.yaml` in a
    private temporary folder, so that it is read exactly as a listed stack file is (the same limits,
    the declared keys and types, secrets); nothing is copied and nothing is written in the repository.
    Its messages name it by the path as given, not by the link's name.
    """
    if stack_file is None:
        return read_stack_file(stack, project_dir)
    if not os.path.lexists(stack_file):
        raise StackFileError(f"{STACK_FILE_OPTION} {stack_file}: no such file")
    with tempfile.TemporaryDirectory(prefix="nebius-dra-stack-") as folder:
        os.symlink((project_dir / "Pulumi.yaml").resolve(), Path(folder, "Pulumi.yaml"))
        os.symlink(stack_file.resolve(), Path(folder, stack_file.name))
        return read_stack_file(stack, Path(folder), label=str(stack_file))


ReadableCheck = Callable[[StackFileConfig, str], object]


def check_stack_program(readable: StackFileConfig, stack: str) -> None:
    """The main program's checks (`parse_stack_config`) over the keys of a stack file that could be read."""
    parse_stack_config(stack_file_raw_config(readable), stack)


def with_program_problems(
    refused: StackFileError, stack: str, check: ReadableCheck = check_stack_program
) -> StackFileError:
    """The stack file's problems, then what the program would refuse in the keys that could be read.

    A misspelt key (`subnetID`) is then reported with what its absence leaves wrong (`subnetId` is
    required) and with every other problem of the stack, in one round instead of one per fix. `check`
    is the checks of the program the stack file is for (raising ConfigError): another project, such
    as the CI-identity bootstrap, is never judged by the main program's.
    """
    if refused.readable is None:
        return refused
    try:
        check(refused.readable, stack)
    except ConfigError as more:
        # A problem naming a key the file refused follows from that key's absence (a refused password reads as
        # empty): its cause is reported already, and one cause gives one problem.
        names_refused = re.compile(
            "|".join(rf"{re.escape(key)}(?![A-Za-z0-9_])" for key in sorted(refused.refused)) or r"(?!)"
        )
        if more.problems is None:
            return StackFileError(f"{refused}\nand in the keys that could be read, {more}")
        kept = more.problems.without(names_refused.search)
        if not kept.lines:
            return refused
        return StackFileError(f"{refused}\nand in the keys that could be read, {kept.message()}")
    return refused
