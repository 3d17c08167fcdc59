"""The field types every input model shares: whole-string patterns, bounds and the strict `Shape`.

Limits name their source: the Nebius API rules are those the installed `pulumi-nebius`
0.6.73 documents (also in nebius/terraform-provider-nebius docs); the DRA limits are the
constants of k8s.io/api v0.34 `resource/v1/types.go` (DeviceRequestsMaxSize = 32,
FirstAvailableDeviceRequestMaxSize = 8, DeviceSelectorsMaxSize = 32,
CELSelectorExpressionMaxLength = 10 * 1024, AllocationResultsMaxSize = 32).
"""

from __future__ import annotations

import ipaddress
import json
import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from components.dra_minors import SUPPORTED_MINORS
from components.dra_minors import TABLE_FILE as MINORS_TABLE
from components.redaction import (
    ANCHOR_PATTERN,
    HEX_TOKEN_LENGTH,
    TOKEN_WORD_LENGTH,
    holds_a_token_shaped_word,
    may_hold_a_credential,
)
from components.shown import quotable, shape, shown

# Whole-string patterns over ASCII only, in the syntax RE2 (Go) and ECMA-262 share, because editors
# and validators run them from the published JSON Schema (stack-file.schema.json). pydantic runs
# them with its rust-regex engine (the `regex` crate: RE2's syntax, and `$` ends the text unless
# multi-line mode is on, as in RE2 and ECMA-262), so a trailing newline or a non-ASCII digit never
# passes for a name, version or preset. None of these engines but ECMA-262 has lookaround, so a
# length bound is a `max_length` or a second pattern.
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
# Its bound of 253 characters is the `max_length` of `DnsSubdomain`.
DNS_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
RESOURCE_NAME_PATTERN = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
# A Nebius resource ID: its kind (`project`, `vpcsubnet`), a '-', then at most this many lowercase letters or digits.
NEBIUS_ID_SUFFIX_LIMIT = 56
NEBIUS_ID_PATTERN = rf"^[a-z][a-z0-9]*-[a-z0-9]{{1,{NEBIUS_ID_SUFFIX_LIMIT}}}$"


def nebius_id_rule(kind: str) -> str:
    """NEBIUS_ID_PATTERN in words, for an ID of `kind`."""
    return f"{kind}- then 1 to {NEBIUS_ID_SUFFIX_LIMIT} lowercase letters or digits"


