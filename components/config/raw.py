"""From the strings Pulumi hands the program to typed values, the way the CLI typed them.

The CLI passes every config value as a string: declared integers and booleans as their
text, lists and maps as JSON. Each is decoded by the type its schema field declares, with
ASCII-only, whole-string rules (`"1.34\\n"` or `"١"` never pass as numbers), and a failure
is a problem named by its key rather than an exception.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Collection, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pulumi import get_stack
from pulumi.runtime.config import CONFIG, get_config, get_config_env, is_config_secret

from components.config.errors import ConfigProblems, config_key, shown, shown_name
from components.config.reading import InputError, parse_json
from components.config.stack_file import (
    StackFileConfig,
    look_alike_problem,
    program_config,
    project_config_keys,
    read_stack_file,
)
from components.dra_constants import NAMESPACE
from components.input.stack import StackInput, credentials_in
from components.redaction import Secrets, secrets_of

UNDECODABLE: Any = object()
WHOLE_NUMBER = re.compile(r"^-?[0-9]{1,18}\Z")
MAX_JSON_TEXT = 1 << 20


@dataclass(frozen=True)
class RawConfig:
    """The stack's config as the program receives it: strings by key (no namespace), and which keys are secret."""

    values: Mapping[str, str]
    secret_keys: frozenset[str] = field(default_factory=frozenset)
    # Keys set under a namespace that reads as the project's but is not it (`Nebius-DRA:x`), each with its refusal.
    look_alikes: Mapping[str, str] = field(default_factory=dict)


# Set by the offline engine (tools/plan/mock_engine.py), which reads and checks the stack file itself before it runs
# the program, and hands it what it read or a test's config instead.
OFFLINE_ENGINE: ContextVar[bool] = ContextVar("offline_engine", default=False)


def read_raw_config(project_file: Path) -> RawConfig:
    """Every declared key the engine set, read without Pulumi's "use get_secret" warning: secrecy is tracked here.

    Under the real engine (`pulumi preview`, `up`), the stack file `Pulumi.<stack>.yaml` beside `project_file` is
    first checked by the offline plan's own reader (`read_stack_file`, its StackFileError raised), so a key given
    twice, a key no one reads or a provider credential in plain text stops `pulumi up` as it stops the plan: the CLI
    itself takes them (a key given under both spellings keeps one value in no fixed order). The engine's values are
    what the program then reads. A stack whose config the CLI took from elsewhere (`--config-file`) and that has no
    file there is checked by the engine alone.
    """
    stack_file = project_file.with_name(f"Pulumi.{get_stack()}.yaml")
    if not OFFLINE_ENGINE.get() and stack_file.is_file():
        read_stack_file(get_stack(), project_file.parent, engine=True)
    values: dict[str, str] = {}
    secret: set[str] = set()
    for key in project_config_keys(project_file):
        value = get_config(config_key(key))
        if value is not None:
            values[key] = str(value)
            if is_config_secret(config_key(key)):
                secret.add(key)
    declared = [config_key(key) for key in project_config_keys(project_file)]
    look_alikes = {
        key: problem
        for key in {**get_config_env(), **CONFIG.get()}
        if (problem := look_alike_problem(key, NAMESPACE, "in the stack's config", declared)) is not None
    }
    return RawConfig(values, frozenset(secret), look_alikes)


def stack_file_raw_config(read: StackFileConfig) -> RawConfig:
    """A stack file's config as the program receives it: the project's keys without their namespace, and which of
    them are secrets (a secret the reader cannot decrypt is its placeholder, still a secret: never "plain text")."""
    prefix = f"{NAMESPACE}:"
    secret = frozenset(key.removeprefix(prefix) for key in read.secret_keys if key.startswith(prefix))
    return RawConfig(program_config(read.values), secret)


def _kind(annotation: Any) -> str:
    """int, bool, str or json: how the CLI encoded a value of this schema type as text."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is typing.Literal:
        return "int" if all(isinstance(arg, int) for arg in typing.get_args(annotation)) else "str"
    if annotation is bool:
        return "bool"
    if annotation is int:
        return "int"
    return "str" if annotation is str else "json"


FIELD_KINDS = {name: _kind(info.annotation) for name, info in StackInput.model_fields.items()}


def _decode(key: str, text: str, kind: str, problems: ConfigProblems) -> Any:
    if kind == "str":
        return text
    if kind == "bool":
        if text in ("true", "false"):
            return text == "true"
        problems.add(config_key(key), f"got {shown(text)}; expected true or false")
        return UNDECODABLE
    if kind == "int":
        if WHOLE_NUMBER.match(text):
            return int(text)
        problems.add(config_key(key), f"got {shown(text)}; expected a whole number")
        return UNDECODABLE
    if len(text) > MAX_JSON_TEXT:
        problems.add(config_key(key), f"is {len(text)} characters long; the stack reads at most {MAX_JSON_TEXT}")
        return UNDECODABLE
    try:
        return parse_json(text, "the value")
    except InputError as error:
        problems.add(
            config_key(key),
            f"got {shown(text)}, which is not structured YAML/JSON ({error}); set it in the stack file as a YAML list or map",
        )
        return UNDECODABLE


def decode_config(raw: Mapping[str, str], problems: ConfigProblems) -> tuple[dict[str, Any], set[str]]:
    """Typed values by key for the schema, and the keys that could not be decoded (their problem is recorded).

    Keys the schema does not know are problems too, never silently dropped.
    """
    decoded: dict[str, Any] = {}
    undecodable: set[str] = set()
    for key, text in raw.items():
        kind = FIELD_KINDS.get(key)
        if kind is None:
            problems.add(
                config_key(shown_name(key)), f"is not a key this project declares; declared: {', '.join(FIELD_KINDS)}"
            )
            continue
        value = _decode(key, text, kind, problems)
        if value is UNDECODABLE:
            undecodable.add(key)
        else:
            decoded[key] = value
    return decoded, undecodable


def config_secrets(raw: RawConfig) -> Secrets:
    """The secret keys' values and every leaf inside them, whatever its type: what no message may quote. What holds a
    credential however it is given (`credentials_in`: a secret-only key, a password typed into a username) is among
    them in plain text too, so its refusal never quotes it."""
    plain = (part for key, value in sorted(raw.values.items()) for part in credentials_in(key, value))
    return secrets_of([*(raw.values.get(key, "") for key in sorted(raw.secret_keys)), *plain])


def secret_problems(secret_keys: Collection[str], allowed: Collection[str], problems: ConfigProblems) -> None:
    for key in sorted(set(secret_keys) - set(allowed)):
        problems.add(
            config_key(shown_name(key)),
            f"is set as a secret, but its value becomes a resource name, ID or setting that Nebius and Kubernetes show "
            f"in plain text, so the stack cannot keep it secret; set it as plain config. Keys that may be secret: "
            f"{', '.join(allowed)}",
        )
