"""The selector checks the API server runs (length, parse, type, result type, literals, cost), cached per distinct expression and minor."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from components.cel.checked_ast import Node, decode_any
from components.cel.environment import device_environment
from components.cel.walker import TOP, Walker, shown_type
from components.dra_minors import CEL_DEVICE_FIELDS, SUPPORTED_MINORS, cel_device_fields, gate_off_reason, minor_of

# k8s.io/api/resource/v1/types.go (v0.34.10).
CEL_SELECTOR_MAX_LENGTH = 10 * 1024
CEL_SELECTOR_MAX_COST = 1_000_000

# Macros cel-go has and the C++ parser lacks: a selector using them is not type-checked.
_UNCHECKABLE_MACROS = {"existsOne", "transformList", "transformMap", "transformMapEntry"}
_THREE_ARGUMENT_MACROS = {"all", "exists", "exists_one"}
_ERROR_LINE = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*?)(?: \(in container '[^']*'\))?$", re.MULTILINE)


def selector_problem(expression: str, kubernetes_version: str = SUPPORTED_MINORS[0]) -> str | None:
    """Why `expression` cannot work as a device selector on `kubernetes_version`, or None.

    Either why the API server would refuse it (`selector_refusal`), or, for a selector it
    accepts, that it reads a GPU attribute the NVIDIA driver no longer publishes
    (`removed_attribute`). The message continues "selectors[0] ...": "is not valid CEL: Syntax
    error: ...", "is refused by the API server: undeclared reference to 'foo' (line 1, column 1)",
    "uses the GPU attribute index, which ...".
    """
    refusal = selector_refusal(expression, kubernetes_version)
    if refusal:
        return refusal
    removed = removed_attribute(expression, kubernetes_version)
    if removed:
        return (
            f"uses the GPU attribute {removed}, which the NVIDIA DRA driver stopped publishing in 25.8.0: "
            "the API server accepts the selector, but evaluating it fails on every GPU (or, behind has(), "
            "never matches), so the claim is never allocated; select on uuid, productName, pciBusID or pcieRoot instead"
        )
    return None


def selector_refusal(expression: str, kubernetes_version: str = SUPPORTED_MINORS[0]) -> str | None:
    """Why the API server of `kubernetes_version` would refuse `expression` as a new device selector, or None.

    The minors differ here in the fields of `device` they declare (`celDevice` in policies/dra_minors.json).
    """
    size = len(expression.encode("utf-8"))
    if size > CEL_SELECTOR_MAX_LENGTH:
        return (
            f"is {size} bytes long; the API server refuses selectors longer than "
            f"{CEL_SELECTOR_MAX_LENGTH} bytes (CELSelectorExpressionMaxLength) without compiling them"
        )
    return _analysis(expression, minor_of(kubernetes_version)).refusal


def removed_attribute(expression: str, kubernetes_version: str = SUPPORTED_MINORS[0]) -> str | None:
    """The GPU attribute (`index` or `minor`) that `expression` reads although the NVIDIA driver removed it, or None.

    Such a selector is valid CEL, so the API server accepts it, but from driver 25.8.0 on the
    lookup fails on every GPU and the claim is never allocated. Found by walking the AST, so
    only reads count: `device.attributes["gpu.nvidia.com"].index`, `[...]["index"]`,
    `["ind" + "ex"]` (constant keys and domains are evaluated), `.?index`, and the same
    through `cel.bind(g, device.attributes["gpu.nvidia.com"], g.index)` or a conditional
    `(c ? device.attributes["gpu.nvidia.com"] : x).index`. Not counted: presence tests
    (`has(...index)`, `"index" in ...`, which are merely false), other domains
    (`device.attributes["dra.net"].index`), capacities, the semver method `.minor()`, strings
    that contain the word, and lookups whose domain or name is known only at run time
    (`device.attributes[device.driver].index`, a comprehension variable). A read guarded by
    `has()` counts: it can never be true on current drivers. Selectors the API server refuses
    are not analysed.
    """
    if len(expression.encode("utf-8")) > CEL_SELECTOR_MAX_LENGTH:
        return None
    return _analysis(expression, minor_of(kubernetes_version)).removed


def required_products(expression: str, kubernetes_version: str = SUPPORTED_MINORS[0]) -> tuple[str, ...] | None:
    """The GPU product names (`productName`) one of which a device must have for `expression` to select it, when a
    term of its top-level `&&` says so with constant names (`Walker.required_products`); None otherwise."""
    if len(expression.encode("utf-8")) > CEL_SELECTOR_MAX_LENGTH:
        return None
    return _analysis(expression, minor_of(kubernetes_version)).products


@dataclass(frozen=True)
class _Analysis:
    refusal: str | None
    removed: str | None
    checked: bool  # False: parsed only (a macro the C++ parser lacks), or refused before type-checking
    products: tuple[str, ...] | None = None  # Walker.required_products, of a selector the API server accepts


@lru_cache(maxsize=4096)
def _analysis(expression: str, minor: str = SUPPORTED_MINORS[0]) -> _Analysis:
    environment = device_environment(cel_device_fields(minor))
    try:
        compiled = environment.compile(expression)
    except RuntimeError as error:
        try:
            parsed = environment.compile(expression, disable_check=True)
        except RuntimeError as parse_error:
            return _Analysis(f"is not valid CEL: {_describe(parse_error, minor)}", None, checked=False)
        tree = decode_any(parsed.serialize())
        if tree is not None and _uses_uncheckable_macro(tree.root):
            return _Analysis(None, Walker(tree).removed(), checked=False)
        return _Analysis(f"is refused by the API server: {_describe(error, minor)}", None, checked=False)
    tree = decode_any(compiled.serialize())
    if tree is None:  # not expected: serialize() has always written a CheckedExpr
        return _Analysis(None, None, checked=True)
    walker = Walker(tree)
    result_type = str(compiled.return_type())
    if result_type not in ("BOOL", "DYN"):
        go_type = walker.go_type(tree.root, TOP)
        wrong_type = shown_type(go_type) if go_type else result_type.lower()
        return _Analysis(
            f"is refused by the API server: it must evaluate to bool or the unknown type, not {wrong_type}",
            None,
            checked=True,
        )
    if result_type == "DYN" and walker.certainly_dyn(tree.root):
        return _Analysis(
            "is refused by the API server: it must evaluate to bool or the unknown type, not dyn", None, checked=True
        )
    refusal = walker.literal_problem() or walker.aggregate_problem()
    if refusal:
        return _Analysis(f"is refused by the API server: {refusal}", None, checked=True)
    cost = walker.cost(tree.root)
    if cost > CEL_SELECTOR_MAX_COST:
        return _Analysis(
            f"is refused by the API server as too complex: its worst-case cost is at least {cost}, "
            f"above the limit of {CEL_SELECTOR_MAX_COST} (CELSelectorExpressionMaxCost)",
            None,
            checked=True,
        )
    return _Analysis(None, walker.removed(), checked=True, products=walker.required_products())


def _describe(error: Exception, minor: str) -> str:
    text = str(error)
    found = [f"{message} (line {line}, column {column})" for line, column, message in _ERROR_LINE.findall(text)]
    message = "; ".join(found) if found else text.splitlines()[0]
    for name, gate in CEL_DEVICE_FIELDS.items():
        reason = gate and gate_off_reason(gate, minor)
        if reason and f"undefined field '{name}'" in message:
            message += f"; device.{name} is declared only with {reason}"
    return message


def _uses_uncheckable_macro(node: Node) -> bool:
    return any(
        n.kind == "call"
        and (n.name in _UNCHECKABLE_MACROS or (n.name in _THREE_ARGUMENT_MACROS and n.target and len(n.args) == 3))
        for n in node.walk()
    )