GROUP_NAME_PATTERN = r"^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$"
# A preset's counts start at 1: `0vcpu-0gb` is no node (it was priced at $0.00).
CPU_PRESET_PATTERN = r"^[1-9][0-9]{0,3}vcpu-[1-9][0-9]{0,4}gb$"
PLATFORM_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+){1,6}$"
# A GPU preset names its shape: GPUs, vCPUs and GiB of memory per node (`8gpu-128vcpu-1600gb`).
# The stack-file schema validates presets with this pattern too, so it must mean the same in Go RE2,
# ECMA-262 and Python (tests/test_regex_engines.py); Python matches it with `\Z`, as `$` would allow a newline.
# A Nebius GPU node has 1 to 8 GPUs (every preset of https://docs.nebius.com/compute/virtual-machines/types and of
# prices/nebius.yaml): `0gpu-...` is no GPU node, and `99gpu-...` made a multi-gpu template the API server refuses.
GPU_PRESET_PATTERN = r"^([1-8])gpu-([1-9][0-9]{0,3})vcpu-([1-9][0-9]{0,4})gb$"
DRIVERS_PRESET_PATTERN = r"^cuda[0-9]{1,3}(\.[0-9]{1,3})?$"
CHART_VERSION_PATTERN = r"^v?[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$"
# An image reference, by the grammar of github.com/distribution/reference (reference.go's comment and regexp.go,
# https://github.com/distribution/reference/blob/main/reference.go): [domain[:port]/]path[/path...][:tag][@digest].
# The project's own pattern, not distribution's regexps: each part is written so that a backtracking engine (ECMA-262)
# has one way to split a text into it (a domain label is alphanumerics joined by runs of '-', not `x[x-]*x`), so every
# engine matches in linear time, and `\w` is spelt out as ASCII (rust-regex's `\w` is Unicode). Two rules beside the
# grammar: the port is 1 to 65535 (distribution takes any digits), and a tag or a digest is required (pinned; a tag of
# FLOATING_TAGS is refused by `image_problem`, components/config/claim_templates.py).
IMAGE_LIMIT = 255  # distribution's NameTotalLengthMax bounds the name; here the whole reference.
_IMAGE_DOMAIN_LABEL = r"[A-Za-z0-9]+(?:-+[A-Za-z0-9]+)*"
# The first component is a domain only when it reads as one to a container runtime (distribution's
# normalize.go, splitDockerDomain): it has a '.' or a port, is `localhost`, or is an IPv6 literal; else it is a path
# component of a Docker Hub name, so `Nvidia/cuda:1` is refused (uppercase) rather than pulled from a host `Nvidia`.
IMAGE_DOMAIN = (
    rf"(?:{_IMAGE_DOMAIN_LABEL}(?:(?:\.{_IMAGE_DOMAIN_LABEL})+(?::{{port}})?|:{{port}})"
    r"|localhost(?::{port})?|\[[0-9A-Fa-f:]+\](?::{port})?)"
)
IMAGE_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
IMAGE_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}"
# Tags that name no release but a pointer its publisher moves: a registry re-points the tag at whatever is pushed
# under it next, so one reference pulls another image from one day to the next (a sample that passed yesterday fails
# today; a node a roll-out replaces runs other code than its neighbours). Refused in any case (a registry's tags are
# case-sensitive, `Latest` is no `latest`, but no release is named either way) for the sample images and every chart
# values override's `image.tag` (`floating_tag`); a release tag, `13.1.1-runtime-ubuntu24.04`, `v25.12.0`, or a
# digest pins. Each, and why it moves (the official images on Docker Hub document these tags so: ubuntu's `rolling`
# and `devel`, alpine's `edge`, nginx's `stable` and `mainline`, node's `current` and `lts`):
_BRANCH = "a build of a git branch's newest commit, pushed again with each commit"
_PRE_RELEASE = "the newest pre-release, moved to each next one"
_NEWEST_OF_A_LINE = "the newest release of a line, moved to each next release"
FLOATING_TAGS: Mapping[str, str] = MappingProxyType(
    {
        "latest": "the tag a push without one gets (docs.docker.com/reference/cli/docker/image/tag): whatever was "
        "pushed last",
        "main": _BRANCH,
        "master": _BRANCH,
        "trunk": _BRANCH,
        "head": "git's HEAD, the newest commit, rebuilt with each one",
        "dev": _BRANCH,
        "develop": _BRANCH,
        "devel": "the next release while it is developed (ubuntu:devel), rebuilt as it goes",
        "edge": "the newest build ahead of any release (alpine:edge), rebuilt as it goes",
        "nightly": "rebuilt every night from the newest commit",
        "snapshot": "the newest build of the development line, rebuilt as it goes",
        "canary": "the newest build, handed out before it is released",
        "alpha": _PRE_RELEASE,
        "beta": _PRE_RELEASE,
        "preview": _PRE_RELEASE,
        "next": _PRE_RELEASE,
        "testing": _PRE_RELEASE,
        "unstable": _PRE_RELEASE,
        "experimental": _PRE_RELEASE,
        "stable": _NEWEST_OF_A_LINE,
        "current": _NEWEST_OF_A_LINE,
        "release": _NEWEST_OF_A_LINE,
        "lts": _NEWEST_OF_A_LINE,
        "mainline": _NEWEST_OF_A_LINE,
        "rolling": "the newest release of a distribution, moved to each next one (ubuntu:rolling)",
    }
)


def floating_tag(tag: str) -> str | None:
    """Why `tag` names no release (FLOATING_TAGS, in any case, blanks around it ignored), or None for a tag that may
    name one."""
    return FLOATING_TAGS.get(tag.strip().lower())


