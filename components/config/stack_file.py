"""Reading `Pulumi.yaml` and `Pulumi.<stack>.yaml` the way the Pulumi CLI reads them, without the CLI.

The offline plan, the tests and the live verifier need a stack's config as the program
would receive it. Like the CLI this reader takes YAML 1.2 scalars (`on` and `2024-01-01`
stay strings, `010` is ten), refuses keys of the project's namespace that `Pulumi.yaml`
does not declare and values that do not have the declared type, and treats `secure:`
values as secrets: it cannot decrypt them, so their text is never used as a value.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.config.errors import ConfigError, ConfigProblems, did_you_mean, quoted_name, shown, shown_name
from components.config.provider_keys import PULUMI_NAMESPACE, plain_provider_secret, provider_keys
from components.config.reading import key_lines, load_yaml
from components.dra_constants import NAMESPACE
from components.input.stack import credentials_in
from components.redaction import secrets_of

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent
PROJECT_FILE = PROJECT_DIR / "Pulumi.yaml"
SECRET_PLACEHOLDER = "[secret]"
# Pulumi stack names: letters, digits, '-', '_' and '.'.
STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}\Z")


# What a stack file may hold at its top: the Pulumi CLI's `ProjectStack` (github.com/pulumi/pulumi/sdk/v3 v3.274.0,
# go/common/workspace/project.go: secretsprovider, encryptedkey, encryptionsalt, config, environment). Another key is
# a misspelling (`confg:`) whose settings would be dropped silently.
STACK_FILE_BLOCKS = ("config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment")


class StackFileError(ConfigError):
    """The stack file cannot be read as the CLI would read it; the message names the file and the key.

    `readable` holds the keys that could be read (the refused ones left out), so that an offline tool
    can report what the program would refuse in them in the same round.
    """

    def __init__(
        self, message: str, readable: StackFileConfig | None = None, refused: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(message)
        self.readable = readable
        # The keys the file sets whose values it refused: what follows from their absence is no second problem.
        self.refused = refused


@dataclass(frozen=True)
class StackFileConfig:
    """The config strings a program receives, and which keys hold secrets."""

    values: dict[str, str]
    secret_keys: frozenset[str] = field(default_factory=frozenset)


def load_yaml_file(path: Path) -> Any:
    """A YAML document read with YAML 1.2 scalars within the input limits (`components.config.reading`);
    a file that is not one raises `StackFileError` naming the file and the place."""
    return load_yaml(path, path.name, StackFileError)


def declared_config(project_file: Path = PROJECT_FILE) -> dict[str, Any]:
    """The `config:` map of `Pulumi.yaml`; `StackFileError` when the file or its `config:` is not a map."""
    document = load_yaml_file(project_file)
    declared = document.get("config", {}) if isinstance(document, dict) else None
    if not isinstance(declared, dict):
        raise StackFileError(
            f"{project_file.name}: expected a map with a config: map of declared keys, got {shown(document)}"
        )
    return declared


def declared_default(key: str, project_file: Path = PROJECT_FILE) -> Any:
    """What the program reads for `key` when a stack leaves it out: its default in `Pulumi.yaml`."""
    return declared_config(project_file)[f"{NAMESPACE}:{key}"]["default"]


def project_config_keys(project_file: Path = PROJECT_FILE) -> list[str]:
    """The keys `Pulumi.yaml` declares, without the namespace: the one list of what the stack reads."""
    declared = declared_config(project_file)
    return [key.split(":", 1)[1] for key in declared if key.startswith(f"{NAMESPACE}:")]


def stack_names(project_dir: Path = PROJECT_DIR) -> list[str]:
    """Every stack that has a `Pulumi.<stack>.yaml` beside the project file."""
    return sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in project_dir.glob("Pulumi.*.yaml"))


def committed_stacks(project_dir: Path = PROJECT_DIR) -> tuple[str, ...]:
    """The stacks whose `Pulumi.<stack>.yaml` git tracks beside `Pulumi.yaml`.

    A committed stack file is tested without editing a test, and a scratch one (a `Pulumi.try.yaml`
    planned with `make plan STACK_FILE=...`) changes nothing the tests check. Outside a git
    checkout (an unpacked archive) every stack file there is taken, as `stack_names` lists them.
    """
    listed = subprocess.run(
        ["git", "-C", str(project_dir), "ls-files", "-z", "--", "Pulumi.*.yaml"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if listed.returncode != 0:
        return tuple(stack_names(project_dir))
    tracked = {name for name in listed.stdout.split("\0") if name and "/" not in name}
    return tuple(stack for stack in stack_names(project_dir) if f"Pulumi.{stack}.yaml" in tracked)


def stack_name_problem(stack: str) -> str | None:
    if STACK_NAME.match(stack) and stack not in (".", ".."):
        return None
    return f"stack name {shown(stack)} is not a Pulumi stack name: 1-100 letters, digits, '-', '_' or '.'"


def project_namespace(project_file: Path = PROJECT_FILE) -> str:
    """The namespace of the project's own keys: its `name:`, which `pulumi config set` adds to a key given without
    one (a stack file's key must carry it: `parse_key`)."""
    document = load_yaml_file(project_file)
    name = document.get("name") if isinstance(document, dict) else None
    return name if isinstance(name, str) and name else NAMESPACE


def parse_key(key: Any) -> str | None:
    """The key a stack file's `config:` entry sets, as `<namespace>:<name>`, or None where the Pulumi CLI cannot read
    it: its own rule (github.com/pulumi/pulumi/sdk/v3 v3.274.0, go/common/resource/config/key.go, `ParseKey`, with
    go/common/tokens/tokens.go for the module of `tokens.ParseModuleMember`). One ':' is `<namespace>:<name>`; two,
    with `config` between them, the legacy `<namespace>:config:<name>`, read as `<namespace>:<name>`; anything else
    (a bare `protect`, `a:b:c`, three colons) fails the whole file at `pulumi preview` ("could not parse protect as a
    configuration key"). `pulumi config set protect` adds the project's namespace; the file itself gets none."""
    parts = str(key).split(":")
    if len(parts) == 2:
        return str(key)
    if len(parts) == 3 and parts[1] == "config":
        return f"{parts[0]}:{parts[2]}"
    return None


def _meant_key(key: Any, namespace: str) -> str:
    """The key an entry sets (`parse_key`), or for one the CLI cannot read the project's key it was most likely
    meant as (`protect` for nebius-dra:protect): its value is then still kept out of every message when it is a
    credential, and what follows from its absence is no second problem."""
    return parse_key(key) or f"{namespace}:{str(key).rsplit(':', 1)[-1]}"


def _key_problem(key: Any, namespace: str) -> str:
    """The refusal of an entry `parse_key` cannot read."""
    text = shown_name(key)
    example = "" if ":" in str(key) else f" ({namespace}:{text})"
    return (
        f"is not a config key the Pulumi CLI reads (it refuses the whole file: could not parse {text} as a "
        f"configuration key): write <namespace>:<name>{example}, or the legacy <namespace>:config:<name>"
    )


# The most edits (a letter changed, added or removed) between a namespace and the project's, once both are folded, for
# the namespace to be taken for a misspelling of the project's: `nebius` (a provider's, three letters off) is not one.
LOOK_ALIKE_EDITS = 2
# Longer namespaces are compared with no one (the edit distance is quadratic in the length).
_LONGEST_COMPARED = 100


def _folded(namespace: str) -> str:
    """A namespace as a reader sees it: NFKC (fullwidth letters, compatibility forms), case folded, and every character
    but an ASCII letter or digit dropped (`-`, `_`, U+2010 HYPHEN, U+2212 MINUS) or, when it is a letter of another
    script (the Cyrillic `е` of `nеbius`), kept as one edit."""
    text = unicodedata.normalize("NFKC", namespace).casefold()
    return "".join(ch if ch.isascii() and ch.isalnum() else "?" for ch in text if not ch.isascii() or ch.isalnum())


def _edits(one: str, other: str, most: int) -> int:
    """The Levenshtein distance of two short texts, or `most + 1` once it is known to be above `most`."""
    if abs(len(one) - len(other)) > most:
        return most + 1
    previous = list(range(len(other) + 1))
    for row, ch in enumerate(one, 1):
        current = [row]
        for column, other_ch in enumerate(other, 1):
            current.append(min(previous[column] + 1, current[-1] + 1, previous[column - 1] + (ch != other_ch)))
        previous = current
    return previous[-1]


def look_alike_namespace(key: str, namespace: str) -> str | None:
    """The namespace of `key` when it is not the project's but reads as it (case, a look-alike hyphen or letter, a
    letter or two off: `Nebius-DRA`, `nebius\u2010dra`, `nebuis-dra`), else None. Such a key is no provider's: the
    program reads only its own namespace, so the key would be dropped without a word."""
    given = key.split(":", 1)[0] if ":" in key else None
    if given is None or given == namespace or len(given) > _LONGEST_COMPARED:
        return None
    folded, own = _folded(given), _folded(namespace)
    return given if _edits(folded, own, LOOK_ALIKE_EDITS) <= LOOK_ALIKE_EDITS else None


def look_alike_problem(key: str, namespace: str, where: str, declared: Collection[str]) -> str | None:
    """The refusal of a key whose namespace reads as the project's but is not it (`look_alike_namespace`), naming the
    key's namespace, any character of it that is not ASCII, and the project's; None for any other key. `where` says
    where the key is set (`in Pulumi.dev.yaml`)."""
    given = look_alike_namespace(key, namespace)
    if given is None:
        return None
    name = key.split(":", 1)[1]
    foreign = [f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}" for ch in dict.fromkeys(given) if not ch.isascii()]
    return (
        f"is set {where} under the namespace {shown(given)}"
        + (f" (with {', '.join(foreign[:5])})" if foreign else "")
        + f", which is not the project's {shown(namespace)} (Pulumi.yaml's name; config keys are case-sensitive): the "
        f"program reads only {namespace}:... keys, so this one would be dropped; write it as {namespace}:{shown_name(name)}"
        + ("" if f"{namespace}:{name}" in declared else did_you_mean(f"{namespace}:{name}", list(declared)))
    )


def foreign_key_problem(key: str, value: Any, namespace: str, where: str, declared: Collection[str]) -> str | None:
    """The refusal of a key of another namespace than the project's that no one reads (components/config/
    provider_keys.py): a namespace of no provider the program uses, or a key its provider does not read (with the
    project's key of that name offered: `nebius:protect` for `nebius-dra:protect`); and a provider's credential set
    in plain text. None for a key a provider reads, and for the CLI's own `pulumi:` keys."""
    given, _, name = key.partition(":")
    if given in (namespace, PULUMI_NAMESPACE):
        return None
    keys = provider_keys()
    own = f"{namespace}:{name}"
    mine = f"; did you mean {own}?" if own in declared else ""
    if given not in keys:
        return (
            f"is set {where} under the namespace {shown(given)}, which neither this program ({namespace}:...) nor a "
            f"provider it uses ({', '.join(f'{n}:...' for n in sorted(keys))}) reads: it would be dropped{mine}"
        )
    if name not in keys[given]:
        return (
            f"is set {where}, but the {given} provider reads no {shown(name)} (its keys: "
            f"{', '.join(sorted(keys[given]))}): it would be dropped"
            + (mine or did_you_mean(key, [f"{given}:{known}" for known in sorted(keys[given])]))
        )
    secure = isinstance(value, dict) and set(value) == {"secure"}
    if not secure and plain_provider_secret(key, value):
        return (
            f"is set in plain text {where}, but it holds credentials, which the stack would keep in clear: set it "
            f"as a secret, `pulumi config set {key} --secret < file` (and remove the plain value)"
        )
    return None


def _keys_spelt_twice(config: Mapping[Any, Any], stack_file: Path, label: str) -> dict[str, str]:
    """Each key given both as `<namespace>:<name>` and in the legacy `<namespace>:config:<name>` (`parse_key`), with
    the message naming both lines.

    The Pulumi CLI takes both and keeps one of them: it decodes the `config:` map by spelling and then files each
    entry under its parsed key (github.com/pulumi/pulumi sdk/go/common/resource/config/map.go, `Map.UnmarshalYAML`,
    `newMap[pk] = v`), in Go's map order, so which value wins is not even fixed. Refused here instead.
    """
    spellings: dict[str, list[str]] = {}
    for raw_key in config:
        if (key := parse_key(raw_key)) is not None:
            spellings.setdefault(key, []).append(str(raw_key))
    doubled = {key: spelt for key, spelt in spellings.items() if len(spelt) > 1}
    if not doubled:
        return {}
    lines = key_lines(stack_file, label, "config", StackFileError)
    return {
        key: "is given twice, "
        + " and ".join(f"as {quoted_name(spelling)} at line {lines.get(spelling, '?')}" for spelling in spelt)
        + "; give it once (the Pulumi CLI keeps one of the values, in no fixed order, and drops the other silently)"
        for key, spelt in doubled.items()
    }


# The Pulumi CLI's own rule (github.com/pulumi/pulumi/sdk/v3 v3.274.0, go/common/workspace/project.go
# ValidateConfigValue): it holds every scalar of a stack file as text, so an integer key takes a whole
# number or text strconv.Atoi reads (the CLI itself writes `"3"` back on `pulumi config set`), a boolean
# key `true`/`false` or that text, and an array's items follow the same rule. A string key is stricter
# here than in the CLI: the CLI hands the program its YAML 1.1 reading of an unquoted scalar (010 as
# "8", e2e/cli), so such a value is refused with the hint to quote it.
CLI_INTEGER_TEXT = re.compile(r"[+-]?[0-9]{1,18}")


def _takes(kind: Any, value: Any, item: bool = False) -> bool:
    """`item`: an array's entry, which the CLI reads as JSON, so a whole float counts as an integer there;
    a top-level 2.0 reaches it as the text "2.0", which strconv.Atoi refuses."""
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        if isinstance(value, bool):
            return False
        if isinstance(value, float):
            return item and math.isfinite(value) and value == math.trunc(value)
        return isinstance(value, int) or (isinstance(value, str) and CLI_INTEGER_TEXT.fullmatch(value) is not None)
    if kind == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    return True


def _declared_type_problem(value: Any, spec: Mapping[str, Any]) -> str | None:
    kind = spec.get("type")
    if kind not in ("string", "integer", "boolean", "array"):
        return None
    if kind == "array":
        item = (spec.get("items") or {}).get("type")
        ok = isinstance(value, list) and all(_takes(item, entry, item=True) for entry in value)
    else:
        ok = _takes(kind, value)
    if ok:
        return None
    hint = " (quote it to keep it text)" if kind == "string" and not isinstance(value, (dict, list)) else ""
    return f"got {shown(value)}, but Pulumi.yaml declares it {kind}{hint}"


class _SecretScan:
    """Replaces `secure:` values by a placeholder and refuses what JSON cannot carry (binary, dates, NaN).

    A `secure:` value is what the Pulumi CLI takes for one (github.com/pulumi/pulumi sdk/go/common/resource/config/
    object.go, `isSecureValue`): a map whose one key is `secure`, holding a string. A map with `secure` and other keys
    is a plain object there, and so here: its values are plain.
    """

    def __init__(self, key: str, problems: ConfigProblems) -> None:
        self.key = key
        self.problems = problems
        self.secret = False

    def clean(self, value: Any, where: str = "") -> Any:
        if isinstance(value, dict):
            if set(value) == {"secure"} and isinstance(value["secure"], str):
                self.secret = True
                return SECRET_PLACEHOLDER
            return {str(k): self.clean(v, f"{where}.{k}" if where else str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.clean(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, float) and not math.isfinite(value):
            self.problems.add(self.key, f"{where + ' ' if where else ''}got {value}; numbers must be finite")
        elif value is not None and not isinstance(value, (str, int, float, bool)):
            self.problems.add(
                self.key,
                f"{where + ' ' if where else ''}got a YAML {type(value).__name__}, which a stack value cannot hold; "
                "write it as a string, number, boolean, list or map",
            )
        return value


def _as_config_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value)


def _check_blocks(document: Mapping[Any, Any], label: str, engine: bool) -> None:
    """Refuses a top-level key the Pulumi CLI's stack file has not, and, unless the `engine` reads it, an ESC
    `environment:`, whose values the offline tools cannot read (they come from Pulumi Cloud at `pulumi preview`)."""
    unknown = [str(key) for key in document if key not in STACK_FILE_BLOCKS]
    if unknown:
        raise StackFileError(
            f"{label}: unknown top-level key {', '.join(map(shown, unknown))}"
            f"{did_you_mean(unknown[0], list(STACK_FILE_BLOCKS))}; a stack file holds only "
            f"{', '.join(STACK_FILE_BLOCKS)} (the Pulumi CLI's ProjectStack), and settings go under config:"
        )
    if "environment" in document and not engine:
        raise StackFileError(
            f"{label}: environment: imports Pulumi ESC environments, whose values the offline tools cannot "
            "read; use pulumi preview"
        )


def read_stack_file(
    stack: str, project_dir: Path = PROJECT_DIR, label: str | None = None, engine: bool = False
) -> StackFileConfig:
    """Project defaults overlaid with the stack file, as the strings a program receives; `StackFileError` otherwise.

    `label` names the file in every message (a file given by path is named by that path, so that a scratch
    `/tmp/t/Pulumi.dev.yaml` is not taken for the repository's); by default its name. With `engine`, the Pulumi
    engine runs the program and hands it the values (`components.config.raw.read_raw_config`): what only it can read
    (an ESC `environment:`, a `secure:` value of a non-string key) is left to it; every other check is the same.
    """
    problem = stack_name_problem(stack)
    if problem:
        raise StackFileError(problem)
    declared = declared_config(project_dir / "Pulumi.yaml")
    namespace = project_namespace(project_dir / "Pulumi.yaml")
    stack_file = project_dir / f"Pulumi.{stack}.yaml"
    if not stack_file.exists():
        listed = ", ".join(stack_names(project_dir)) or "none"
        raise StackFileError(f"no stack file {stack_file.name} in {project_dir}; the stacks there: {listed}")
    label = label or stack_file.name
    document = load_yaml(stack_file, label, StackFileError)
    config = document.get("config", {}) if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise StackFileError(f"{label}: expected a map with a config: map of keys, got {shown(document)}")
    _check_blocks(document, label, engine)
    # A secret-only key given in plain text is refused later; until then no message quotes any leaf of it, a number
    # or a boolean included (the type check below quotes what it refuses).
    problems = ConfigProblems(
        secrets_of(
            part
            for key, value in config.items()
            if _meant_key(key, namespace).startswith(f"{NAMESPACE}:")
            for part in credentials_in(_meant_key(key, namespace).removeprefix(f"{NAMESPACE}:"), value)
        )
    )
    values = {key: spec["default"] for key, spec in declared.items() if isinstance(spec, dict) and "default" in spec}
    secret_keys: set[str] = set()
    read_keys: set[str] = set()
    spelt_twice = _keys_spelt_twice(config, stack_file, label)
    for key, message in spelt_twice.items():
        problems.add(key, message)
    for raw_key, raw_value in config.items():
        parsed = parse_key(raw_key)
        if parsed is None:
            problems.add(shown_name(raw_key), _key_problem(raw_key, namespace))
            continue
        key = parsed
        if key in spelt_twice:
            continue  # refused above, neither value read
        spec = declared.get(key)
        if (look_alike := look_alike_problem(key, namespace, f"in {label}", list(declared))) is not None:
            problems.add(shown_name(key), look_alike)
            continue
        if namespace == NAMESPACE and (
            foreign := foreign_key_problem(key, raw_value, namespace, f"in {label}", declared)
        ):
            problems.add(shown_name(key), foreign)
            continue
        if key.startswith(f"{namespace}:") and spec is None:
            problems.add(
                shown_name(key),
                f"is set in {label} but Pulumi.yaml does not declare it{did_you_mean(key, list(declared))}; "
                "the Pulumi CLI refuses it",
            )
            continue
        scan = _SecretScan(key, problems)
        refused_before = len(problems.lines)
        value = scan.clean(raw_value)
        if len(problems.lines) > refused_before:
            continue  # refused: left out of what could be read
        if scan.secret:
            secret_keys.add(key)
            if value == SECRET_PLACEHOLDER and isinstance(spec, dict) and spec.get("type") != "string" and not engine:
                problems.add(
                    key, "is encrypted as a whole (secure:); the offline plan cannot decrypt it: use pulumi preview"
                )
                continue
        elif isinstance(spec, dict) and (type_problem := _declared_type_problem(value, spec)):
            problems.add(key, type_problem)
            continue
        values[key] = value
        read_keys.add(key)
    read = StackFileConfig({key: _as_config_string(value) for key, value in values.items()}, frozenset(secret_keys))
    if problems.lines:
        refused = frozenset(_meant_key(key, namespace) for key in config) - read_keys
        raise StackFileError(f"{label}:\n" + "\n".join(f"  - {line}" for line in problems.lines), read, refused)
    return read


def load_stack_config(stack: str, project_dir: Path = PROJECT_DIR) -> dict[str, str]:
    """The config strings of `stack` by full key (`nebius-dra:...`), as the program receives them."""
    return read_stack_file(stack, project_dir).values


def program_config(config: Mapping[str, str]) -> dict[str, str]:
    """The project's keys without their namespace: what `parse_stack_config` reads."""
    prefix = f"{NAMESPACE}:"
    return {key[len(prefix) :]: value for key, value in config.items() if key.startswith(prefix)}
