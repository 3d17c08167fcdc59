"""The config keys of the providers the program uses, as the installed (pinned) packages read them.

A stack file's key of another namespace is read by no one unless a provider reads it: the Pulumi CLI hands every key
to the program and the providers without a word, so `nebius:protect` (meant as `nebius-dra:protect`) or a bootstrap
key pasted into the main stack (`nebius-dra-ci-identity:repository`) would be dropped silently. The keys a
provider reads come from its package: pulumi_nebius's config module (`__config__.get...('<key>')`) and
pulumi_kubernetes's Provider (`__props__.__dict__["<key>"]`, the snake_case of the config key). The `pulumi:`
namespace is the CLI's own (`pulumi:tags`, `pulumi:disable-default-providers`).
"""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

from components.redaction import may_hold_a_credential, redacted

PULUMI_NAMESPACE = "pulumi"
# namespace -> (package, file in it, pattern of a key it reads, whether the pattern's key is snake_case)
_SOURCES = {
    "nebius": ("pulumi_nebius", "config/vars.py", re.compile(r"__config__\.get[a-z_]*\('([A-Za-z0-9]+)'\)"), False),
    "kubernetes": ("pulumi_kubernetes", "provider.py", re.compile(r'__props__\.__dict__\["([a-z0-9_]+)"\]'), True),
}
# A provider key that carries a credential: set in plain text, it would be kept in clear. `kubernetes:kubeconfig`
# may be a file's path (plain is fine), but its text may hold a token; `nebius:token` and `nebius:serviceAccount`
# (service account credentials) always do.
ALWAYS_SECRET = frozenset({"nebius:token", "nebius:serviceAccount"})
SECRET_WHEN_CREDENTIAL = frozenset({"kubernetes:kubeconfig"})


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


@lru_cache(maxsize=1)
def provider_keys() -> dict[str, frozenset[str]]:
    """Namespace -> the keys its provider reads, from the installed package's source (not imported: it is large)."""
    keys: dict[str, frozenset[str]] = {}
    for namespace, (package, file, pattern, snake) in _SOURCES.items():
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        text = (Path(next(iter(spec.submodule_search_locations))) / file).read_text()
        found = pattern.findall(text)
        keys[namespace] = frozenset(_camel(key) if snake else key for key in found)
    return keys


def plain_provider_secret(key: str, value: object) -> bool:
    """Whether a plain-text `key` of a provider holds what only a secret may hold."""
    if key in ALWAYS_SECRET:
        return value not in (None, "")
    if key in SECRET_WHEN_CREDENTIAL and isinstance(value, str):
        return redacted(value) != value or may_hold_a_credential(value) or "\n" in value
    return False