ABSOLUTE_PATH_PATTERN = r"^/[A-Za-z0-9._/-]{0,254}$"
# A file's absolute path: as ABSOLUTE_PATH_PATTERN, but its last part names a file: not empty (`/`, `/etc/ssl/`),
# `.` or `..` (a directory, which the provider would fail to read only at `pulumi up`). Its bound of 255 characters is
# the `max_length` of `LocalFile`.
FILE_PATH_PATTERN = r"^/([A-Za-z0-9._/-]*/)?([A-Za-z0-9_-]|\.[A-Za-z0-9_-]|\.\.[A-Za-z0-9._-])[A-Za-z0-9._-]*$"
PROFILE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"
FABRIC_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+){0,4}$"
QUALIFIED_ATTRIBUTE_PATTERN = (
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z_][A-Za-z0-9_]{0,31}$"
)
REQUEST_REFERENCE_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?$"
PRODUCT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 ._()/+-]{0,127}$"
LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
LABEL_KEY_PATTERN = rf"^({LABEL_PREFIX}/)?{LABEL_NAME}$"
# The prefix's bound of 253 characters (k8s.io/apimachinery IsQualifiedName), which no pattern of the shared
# syntax can state beside the prefix's shape: a second pattern every label key must also match.
LABEL_PREFIX_BOUND_PATTERN = r"^([^/]{0,253}/)?[^/]*$"
LABEL_VALUE_PATTERN = rf"^({LABEL_NAME})?$"
# A Nebius duration (pulumi-nebius 0.6.73: decimal numbers, each with an optional fraction and a unit
# among ns, us, ms, s, m, h, d), never negative; `0` alone is allowed.
DURATION_PATTERN = r"^(0|([0-9]{1,6}(\.[0-9]{1,9})?(ns|us|ms|s|m|h|d)){1,6})$"
PERCENT_PATTERN = r"^(100|[1-9]?[0-9])%$"
CONDITION_TYPE_PATTERN = r"^[A-Z][A-Za-z0-9]{0,62}$"
# A chart repository or mirror: classic (https://, or http:// inside a private network) or OCI. No user or
# password part: a credential in the URL would reach the release's inputs, the state and the plan in clear. The host
# is a name or an IPv6 literal in brackets (RFC 3986 section 3.2.2, `[::1]`). A name is labels of 1 to 63 letters,
# digits and '-', neither first nor last, joined by '.' (RFC 1123 section 2.1; a name's 253 characters are within the
# URL's bound); an IPv6 literal must parse as one, and the path have no dot segment, which no pattern of the shared
# syntax states (`url_problem`, which also words a refusal by the part that failed).
# A TCP port, 1 to 65535 without a leading zero (RFC 9293 section 3.1: 16 bits; 0 is reserved). Go's net/url, which
# Helm parses a repository URL with, checks only that a port is digits (validOptionalPort): `:99999` would fail only
# when the chart is fetched, at `pulumi up`.
PORT_PATTERN = r"([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
IMAGE_DOMAIN = IMAGE_DOMAIN.format(port=PORT_PATTERN)
IMAGE_PATTERN = (
    rf"^(?:{IMAGE_DOMAIN}/)?{IMAGE_PATH_COMPONENT}(?:/{IMAGE_PATH_COMPONENT})*"
    rf"(?::{IMAGE_TAG}(?:@{IMAGE_DIGEST})?|@{IMAGE_DIGEST})$"
)
# What follows a URL's scheme: the host, the port and the path, without user, password, query or fragment.
URL_AFTER_SCHEME = (
    r"([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"|\[[0-9A-Fa-f:.]{2,45}\])"
    f"(:{PORT_PATTERN})?"
    r"(/[A-Za-z0-9._~%+-]+)*/?"
)
CHART_REPOSITORY_PATTERN = rf"^(https?|oci)://{URL_AFTER_SCHEME}$"
# A private repository's login, sent as HTTP basic authentication (RFC 7617 section 2: the user-id holds no ':', and
# neither part a control character; the charset of other text is not agreed on). Printable ASCII: the username
# without a space, the password with one (no bound in the pattern: Go's RE2 refuses a repetition over 1000).
REPOSITORY_USERNAME_PATTERN = r"^[!-9;-~]+$"
REPOSITORY_USERNAME_LIMIT = 255
REPOSITORY_PASSWORD_PATTERN = r"^[ -~]+$"
# A resource.Quantity (k8s.io/apimachinery pkg/api/resource quantity.go: sign, digits with an optional fraction,
# and a binary suffix, a decimal suffix or an exponent), for a capacity request such as "40Gi".
QUANTITY_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$"
# A device capacity's QualifiedName (k8s.io/api resource/v1): an optional DNS-subdomain domain, then a C identifier.
CAPACITY_NAME_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z_][A-Za-z0-9_]{0,31}$"
)
# BillingV1PricingPolicyPricingMaxPriceV1Args.max_price: "Per-GPU hourly limit in USD, decimal string 3 digits precision".
PRICE_PATTERN = r"^(0|[1-9][0-9]{0,3})(\.[0-9]{1,3})?$"
# A price's day and where it comes from (prices/nebius.yaml, nebius-dra:priceOverrides).
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
SOURCE_PATTERN = r"^[\x21-\x7e]([\x20-\x7e]{0,298}[\x21-\x7e])?$"
# A price's source, beside SOURCE_PATTERN: an http(s) URL by the repository URLs' rule (no user or password: a
# credential would be printed in every plan and cost report) with an optional fragment that only names a place in the
# page (`#gpu`, `#section-4.2`: what the redactor shows, components/redaction.py ANCHOR_PATTERN), or a reference
# without ':' (a contract number). A colon is what a scheme (`javascript:`, `ftp:`, RFC 3986 section 3.1) and a
# user's password (`u:pw@`) need, so a text without one can hold neither, nor a URL inside it that the markdown
# report would show as a Nebius page.
PRICE_SOURCE_PATTERN = rf"^(https?://{URL_AFTER_SCHEME}(#{ANCHOR_PATTERN})?|[^:]*)$"


# A kubernetesVersion: a minor `policies/dra_minors.json` has a row for (its DRA gates, the API fields each guards, the
# schema of its objects), as MAJOR.MINOR or Nebius's MAJOR.MINOR-nebius-node.N. A minor without a row is refused: the
# stack would judge its templates by another minor's gates. Generated from the table, so a new row is a new minor.
KUBERNETES_MINORS_TEXT = " or ".join(
    filter(None, [", ".join(f'"{minor}"' for minor in SUPPORTED_MINORS[:-1]), f'"{SUPPORTED_MINORS[-1]}"'])
)
KUBERNETES_VERSION_PATTERN = (
    rf"^({'|'.join(re.escape(minor) for minor in SUPPORTED_MINORS)})(-nebius-node\.[0-9]{{1,6}})?$"
)
KUBERNETES_VERSION_RULE = (
    f"allowed: MAJOR.MINOR or MAJOR.MINOR-nebius-node.N of a minor the stack has DRA rules for "
    f"({MINORS_TABLE.relative_to(MINORS_TABLE.parents[1])}): {KUBERNETES_MINORS_TEXT}"
)


def optional(pattern: str) -> str:
    """`pattern` (anchored with ^ and $) or the empty string, still anchored at both ends."""
    return rf"^(?:{pattern[1:-1]})?$"


MAX_NODES = 100  # Nebius: node counts 0-100 (fixed, autoscaling max, system count).
MAX_BOOT_DISK_GIB = 65536
MAX_DEVICES_PER_CLAIM = 32  # k8s.io/api resource/v1 AllocationResultsMaxSize.
MAX_REQUESTS = 32  # DeviceRequestsMaxSize (= AllocationResultsMaxSize).
MAX_SUBREQUESTS = 8  # FirstAvailableDeviceRequestMaxSize.
MAX_SELECTORS = 32  # DeviceSelectorsMaxSize.
MAX_CONSTRAINTS = 32  # DeviceConstraintsMaxSize.
MAX_CONFIGS = 32  # DeviceConfigMaxSize.
MAX_CAPACITY_BLOCK_GROUPS = 16
MAX_AUTO_REPAIR_CONDITIONS = 16

LABEL_KEY_RULE = (
    "expected [prefix/]name: an optional DNS-subdomain prefix (at most 253 characters) and a name of at most "
    "63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
)
LABEL_VALUE_RULE = (
    "expected at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (or empty)"
)


def _label_prefix_bounded(key: str) -> str:
    """A label key's second pattern, refused with the error of its first, so the user reads the same message."""
    if re.fullmatch(LABEL_PREFIX_BOUND_PATTERN, key) is None:
        raise PydanticCustomError(
            "string_pattern_mismatch",
            "String should match pattern '{pattern}'",
            {"pattern": LABEL_PREFIX_BOUND_PATTERN},
        )
    return key


LabelKey = Annotated[
    StrictStr,
    Field(
        pattern=LABEL_KEY_PATTERN,
        max_length=317,
        description=LABEL_KEY_RULE,
        json_schema_extra={"allOf": [{"pattern": LABEL_PREFIX_BOUND_PATTERN}]},
    ),
    AfterValidator(_label_prefix_bounded),
]
LabelValue = Annotated[StrictStr, Field(pattern=LABEL_VALUE_PATTERN, max_length=63, description=LABEL_VALUE_RULE)]
DnsLabel = Annotated[
    StrictStr,
    Field(
        pattern=DNS_LABEL_PATTERN,
        max_length=63,
        description="expected a DNS label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit",
    ),
]
# The namespaces a cluster is created with (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces,
# "Initial namespaces"), and the prefix the same page reserves for Kubernetes system namespaces ("Avoid creating
# namespaces with the prefix kube-"). components/config/namespaces.py refuses them for every namespace the stack
# creates; `Namespace` carries the rule into the published schema.
KUBERNETES_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
RESERVED_NAMESPACE_PREFIX = "kube-"
RESERVED_NAMESPACE_PATTERN = f"^{RESERVED_NAMESPACE_PREFIX}"
# A namespace the stack creates or installs into: a DNS label that the schema refuses where the program does (the
# program's message names the rule; an editor flags the value).
Namespace = Annotated[
    DnsLabel,
    Field(
        json_schema_extra={
            "allOf": [
                {"not": {"enum": list(KUBERNETES_NAMESPACES)}},
                {"not": {"pattern": RESERVED_NAMESPACE_PATTERN}},
            ]
        }
    ),
]
DnsSubdomain = Annotated[
    StrictStr,
    Field(
        pattern=DNS_SUBDOMAIN_PATTERN,
        max_length=253,
        description="expected lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters",
    ),
]
IMAGE_RULE = (
    f"allowed: an image reference [registry/]path pinned by a tag (:tag), a digest (@algorithm:hex) or both, such as "
    f"nvidia/cuda:13.1.1-runtime-ubuntu24.04, at most {IMAGE_LIMIT} ASCII characters: path components of lowercase "
    "letters and digits joined by '.', '_', '__' or '-'; a registry with a '.' or a port (1 to 65535), localhost or "
    "[IPv6]; a tag of 1 to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-', naming a release "
    f"(not one that moves: {', '.join(FLOATING_TAGS)}); a "
    "digest algorithm:hex (sha256:<64 hex digits>)"
)
_REGISTRY_LIKE = re.compile(r"[^/]*[.:][^/]*|localhost|\[[^/]*")


def image_reference_problem(image: str) -> str | None:
    """The first part of an image reference that IMAGE_PATTERN or its bound refuses, in words, or None when it takes
    it. A part is quoted only when `shown` would quote the whole reference: `user:pw@host/x:1` is named by position."""
    if len(image) > IMAGE_LIMIT:
        return f"it has {len(image)} characters, over the limit of {IMAGE_LIMIT}"
    for position, character in enumerate(image, 1):
        if not ("!" <= character <= "~"):
            name = unicodedata.name(character, "")
            return f"character {position} is U+{ord(character):04X}{' ' + name if name else ''}"
    if re.fullmatch(IMAGE_PATTERN, image):
        return None
    hidden = quotable(image) != image

    def named(part: str) -> str:
        return "" if hidden else f" {shown(part)}"

    rest, at, digest = image.partition("@")
    if at and not re.fullmatch(IMAGE_DIGEST, digest):
        return "its digest (after '@') is not algorithm:hex with at least 32 hex digits"
    slash, colon = rest.rfind("/"), rest.rfind(":")
    name, tag = (rest[:colon], rest[colon + 1 :]) if colon > slash else (rest, None)
    if tag is not None and not re.fullmatch(IMAGE_TAG, tag):
        return f"its tag (after the last ':'){named(tag)} is not 1 to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'"
    components = name.split("/")
    if len(components) > 1 and _REGISTRY_LIKE.fullmatch(components[0]):
        registry, components = components[0], components[1:]
        if not re.fullmatch(IMAGE_DOMAIN, registry):
            _, has_port, port = registry.rpartition(":") if not registry.endswith("]") else (registry, "", "")
            if has_port and re.fullmatch(r"[0-9]{1,6}", port) and not re.fullmatch(PORT_PATTERN, port):
                return f"its registry's port is {port}: 1 to 65535, without a leading zero"
            return f"its registry (before the first '/'){named(registry)} is not host[:port]"
    for number, component in enumerate(components, 1):
        if not component:
            return f"its path component {number} is empty ('//' or a '/' at an end)"
        if not re.fullmatch(IMAGE_PATH_COMPONENT, component):
            fault = "has an uppercase letter" if component.lower() != component else "is malformed"
            return (
                f"its path component {number}{named(component)} {fault}: lowercase letters and digits joined by one "
                "'.', one '_', '__' or '-'s"
            )
    if tag is None and not at:
        return "it has no tag; pin one (for example nvidia/cuda:13.1.1-runtime-ubuntu24.04) so every run pulls the same image"
    return "it is not [registry/]path then :tag, @digest or both"


# What a part's problem says when the part may hold a credential: the whole value is then shown by its shape.
_NOT_QUOTED = "may hold a credential (not quoted)"
RefusedByPart = Callable[[Any, ValidatorFunctionWrapHandler], Any]


def refused_by_part(problem_of: Callable[[str], str | None], otherwise: str, rule: str) -> RefusedByPart:
    """A wrap validator for a text field whose refusal names the part that failed (`problem_of`'s words, such as `its
    registry's port is 99999`; `otherwise` when the type's pattern refused what `problem_of` finds nothing in), then
    `rule`: one rule of many parts does not say which one failed. A value whose problem is a part that may hold a
    credential is shown by its shape (`shape`), never quoted."""

    def validate(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            checked, refused = handler(value), False
        except ValidationError:
            if not isinstance(value, str):
                raise  # the type's own refusal
            checked, refused = value, True
        problem = problem_of(checked)
        if problem is None and not refused:
            return checked
        quoted = json.dumps(shape(value)) if problem and _NOT_QUOTED in problem else shown(value)
        raise PydanticCustomError("value_error", "{error}", {"error": f"got {quoted}: {problem or otherwise}; {rule}"})

    return validate


Image = Annotated[
    StrictStr,
    Field(pattern=IMAGE_PATTERN, max_length=IMAGE_LIMIT, description=IMAGE_RULE),
    WrapValidator(refused_by_part(image_reference_problem, "it is not an image reference", IMAGE_RULE)),
]
ChartVersion = Annotated[
    StrictStr,
    Field(
        pattern=CHART_VERSION_PATTERN,
        max_length=32,
        description="expected an exact chart version such as 25.7.0 or v25.10.1 (ranges are not pinned)",
    ),
]


CHART_REPOSITORY_RULE = (
    "allowed: https://, http:// or oci:// then host[:port][/path] (host: DNS labels or [IPv6]; port 1 to 65535; no "
    "'.' or '..' path segment; no query or fragment; no host label or path segment that may hold a credential, as "
    "decoded: a token's form such as ghp_... or eyJ..., a '@', '=', '&' or ';', or a word shaped as a Cloudsmith or "
    f"Gemfury token, {TOKEN_WORD_LENGTH} or more letters and digits with both cases and a digit, or "
    f"{HEX_TOKEN_LENGTH} or more hex digits (a git commit id as a whole path segment being none), without user or "
    "password: a login goes in "
    "nebius-dra:chartRepositoryUsername and nebius-dra:chartRepositoryPassword; or empty for the chart's upstream"
)
CHART_REPOSITORY_LIMIT = 255
_URL_SCHEMES = ("https", "http", "oci")
# The characters CHART_REPOSITORY_PATTERN has anywhere; the look-alikes of '@' a terminal shows as it (U+FF20, U+FE6B).
_URL_CHARACTERS = re.compile(r"[A-Za-z0-9._~%+:/\[\]-]")
_AT_SIGNS = ("@", "\uff20", "\ufe6b")
_HOST_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_PATH_SEGMENT = re.compile(r"[A-Za-z0-9._~%+-]+")
# A host label or a path segment may carry a credential: some services put the token in the path (Cloudsmith's
# entitlement URLs `https://dl.cloudsmith.io/<token>/org/repo/helm/charts/`, Gemfury's `https://repo.fury.io/<token>/user/`)
# or hand out a host per customer, and the URL is printed by the plan, written to the values files and kept in the
# release's inputs in clear. A label, or a segment as a client decodes it, is refused when `may_hold_a_credential`
# says so (a token's form, '@', '=', ...) or when a word of it is token-shaped (components/redaction.py
# `token_shaped_word`, as a price's source is judged); a git object id (40 or 64 lowercase hex digits) as a whole
# segment is none (a raw permalink).
_GIT_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def url_problem(url: str) -> str | None:
    """The first part of a repository URL that CHART_REPOSITORY_PATTERN, its bound or what no pattern states refuses,
    in words, or None for a URL the field takes. What could be a credential is named, never quoted: a user part, a
    port that is no number (`robot:hunter2/...`); the rest is quoted through `shown`, which hides what has one's shape.

    No pattern of the shared syntax states two rules: an IPv6 literal must parse as one (`[::::]` has the pattern's
    characters and is none), and the path has no dot segment, as it is or percent-encoded (`/..`, `/%2e%2e`, `/.`): a
    client removes them before it fetches (RFC 3986 section 5.2.4, and section 6.2.2.2: `%2e` is `.`), so the URL the
    plan shows would not be the one Helm reads."""
    if not url:
        return None
    if len(url) > CHART_REPOSITORY_LIMIT:
        return f"it has {len(url)} characters, over the limit of {CHART_REPOSITORY_LIMIT}"
    scheme, separator, after_scheme = url.partition("://")
    if not separator:
        return "it has no scheme (https://, http:// or oci://)"
    if scheme not in _URL_SCHEMES:
        return f"its scheme is {shown(scheme)}"
    authority = re.split(r"[/?#\\]", after_scheme, maxsplit=1)[0]
    if any(sign in urllib.parse.unquote(authority) for sign in _AT_SIGNS):
        return "it has a user or password part (before an @)"
    for mark, part in (("?", "a query (?...)"), ("#", "a fragment (#...)")):
        if mark in after_scheme:
            return f"it has {part}"
    for position, character in enumerate(url, 1):
        if not _URL_CHARACTERS.fullmatch(character):
            name = unicodedata.name(character, "")
            return f"character {position} is U+{ord(character):04X}{' ' + name if name else ''}"
    host, _, path = after_scheme.partition("/")
    return _host_problem(host) or _path_problem(path)


def _host_problem(authority: str) -> str | None:
    """What is wrong with `host[:port]`, or None."""
    port: str | None
    if authority.startswith("["):
        literal, bracket, after = authority[1:].partition("]")
        try:
            if not bracket or not re.fullmatch(r"[0-9A-Fa-f:.]{2,45}", literal):
                raise ValueError(literal)
            ipaddress.IPv6Address(literal)
        except ValueError:
            return "its host in brackets is no IPv6 address"
        if after and not after.startswith(":"):
            return "its IPv6 host is followed by something other than a :port"
        port = after[1:] if after else None
    else:
        host, colon, after = authority.partition(":")
        port = after if colon else None
        if not host:
            return "it has no host"
        for number, label in enumerate(host.split("."), 1):
            if not _HOST_LABEL.fullmatch(label):
                return f"its host's label {number} is {shown(label)}: 1 to 63 letters, digits and '-', '-' neither first nor last"
            if _may_hold_a_credential(label):
                return f"its host's label {number} {_NOT_QUOTED}"
    if port is None:
        return None
    if not port.isascii() or not port.isdigit():
        return "its port (after ':') is not a number"  # not quoted: `robot:hunter2` is a user and a password
    if not re.fullmatch(PORT_PATTERN, port):
        return f"its port is {port}: 1 to 65535, without a leading zero"
    return None


def _path_problem(path: str) -> str | None:
    """What is wrong with the path after the host's '/', or None; a trailing '/' is allowed."""
    segments = path.split("/")
    for number, segment in enumerate(segments, 1):
        if segment == "" and number == len(segments):
            return None
        if segment == "":
            return f"the path's segment {number} is empty ('//')"
        if not _PATH_SEGMENT.fullmatch(segment):
            return f"the path's segment {number} is {shown(segment)}: letters, digits, '.', '_', '~', '%', '+' and '-'"
        if (decoded := urllib.parse.unquote(segment)) in (".", ".."):
            encoded = ", percent-encoded" if decoded != segment else ""
            return f"the path's segment {number} is {shown(decoded)}{encoded}, which a client removes before it fetches"
        if _may_hold_a_credential(decoded):
            return f"its path segment {number} {_NOT_QUOTED}"
    return None


def _may_hold_a_credential(segment: str) -> bool:
    """True when a host label or a decoded path segment may hold a credential (see `_GIT_OBJECT_ID`)."""
    if may_hold_a_credential(segment):
        return True
    if _GIT_OBJECT_ID.fullmatch(segment):
        return False
    return holds_a_token_shaped_word(segment)


ChartRepository = Annotated[
    StrictStr,
    Field(
        pattern=optional(CHART_REPOSITORY_PATTERN), max_length=CHART_REPOSITORY_LIMIT, description=CHART_REPOSITORY_RULE
    ),
    WrapValidator(refused_by_part(url_problem, "it is not scheme://host[:port][/path]", CHART_REPOSITORY_RULE)),
]

# A file the Kubernetes provider reads on the machine that runs `pulumi` (a repository's TLS files), or empty.
LocalFile = Annotated[
    StrictStr,
    Field(
        pattern=optional(FILE_PATH_PATTERN),
        max_length=255,
        description="expected a file's absolute path such as /etc/ssl/certs/mirror-ca.pem, or empty: at most 255 "
        "characters, '/' then ASCII letters, digits, '.', '_', '-' and '/' (no space), naming a file (not ending "
        "in '/', '.' or '..')",
    ),
]


USERNAME_RULE = (
    "expected a user name of printable ASCII without a space or ':' (a basic-authentication user-id holds no ':', "
    "RFC 7617), or empty; a password goes in nebius-dra:chartRepositoryPassword, set with "
    "`pulumi config set nebius-dra:chartRepositoryPassword --secret < password-file`"
)


def _username_unquoted(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A user name the pattern or the bound refuses is described, never quoted: what follows a space, a tab or a
    look-alike colon in it is often the password pasted with it (`robot HUNTER2`), whose text no message may show.
    The message gives its length and its first character that is not allowed, by code point and Unicode name."""
    try:
        return handler(value)
    except ValidationError:
        if not isinstance(value, str):
            raise  # the type's own refusal; the value is a credential to every message (`credentials_in`)
        length = f"{len(value)} characters"
        if len(value) > REPOSITORY_USERNAME_LIMIT:
            problem = f"{length}, over the limit of {REPOSITORY_USERNAME_LIMIT}"
        else:
            position, character = next(
                (index, char)
                for index, char in enumerate(value, 1)
                if not re.fullmatch(REPOSITORY_USERNAME_PATTERN, char)
            )
            name = unicodedata.name(character, "")
            problem = f"{length}, character {position} is U+{ord(character):04X}{' ' + name if name else ''}"
        raise PydanticCustomError(
            "value_error",
            "{error}",
            {
                "error": f"got a user name of {problem} (the text is not quoted: it may hold a password); {USERNAME_RULE}"
            },
        ) from None


RepositoryUsername = Annotated[
    StrictStr,
    Field(
        pattern=optional(REPOSITORY_USERNAME_PATTERN), max_length=REPOSITORY_USERNAME_LIMIT, description=USERNAME_RULE
    ),
    WrapValidator(_username_unquoted),
]


def valid_username(value: Any) -> bool:
    """A user name the model takes: one no message needs to hide (`credentials_in`)."""
    return (
        isinstance(value, str)
        and len(value) <= REPOSITORY_USERNAME_LIMIT
        and re.fullmatch(optional(REPOSITORY_USERNAME_PATTERN), value) is not None
    )


NodeCount = Annotated[
    StrictInt,
    Field(
        ge=1,
        le=MAX_NODES,
        description=f"expected a whole number from 1 to {MAX_NODES} (Nebius allows at most {MAX_NODES} nodes)",
    ),
]
BootDiskGib = Annotated[
    StrictInt,
    Field(ge=64, le=MAX_BOOT_DISK_GIB, description=f"expected a whole number from {64} to {MAX_BOOT_DISK_GIB}"),
]
RequestReference = Annotated[
    StrictStr,
    Field(
        pattern=REQUEST_REFERENCE_PATTERN, max_length=255, description="expected a request name, or request/subrequest"
    ),
]


class Shape(BaseModel):
    """Strict: no coercion (a string is never a number), no unknown field, no NaN or infinity."""

    model_config = ConfigDict(
        strict=True, extra="forbid", frozen=True, allow_inf_nan=False, regex_engine="rust-regex", populate_by_name=False
    )
