"""DRA device selectors (`resource.k8s.io/v1` CELDeviceSelector.expression), checked the way the API server checks them.

API: `selector_problem(expression)` says why a selector cannot work, or None: the API
server's refusal (`selector_refusal`) or, for a selector it accepts, a read of a GPU attribute
the NVIDIA driver no longer publishes (`removed_attribute`, which returns the attribute's
name). `cel_string(value)` writes a CEL string literal. Each distinct expression is compiled
once (cached), and cel-expr-python is imported on the first check, not with this module.

The API server compiles every selector of a new ResourceClaim(Template) or DeviceClass with
`dracel.GetCompiler(..).CompileCELExpression` and refuses it when it is too long, does not
parse, does not type-check in the `device` environment, evaluates to anything but bool or
google.protobuf.Any ("the unknown type", what an attribute value is), or when its
worst-case cost estimate is above the limit. This module repeats those checks with
cel-expr-python (Google's C++ CEL checker and runtime) and walks the checked AST for the rest.

Sources (Kubernetes 1.34, the version the stacks run; tags v0.34.x of the staging repositories):

* Limits: https://github.com/kubernetes/api/blob/v0.34.10/resource/v1/types.go,
  `CELSelectorExpressionMaxLength = 10 * 1024` (bytes: Go `len(string)`) and
  `CELSelectorExpressionMaxCost = 1000000`.
* Checks and their order: kubernetes/kubernetes pkg/apis/resource/validation/validation.go,
  `validateCELSelector`: length first (longer is not compiled), then compile, then
  `result.MaxCost > CELSelectorExpressionMaxCost` is "too complex, exceeds cost limit".
  A new expression is compiled in the `NewExpressions` environment.
* The environment: https://github.com/kubernetes/dynamic-resource-allocation/blob/v0.34.9/cel/compile.go,
  `newCompiler`: the variable `device` is the object `kubernetes.DRADevice` with `driver`
  (string), `attributes` (map domain -> map name -> AnyType: bool, int, string or semver at
  run time) and `capacity` (map domain -> map name -> Quantity); `allowMultipleAllocations`
  (bool) only with the DRAConsumableCapacity feature gate, off by default before 1.36. Which
  fields a minor declares is the table's (`celDevice` in policies/dra_minors.json, read from
  compile.go of v0.34.12, v0.35.4 and v0.36.3 by tests/test_dra_minors.py), so a stack's selectors
  see its own minor's `device`. `cel.bind` (ext.Bindings) since 1.31. The output type must be
  cel.BoolType or cel.AnyType.
* The base environment it extends: https://github.com/kubernetes/apiserver/blob/v0.34.10/pkg/cel/environment/base.go
  with the libraries in pkg/cel/library (semverlib.go, quantity.go, lists.go, regex.go,
  urls.go, ip.go, cidr.go, format.go). For a 1.34 API server new expressions get what was
  introduced up to 1.33 (its minimum compatibility version): strings v2, optional types,
  cross-type numeric comparisons, sets, two-variable comprehensions, semver v1; ext.Lists
  v3 (1.34) is not yet available to new expressions.
* Literal and homogeneity validators: https://github.com/google/cel-go/blob/v0.26.0/cel/validator.go
  (cel-go v0.26.0 is what apiserver v0.34 uses); typing: checker/checker.go and types.go;
  cost model: checker/cost.go.

Where the C++ checker differs, and how this module copes (it errs towards accepting):

* Attribute and capacity values are dyn here (google.protobuf.Struct is the only protobuf
  type CEL reads as a map of maps). The walks restore cel-go's types where it matters: a
  result read from an attribute value (`.x.y`, `[0]`, `dyn(...)`) is dyn there and refused;
  list and map literals compare attribute values as google.protobuf.Any and capacities as
  kubernetes.Quantity. Still accepted here but refused there: capacities used as numbers
  (`device.capacity["d"].memory > 1`) and some mixes of dyn and Any.
* Two-variable comprehensions (`all(k, v, ...)`, `existsOne`, `transformList`, ...) are not
  in the C++ parser: a selector using them is parsed but not type-checked.
* The cost estimate is a lower bound of cel-go's (loops over list literals and over the
  device's attribute maps, 32 entries each), so only selectors that are certainly too
  expensive are refused; one just under the limit here may still be over it there.
* String `format` calls are not checked against their arguments (cel-go's
  stringFormatValidator); the Authz libraries need variables DRA does not declare.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from components.dra_constants import GPU_DRIVER, REMOVED_GPU_ATTRIBUTES
from components.dra_minors import CEL_DEVICE_FIELDS, SUPPORTED_MINORS, cel_device_fields, gate_off_reason, minor_of

# k8s.io/api/resource/v1/types.go (v0.34.10).
CEL_SELECTOR_MAX_LENGTH = 10 * 1024
CEL_SELECTOR_MAX_COST = 1_000_000
# k8s.io/api/resource/v1/types.go: ResourceSliceMaxAttributesAndCapacitiesPerDevice bounds
# every attribute and capacity map, which is what the DRA size estimator tells cel-go.
MAX_DEVICE_MAP_ENTRIES = 32

# Macros cel-go has and the C++ parser lacks: a selector using them is not type-checked.
_UNCHECKABLE_MACROS = {"existsOne", "transformList", "transformMap", "transformMapEntry"}
_THREE_ARGUMENT_MACROS = {"all", "exists", "exists_one"}
_ERROR_LINE = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*?)(?: \(in container '[^']*'\))?$", re.MULTILINE)


# ---------------------------------------------------------------------------------------------
# CEL string literals


def cel_string(value: str) -> str:
    """A double-quoted CEL string literal that evaluates to `value`.

    JSON is not a subset of CEL here: `json.dumps` writes a character outside the Basic
    Multilingual Plane as a surrogate pair ("\\ud83d\\ude00"), which CEL refuses ("Unicode
    value \\ud83d is invalid"); CEL spells it \\U0001f600. Printable characters stay as they
    are; quotes, backslashes and non-printable characters are escaped.
    """
    out = ['"']
    for char in value:
        code = ord(char)
        if char in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[char])
        elif 0xD800 <= code <= 0xDFFF:
            raise ValueError(f"{value!r} holds the lone surrogate U+{code:04X}, which no CEL string can hold")
        elif char.isprintable():
            out.append(char)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_SIMPLE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


# ---------------------------------------------------------------------------------------------
# Public checks


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


# ---------------------------------------------------------------------------------------------
# Analysis (cached per distinct expression)


@dataclass(frozen=True)
class _Analysis:
    refusal: str | None
    removed: str | None
    checked: bool  # False: parsed only (a macro the C++ parser lacks), or refused before type-checking


@lru_cache(maxsize=4096)
def _analysis(expression: str, minor: str = SUPPORTED_MINORS[0]) -> _Analysis:
    environment = _environment(cel_device_fields(minor))
    try:
        compiled = environment.compile(expression)
    except RuntimeError as error:
        try:
            parsed = environment.compile(expression, disable_check=True)
        except RuntimeError as parse_error:
            return _Analysis(f"is not valid CEL: {_describe(parse_error, minor)}", None, checked=False)
        tree = _decode_any(parsed.serialize())
        if tree is not None and _uses_uncheckable_macro(tree.root):
            return _Analysis(None, _Walker(tree).removed(), checked=False)
        return _Analysis(f"is refused by the API server: {_describe(error, minor)}", None, checked=False)
    tree = _decode_any(compiled.serialize())
    if tree is None:  # not expected: serialize() has always written a CheckedExpr
        return _Analysis(None, None, checked=True)
    walker = _Walker(tree)
    result_type = str(compiled.return_type())
    if result_type not in ("BOOL", "DYN"):
        go_type = walker.go_type(tree.root, _TOP)
        wrong_type = _type_name(go_type) if go_type else result_type.lower()
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
    return _Analysis(None, walker.removed(), checked=True)


def _describe(error: Exception, minor: str) -> str:
    text = str(error)
    found = [f"{message} (line {line}, column {column})" for line, column, message in _ERROR_LINE.findall(text)]
    message = "; ".join(found) if found else text.splitlines()[0]
    for name, gate in CEL_DEVICE_FIELDS.items():
        reason = gate and gate_off_reason(gate, minor)
        if reason and f"undefined field '{name}'" in message:
            message += f"; device.{name} is declared only with {reason}"
    return message


def _uses_uncheckable_macro(node: _Node) -> bool:
    return any(
        n.kind == "call"
        and (n.name in _UNCHECKABLE_MACROS or (n.name in _THREE_ARGUMENT_MACROS and n.target and len(n.args) == 3))
        for n in node.walk()
    )


# ---------------------------------------------------------------------------------------------
# The environment


@lru_cache(maxsize=4)
def _environment(device_fields: tuple[str, ...]) -> Any:
    """The DRA environment of a Kubernetes API server whose `device` has `device_fields`, built on first use
    (~30 ms with the import); the libraries are 1.34's."""
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

    return cel.NewEnv(
        descriptor_pool=_descriptor_pool(device_fields),
        variables={"device": cel.Type("kubernetes.DRADevice")},
        extensions=[
            ext_strings.ExtStrings(2),
            ext_bindings.ExtBindings(),
            ext_optional.ExtOptional(),
            # Merged into the standard declarations (a plain `functions=` list may not
            # redeclare indexOf, string or the comparison operators).
            cel.CelExtension("kubernetes", _kubernetes_functions(cel)),
        ],
    )


@lru_cache(maxsize=1)
def _evaluator() -> Any:
    """An environment that can evaluate constant sub-expressions; the checking one cannot.

    Declarations without implementations make the C++ runtime register placeholders keyed by
    argument kinds, and e.g. the semver and quantity overloads of compareTo then collide
    ("CelFunction with specified parameters already registered") as soon as a program is built.
    """
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

    return cel.NewEnv(extensions=[ext_strings.ExtStrings(2), ext_bindings.ExtBindings(), ext_optional.ExtOptional()])


@lru_cache(maxsize=4)
def _descriptor_pool(device_fields: tuple[str, ...]) -> Any:
    """The object types of the environment as protobuf messages (kept alive here for the C++ side).

    `kubernetes.DRADevice` is a message so that `device.foo` and `device["driver"]` fail as in
    cel-go; `google.protobuf.Struct` is CEL's map(string, dyn), which makes `attributes` a
    map(string, map(string, dyn)), Kubernetes' map of maps of AnyType. Capacity gets the same
    type (see the module docstring). The library types (kubernetes.Semver, kubernetes.Quantity, ...) are
    field-less messages, as cel-go declares most of them (ObjectType): the C++ checker takes
    two opaque types of the same arity for colliding overloads.
    """
    from google.protobuf import descriptor_pb2, descriptor_pool, struct_pb2

    proto = descriptor_pb2.FieldDescriptorProto
    kubernetes = descriptor_pb2.FileDescriptorProto(
        name="nebius_dra/kubernetes.proto",
        package="kubernetes",
        syntax="proto3",
        dependency=["google/protobuf/struct.proto"],
    )
    for name in ("Semver", "Quantity", "URL", "NamedFormat"):
        kubernetes.message_type.add(name=name)
    unknown = set(device_fields) - {"driver", "attributes", "capacity", "allowMultipleAllocations"}
    if unknown:
        raise ValueError(f"policies/dra_minors.json declares device fields this checker cannot type: {sorted(unknown)}")
    device = kubernetes.message_type.add(name="DRADevice")
    if "driver" in device_fields:
        device.field.add(name="driver", number=1, type=proto.TYPE_STRING, label=proto.LABEL_OPTIONAL)
    for number, name in ((2, "attributes"), (3, "capacity")):
        if name not in device_fields:
            continue
        entry = device.nested_type.add(name=f"{name.capitalize()}Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=proto.TYPE_STRING, label=proto.LABEL_OPTIONAL)
        entry.field.add(
            name="value",
            number=2,
            type=proto.TYPE_MESSAGE,
            type_name=".google.protobuf.Struct",
            label=proto.LABEL_OPTIONAL,
        )
        device.field.add(
            name=name,
            number=number,
            type=proto.TYPE_MESSAGE,
            type_name=f".kubernetes.DRADevice.{entry.name}",
            label=proto.LABEL_REPEATED,
        )
    if "allowMultipleAllocations" in device_fields:
        device.field.add(name="allowMultipleAllocations", number=4, type=proto.TYPE_BOOL, label=proto.LABEL_OPTIONAL)
    net = descriptor_pb2.FileDescriptorProto(name="nebius_dra/net.proto", package="net", syntax="proto3")
    for name in ("IP", "CIDR"):
        net.message_type.add(name=name)
    pool = descriptor_pool.DescriptorPool()
    for file in (struct_pb2.DESCRIPTOR.serialized_pb, kubernetes.SerializeToString(), net.SerializeToString()):
        pool.AddSerializedFile(file)
    return pool


def _kubernetes_functions(cel: Any) -> list[Any]:
    """The declarations of k8s.io/apiserver/pkg/cel/library (v0.34.10) that a DRA selector can reach.

    Overload ids are prefixed so they cannot clash with the C++ standard library's.
    """
    t = cel.Type
    boolean, integer, uint, double, string = t.BOOL, t.INT, t.UINT, t.DOUBLE, t.STRING
    semver, quantity, url = t("kubernetes.Semver"), t("kubernetes.Quantity"), t("kubernetes.URL")
    ip, cidr, named_format = t("net.IP"), t("net.CIDR"), t("kubernetes.NamedFormat")
    param = t("~A")
    comparable = {
        "int": integer,
        "uint": uint,
        "double": double,
        "bool": boolean,
        "duration": t.DURATION,
        "timestamp": t.TIMESTAMP,
        "string": string,
        "bytes": t.BYTES,
    }
    summable = {"int": integer, "uint": uint, "double": double, "duration": t.DURATION}

    def overload(name: str, result: Any, *params: Any, member: bool = False) -> Any:
        return cel.Overload(f"k8s_{name}", result, list(params), is_member=member)

    declared: dict[str, list[Any]] = {
        # semverlib.go, SemverVersion(1)
        "semver": [
            overload("string_to_semver", semver, string),
            overload("string_bool_to_semver", semver, string, boolean),
        ],
        "isSemver": [
            overload("is_semver_string", boolean, string),
            overload("is_semver_string_bool", boolean, string, boolean),
        ],
        "isGreaterThan": [
            overload("semver_is_greater_than", boolean, semver, semver, member=True),
            overload("quantity_is_greater_than", boolean, quantity, quantity, member=True),
        ],
        "isLessThan": [
            overload("semver_is_less_than", boolean, semver, semver, member=True),
            overload("quantity_is_less_than", boolean, quantity, quantity, member=True),
        ],
        "compareTo": [
            overload("semver_compare_to", integer, semver, semver, member=True),
            overload("quantity_compare_to", integer, quantity, quantity, member=True),
        ],
        "major": [overload("semver_major", integer, semver, member=True)],
        "minor": [overload("semver_minor", integer, semver, member=True)],
        "patch": [overload("semver_patch", integer, semver, member=True)],
        # quantity.go (sign is a global function there, not a method)
        "quantity": [overload("string_to_quantity", quantity, string)],
        "isQuantity": [overload("is_quantity_string", boolean, string)],
        "sign": [overload("quantity_sign", integer, quantity)],
        "asApproximateFloat": [overload("quantity_get_float", double, quantity, member=True)],
        "asInteger": [overload("quantity_get_int", integer, quantity, member=True)],
        "isInteger": [overload("quantity_is_integer", boolean, quantity, member=True)],
        "add": [
            overload("quantity_add", quantity, quantity, quantity, member=True),
            overload("quantity_add_int", quantity, quantity, integer, member=True),
        ],
        "sub": [
            overload("quantity_sub", quantity, quantity, quantity, member=True),
            overload("quantity_sub_int", quantity, quantity, integer, member=True),
        ],
        # lists.go
        "isSorted": [
            overload(f"list_{n}_is_sorted_bool", boolean, t.List(p), member=True) for n, p in comparable.items()
        ],
        "sum": [overload(f"list_{n}_sum_{n}", p, t.List(p), member=True) for n, p in summable.items()],
        "max": [overload(f"list_{n}_max_{n}", p, t.List(p), member=True) for n, p in comparable.items()],
        "min": [overload(f"list_{n}_min_{n}", p, t.List(p), member=True) for n, p in comparable.items()],
        "indexOf": [overload("list_a_index_of_int", integer, t.List(param), param, member=True)],
        "lastIndexOf": [overload("list_a_last_index_of_int", integer, t.List(param), param, member=True)],
        # regex.go
        "find": [overload("string_find_string", string, string, string, member=True)],
        "findAll": [
            overload("string_find_all_string", t.List(string), string, string, member=True),
            overload("string_find_all_string_int", t.List(string), string, string, integer, member=True),
        ],
        # urls.go
        "url": [overload("string_to_url", url, string)],
        "isURL": [overload("is_url_string", boolean, string)],
        **{
            name: [overload(f"url_{name}", string, url, member=True)]
            for name in ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath")
        },
        "getQuery": [overload("url_get_query", t.Map(string, t.List(string)), url, member=True)],
        # ip.go and cidr.go
        "ip": [overload("string_to_ip", ip, string), overload("cidr_ip", ip, cidr, member=True)],
        "isIP": [overload("is_ip", boolean, string)],
        "ip.isCanonical": [overload("ip_is_canonical", boolean, string)],
        "family": [overload("ip_family", integer, ip, member=True)],
        **{
            name: [overload(f"ip_{name}", boolean, ip, member=True)]
            for name in (
                "isUnspecified",
                "isLoopback",
                "isLinkLocalMulticast",
                "isLinkLocalUnicast",
                "isGlobalUnicast",
            )
        },
        "string": [overload("ip_to_string", string, ip), overload("cidr_to_string", string, cidr)],
        "cidr": [overload("string_to_cidr", cidr, string)],
        "isCIDR": [overload("is_cidr", boolean, string)],
        "containsIP": [
            overload("cidr_contains_ip_string", boolean, cidr, string, member=True),
            overload("cidr_contains_ip_ip", boolean, cidr, ip, member=True),
        ],
        "containsCIDR": [
            overload("cidr_contains_cidr_string", boolean, cidr, string, member=True),
            overload("cidr_contains_cidr", boolean, cidr, cidr, member=True),
        ],
        "prefixLength": [overload("cidr_prefix_length", integer, cidr, member=True)],
        "masked": [overload("cidr_masked", cidr, cidr, member=True)],
        # format.go
        "validate": [overload("format_validate", t("optional_type<list<string>>"), named_format, string, member=True)],
        "format.named": [overload("format_named", t("optional_type<kubernetes.NamedFormat>"), string)],
        **{
            f"format.{name}": [overload(f"format_{name}", named_format)]
            for name in (
                "dns1123Label",
                "dns1123Subdomain",
                "dns1035Label",
                "qualifiedName",
                "dns1123LabelPrefix",
                "dns1123SubdomainPrefix",
                "dns1035LabelPrefix",
                "labelValue",
                "uri",
                "uuid",
                "byte",
                "date",
                "datetime",
            )
        },
        # cel-go ext.Sets (1.29)
        **{
            f"sets.{name}": [overload(f"list_sets_{name}_list", boolean, t.List(param), t.List(param))]
            for name in ("contains", "equivalent", "intersects")
        },
    }
    # cel.CrossTypeNumericComparisons(true) (1.28): int, uint and double compare with each other.
    numeric = {"int64": integer, "uint64": uint, "double": double}
    for operator, name in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")):
        declared[operator] = [
            overload(f"{name}_{left}_{right}", boolean, numeric[left], numeric[right])
            for left in numeric
            for right in numeric
            if left != right
        ]
    return [cel.FunctionDecl(name, overloads) for name, overloads in declared.items()]


# ---------------------------------------------------------------------------------------------
# The checked AST. Expression.serialize() writes a google.protobuf.Any holding a
# cel.expr.CheckedExpr (a cel.expr.ParsedExpr when compiled with disable_check). The package
# ships no Python classes for those, so the fields the walks read are declared here, by number,
# as in https://github.com/google/cel-spec/blob/master/proto/cel/expr/syntax.proto and checked.proto;
# protobuf skips the rest (source positions, the reference map).

_CEL_EXPR_SCHEMA: dict[str, list[tuple[str, int, str]]] = {
    # message: [(field, number, type)]; type: a scalar, "Message", "*Message" (repeated) or "map:Message"
    "Constant": [
        ("null_value", 1, "int32"),
        ("bool_value", 2, "bool"),
        ("int64_value", 3, "int64"),
        ("uint64_value", 4, "uint64"),
        ("double_value", 5, "double"),
        ("string_value", 6, "string"),
        ("bytes_value", 7, "bytes"),
    ],
    "Ident": [("name", 1, "string")],
    "Select": [("operand", 1, "Expr"), ("field", 2, "string"), ("test_only", 3, "bool")],
    "Call": [("target", 1, "Expr"), ("function", 2, "string"), ("args", 3, "*Expr")],
    "CreateList": [("elements", 1, "*Expr")],
    "Entry": [("field_key", 2, "string"), ("map_key", 3, "Expr"), ("value", 4, "Expr")],
    "CreateStruct": [("message_name", 1, "string"), ("entries", 2, "*Entry")],
    "Comprehension": [
        ("iter_var", 1, "string"),
        ("iter_range", 2, "Expr"),
        ("accu_var", 3, "string"),
        ("accu_init", 4, "Expr"),
        ("loop_condition", 5, "Expr"),
        ("loop_step", 6, "Expr"),
        ("result", 7, "Expr"),
        ("iter_var2", 8, "string"),
    ],
    "Expr": [
        ("id", 2, "int64"),
        ("const_expr", 3, "Constant"),
        ("ident_expr", 4, "Ident"),
        ("select_expr", 5, "Select"),
        ("call_expr", 6, "Call"),
        ("list_expr", 7, "CreateList"),
        ("struct_expr", 8, "CreateStruct"),
        ("comprehension_expr", 9, "Comprehension"),
    ],
    "ListType": [("elem_type", 1, "Type")],
    "MapType": [("key_type", 1, "Type"), ("value_type", 2, "Type")],
    "AbstractType": [("name", 1, "string"), ("parameter_types", 2, "*Type")],
    "Type": [
        ("dyn", 1, "bytes"),  # google.protobuf.Empty, read as its (empty) bytes
        ("null", 2, "int32"),
        ("primitive", 3, "int32"),
        ("wrapper", 4, "int32"),
        ("well_known", 5, "int32"),
        ("list_type", 6, "ListType"),
        ("map_type", 7, "MapType"),
        ("message_type", 9, "string"),
        ("type_param", 10, "string"),
        ("type", 11, "Type"),
        ("error", 12, "bytes"),
        ("abstract_type", 14, "AbstractType"),
    ],
    "CheckedExpr": [("type_map", 3, "map:Type"), ("expr", 4, "Expr")],
    "ParsedExpr": [("expr", 2, "Expr")],
}


@lru_cache(maxsize=1)
def _cel_expr_classes() -> dict[str, Any]:
    """Message classes for the schema above (proto2, so every field has presence)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    proto = descriptor_pb2.FieldDescriptorProto
    scalars = {
        "int32": proto.TYPE_INT32,
        "int64": proto.TYPE_INT64,
        "uint64": proto.TYPE_UINT64,
        "bool": proto.TYPE_BOOL,
        "double": proto.TYPE_DOUBLE,
        "string": proto.TYPE_STRING,
        "bytes": proto.TYPE_BYTES,
    }
    file = descriptor_pb2.FileDescriptorProto(
        name="nebius_dra/cel_expr_subset.proto", package="nebius_dra.cel", syntax="proto2"
    )
    for name, fields in _CEL_EXPR_SCHEMA.items():
        message = file.message_type.add(name=name)
        oneof = name in ("Expr", "Constant", "Type")  # as in the .proto files: WhichOneof("kind")
        if oneof:
            message.oneof_decl.add(name="kind")
        for field_name, number, kind in fields:
            label = proto.LABEL_REPEATED if kind.startswith(("*", "map:")) else proto.LABEL_OPTIONAL
            target = kind.removeprefix("*")
            if target.startswith("map:"):
                entry = message.nested_type.add(name=f"{field_name.title().replace('_', '')}Entry")
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, type=proto.TYPE_INT64, label=proto.LABEL_OPTIONAL)
                entry.field.add(
                    name="value",
                    number=2,
                    type=proto.TYPE_MESSAGE,
                    type_name=f".nebius_dra.cel.{target.removeprefix('map:')}",
                    label=proto.LABEL_OPTIONAL,
                )
                message.field.add(
                    name=field_name,
                    number=number,
                    type=proto.TYPE_MESSAGE,
                    type_name=f".nebius_dra.cel.{name}.{entry.name}",
                    label=label,
                )
            elif target in scalars:
                message.field.add(name=field_name, number=number, type=scalars[target], label=label)
            else:
                message.field.add(
                    name=field_name,
                    number=number,
                    type=proto.TYPE_MESSAGE,
                    type_name=f".nebius_dra.cel.{target}",
                    label=label,
                )
            if oneof and field_name != "id":
                message.field[-1].oneof_index = 0
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(file.SerializeToString())
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"nebius_dra.cel.{name}"))
        for name in _CEL_EXPR_SCHEMA
    }


@dataclass(slots=True)
class _Node:
    """One cel.expr.Expr. Calls keep target and args apart; a comprehension's parts are in `parts`."""

    id: int
    kind: str  # const | ident | select | call | list | map | struct | comprehension | unset
    message: Any = field(repr=False)  # the Expr message, to evaluate constant sub-expressions
    name: str = ""  # ident name, selected field, called function, struct message name
    value: Any = None  # const: the Python value (str, int, bool, float, bytes, None)
    target: _Node | None = None  # select operand or call target
    args: tuple[_Node, ...] = ()  # call args, list elements, map/struct keys and values in order
    test_only: bool = False
    variables: tuple[str, str, str] = ("", "", "")  # comprehension iter_var, iter_var2, accu_var
    parts: tuple[_Node | None, ...] = ()  # iter_range, accu_init, loop_condition, loop_step, result

    def children(self) -> tuple[_Node, ...]:
        ahead = (self.target,) if self.target else ()
        return (*ahead, *self.args, *(part for part in self.parts if part))

    def walk(self) -> Iterator[_Node]:
        yield self
        for child in self.children():
            yield from child.walk()


@dataclass(frozen=True)
class _Tree:
    root: _Node
    types: Mapping[int, Any]  # expr id -> Type message (empty when only parsed)


def _decode_any(serialized: bytes) -> _Tree | None:
    from google.protobuf import any_pb2

    wrapper = any_pb2.Any.FromString(serialized)
    classes = _cel_expr_classes()
    if wrapper.type_url.endswith("/cel.expr.CheckedExpr"):
        checked = classes["CheckedExpr"].FromString(wrapper.value)
        return _Tree(_decode_expr(checked.expr), checked.type_map)
    if wrapper.type_url.endswith("/cel.expr.ParsedExpr"):
        return _Tree(_decode_expr(classes["ParsedExpr"].FromString(wrapper.value).expr), {})
    return None


def _decode_expr(expr: Any) -> _Node:
    kind = expr.WhichOneof("kind")
    if kind == "const_expr":
        constant = expr.const_expr
        which = constant.WhichOneof("kind")
        value = getattr(constant, which) if which and which != "null_value" else None
        return _Node(expr.id, "const", expr, value=value)
    if kind == "ident_expr":
        return _Node(expr.id, "ident", expr, name=expr.ident_expr.name)
    if kind == "select_expr":
        select = expr.select_expr
        return _Node(
            expr.id, "select", expr, name=select.field, target=_decode_expr(select.operand), test_only=select.test_only
        )
    if kind == "call_expr":
        call = expr.call_expr
        return _Node(
            expr.id,
            "call",
            expr,
            name=call.function,
            target=_decode_expr(call.target) if call.HasField("target") else None,
            args=tuple(_decode_expr(arg) for arg in call.args),
        )
    if kind == "list_expr":
        return _Node(expr.id, "list", expr, args=tuple(_decode_expr(e) for e in expr.list_expr.elements))
    if kind == "struct_expr":
        create = expr.struct_expr
        args: list[_Node] = []
        for entry in create.entries:
            if entry.HasField("map_key"):
                args.append(_decode_expr(entry.map_key))
            args.append(_decode_expr(entry.value))
        return _Node(
            expr.id, "struct" if create.message_name else "map", expr, name=create.message_name, args=tuple(args)
        )
    if kind == "comprehension_expr":
        loop = expr.comprehension_expr
        return _Node(
            expr.id,
            "comprehension",
            expr,
            variables=(loop.iter_var, loop.iter_var2, loop.accu_var),
            parts=tuple(
                _decode_expr(getattr(loop, part)) if loop.HasField(part) else None
                for part in ("iter_range", "accu_init", "loop_condition", "loop_step", "result")
            ),
        )
    return _Node(expr.id, "unset", expr)


# ---------------------------------------------------------------------------------------------
# Walks over the AST


_TypeTree = tuple[Any, ...]  # a type as ("int",), ("list", elem), ("map", key, value), ("kubernetes.Quantity",) ...

# What a node evaluates to, as far as the walks care (None: anything else).
_DEVICE = "device"
_ATTRIBUTES, _CAPACITIES = "device.attributes", "device.capacity"
_ATTRIBUTE_MAP, _CAPACITY_MAP = "device.attributes[domain]", "device.capacity[domain]"
_GPU, _OPTIONAL_GPU = 'device.attributes["gpu.nvidia.com"]', 'device.attributes[?"gpu.nvidia.com"]'
_Scope = Mapping[str, Any]  # variable -> a kind above, ("string", value) for a bound constant, or None
_TOP: _Scope = {"device": _DEVICE}
_ANY, _QUANTITY, _STRING = ("google.protobuf.Any",), ("kubernetes.Quantity",), ("string",)
# How cel-go types these values (compile.go): attribute values are AnyType, capacities Quantity.
_GO_TYPES: dict[str, _TypeTree] = {
    _ATTRIBUTE_MAP: ("map", _STRING, _ANY),
    _GPU: ("map", _STRING, _ANY),
    _CAPACITY_MAP: ("map", _STRING, _QUANTITY),
    _ATTRIBUTES: ("map", _STRING, ("map", _STRING, _ANY)),
    _CAPACITIES: ("map", _STRING, ("map", _STRING, _QUANTITY)),
}


class _Walker:
    def __init__(self, tree: _Tree) -> None:
        self.tree = tree

    # -- scopes

    def scoped(self, node: _Node, scope: _Scope = _TOP, prune: str = "") -> Iterator[tuple[_Node, _Scope]]:
        """Every node under `node` with the variables in scope there; calls named `prune` are left out."""
        if node.kind == "call" and node.name == prune:
            return
        yield node, scope
        if node.kind == "comprehension":
            iter_range, init, condition, step, result = node.parts
            inner = self.inner_scope(node, scope)
            for part, part_scope in (
                (iter_range, scope),
                (init, scope),
                (condition, inner),
                (step, inner),
                (result, inner),
            ):
                if part:
                    yield from self.scoped(part, part_scope, prune)
            return
        for child in node.children():
            yield from self.scoped(child, scope, prune)

    def inner_scope(self, node: _Node, scope: _Scope) -> _Scope:
        iter_var, iter_var2, accu_var = node.variables
        init = node.parts[1]
        inner = {**scope, iter_var: None, **({iter_var2: None} if iter_var2 else {})}
        inner[accu_var] = self._bound(init, scope) if init is not None and self._is_bind(node) else None
        return inner

    @staticmethod
    def _is_bind(node: _Node) -> bool:
        """cel.bind(x, init, result) expands to a comprehension over [] that never loops."""
        iter_range, _, condition, _, _ = node.parts
        return bool(
            iter_range
            and iter_range.kind == "list"
            and not iter_range.args
            and condition
            and condition.kind == "const"
            and condition.value is False
        )

    def _bound(self, init: _Node, scope: _Scope) -> Any:
        kind = self.kind(init, scope)
        if kind is not None:
            return kind
        value = self.constant(init, scope)
        return ("string", value) if value is not None else None

    # -- what a node is

    def kind(self, node: _Node, scope: _Scope) -> Any:
        if node.kind == "ident":
            bound = scope.get(node.name)
            return None if isinstance(bound, tuple) else bound
        if node.kind == "select" and node.target and not node.test_only:
            if self.kind(node.target, scope) == _DEVICE:
                return {"attributes": _ATTRIBUTES, "capacity": _CAPACITIES}.get(node.name)
            return None
        if node.kind == "call":
            if node.name in ("_[_]", "_[?_]") and len(node.args) == 2:
                container = self.kind(node.args[0], scope)
                if container == _ATTRIBUTES:
                    gpu = self.constant(node.args[1], scope) == GPU_DRIVER
                    if node.name == "_[?_]":
                        return _OPTIONAL_GPU if gpu else None
                    return _GPU if gpu else _ATTRIBUTE_MAP
                return _CAPACITY_MAP if container == _CAPACITIES and node.name == "_[_]" else None
            if node.name in ("value", "orValue") and node.target and self.kind(node.target, scope) == _OPTIONAL_GPU:
                return _GPU
            if node.name == "_?_:_" and len(node.args) == 3:
                branches = {self.kind(node.args[1], scope), self.kind(node.args[2], scope)}
                return _GPU if _GPU in branches else branches.pop() if len(branches) == 1 else None
        if node.kind == "comprehension" and self._is_bind(node) and node.parts[4]:
            return self.kind(node.parts[4], self.inner_scope(node, scope))
        return None

    def lookup(self, node: _Node, scope: _Scope) -> _TypeTree | None:
        """cel-go's type for an attribute or capacity value: google.protobuf.Any, kubernetes.Quantity."""
        if node.kind == "comprehension" and self._is_bind(node) and node.parts[4]:
            return self.lookup(node.parts[4], self.inner_scope(node, scope))
        if node.kind == "select" and node.target and not node.test_only:
            container = self.kind(node.target, scope)
        elif node.kind == "call" and node.name == "_[_]" and len(node.args) == 2:
            container = self.kind(node.args[0], scope)
        else:
            return None
        return _ANY if container in (_ATTRIBUTE_MAP, _GPU) else _QUANTITY if container == _CAPACITY_MAP else None

    def go_type(self, node: _Node, scope: _Scope) -> _TypeTree | None:
        """The type cel-go gives `node`, where C++ and Go surely agree; None where C++'s dyn may hide more."""
        known = self.lookup(node, scope) or _GO_TYPES.get(self.kind(node, scope))
        if known:
            return known
        if node.id not in self.tree.types:
            return None
        tree = _type_tree(self.tree.types[node.id])
        return None if _mentions(tree, "dyn") else tree

    def certainly_dyn(self, node: _Node, scope: _Scope = _TOP) -> bool:
        """Whether cel-go types `node` as dyn (which is not "the unknown type" google.protobuf.Any)."""
        if node.kind == "comprehension" and self._is_bind(node) and node.parts[4]:
            return self.certainly_dyn(node.parts[4], self.inner_scope(node, scope))
        if node.kind == "call" and node.name == "dyn" and not node.target:
            return True
        # Selecting from or indexing into an attribute value (Any) gives dyn in cel-go (checker.go,
        # checkSelectField); a capacity value (Quantity) has no fields: an error there either way.
        operand = node.target if node.kind == "select" and not node.test_only else None
        if node.kind == "call" and node.name == "_[_]" and len(node.args) == 2:
            operand = node.args[0]
        return bool(operand and self.lookup(operand, scope))

    def constant(self, node: _Node, scope: _Scope) -> str | None:
        """The string `node` always evaluates to, when that is known before any device is seen."""
        if node.kind == "const":
            return node.value if isinstance(node.value, str) else None
        if node.kind == "ident":
            bound = scope.get(node.name)
            return bound[1] if isinstance(bound, tuple) else None
        if node.kind == "call" and node.name == "_+_" and len(node.args) == 2:
            left, right = (self.constant(arg, scope) for arg in node.args)
            if left is not None and right is not None:
                return left + right
        if any(n.kind in ("ident", "comprehension") for n in node.walk()):
            return None
        return self._evaluate(node.message)

    @staticmethod
    def _evaluate(expr: Any) -> str | None:
        """Evaluates a variable-free, loop-free sub-expression with the C++ runtime."""
        from google.protobuf import any_pb2

        parsed = _cel_expr_classes()["ParsedExpr"](expr=expr)
        wrapper = any_pb2.Any(type_url="type.googleapis.com/cel.expr.ParsedExpr", value=parsed.SerializeToString())
        try:
            value = _evaluator().deserialize(wrapper.SerializeToString()).eval()
        except Exception:  # a Kubernetes function the evaluator lacks: not known before run time
            return None
        plain = value.plain_value() if str(value.type()) != "ERROR" else None
        return plain if isinstance(plain, str) else None

    # -- removed GPU attributes

    def removed(self) -> str | None:
        for node, scope in self.scoped(self.tree.root):
            selected = node.target if node.kind == "select" and not node.test_only else None
            if selected and node.name in REMOVED_GPU_ATTRIBUTES and self.kind(selected, scope) == _GPU:
                return node.name
            if node.kind == "call" and len(node.args) == 2 and node.name in ("_[_]", "_[?_]", "_?._"):
                kinds = (_GPU,) if node.name == "_[_]" else (_GPU, _OPTIONAL_GPU)
                if self.kind(node.args[0], scope) in kinds:
                    key = self.constant(node.args[1], scope)
                    if key in REMOVED_GPU_ATTRIBUTES:
                        return key
        return None

    # -- cel-go's ASTValidators (Kubernetes base environment, 1.29)

    def literal_problem(self) -> str | None:
        """duration() and timestamp() of a literal must convert; a literal matches() pattern must compile.

        Durations follow Go's time.ParseDuration (cel-go's conversion), which also takes
        "1µs"; timestamps (Go: time.Parse(time.RFC3339, ...)) and RE2 patterns are tried with
        the C++ runtime, which accepted everything Go accepts in the cases tried.
        """
        for node in self.tree.root.walk():
            if node.kind != "call" or not node.args or node.args[0].kind != "const":
                continue
            literal = node.args[0].value
            if node.name == "duration" and not node.target and isinstance(literal, str):
                if not _go_duration(literal):
                    return f"invalid duration argument {cel_string(literal)} (Go's time.ParseDuration refuses it)"
                continue
            if node.name == "timestamp" and not node.target and isinstance(literal, str):
                probe = f"timestamp({cel_string(literal)})"
            elif node.name == "matches" and isinstance(literal, str):
                probe = f'"".matches({cel_string(literal)})'
            else:
                continue
            value = _evaluator().compile(probe).eval()
            if str(value.type()) == "ERROR":
                return f"invalid {node.name} argument {cel_string(literal)} ({value.plain_value()})"
        return None

    def aggregate_problem(self) -> str | None:
        """List and map literals must be homogeneous (cel.HomogeneousAggregateLiterals, a validator in cel-go).

        Element types must be equivalent in cel-go's typing (an attribute value is
        google.protobuf.Any, not string); literals anywhere inside a `format()` call are exempt,
        as the strings extension configures it. Elements C++ types as dyn are not compared.
        """
        for node, scope in self.scoped(self.tree.root, prune="format"):
            if node.kind == "list":
                problem = self._homogeneous(node.args, scope, "list")
            elif node.kind == "map":
                keys, values = node.args[0::2], node.args[1::2]
                problem = self._homogeneous(keys, scope, "map key") or self._homogeneous(values, scope, "map value")
            else:
                continue
            if problem:
                return problem
        return None

    def _homogeneous(self, elements: tuple[_Node, ...], scope: _Scope, what: str) -> str | None:
        types = [self.go_type(element, scope) for element in elements]
        known = [t for t in types if t is not None]
        if len(known) < len(elements) or len(known) < 2:
            return None
        different = next((t for t in known if t != known[0]), None)
        if different is None:
            return None
        return (
            f"a {what} literal mixes {_type_name(known[0])} and {_type_name(different)}; "
            "Kubernetes requires every element of a literal to have the same type"
        )

    # -- cost

    def cost(self, node: _Node, scope: _Scope = _TOP) -> int:
        """A lower bound of cel-go's worst-case cost estimate (checker/cost.go) for this node.

        Identifiers cost 1, list literals 10, map literals 30; calls are counted at their
        arguments only (cel-go adds at least that); a loop costs its range's size times its
        condition and step. Sizes are known for list and map literals and for the device's
        attribute and capacity maps (32 entries at most); other ranges count as empty.
        """
        if node.kind == "const":
            return 0
        if node.kind == "ident":
            return 1
        if node.kind == "select":
            return self.cost(node.target, scope) if node.target else 0
        if node.kind == "list":
            return 10 + sum(self.cost(e, scope) for e in node.args)
        if node.kind in ("map", "struct"):
            return (30 if node.kind == "map" else 40) + sum(self.cost(e, scope) for e in node.args)
        if node.kind == "call":
            own = self.cost(node.target, scope) if node.target else 0
            costs = [self.cost(arg, scope) for arg in node.args]
            if node.name == "_?_:_" and len(costs) == 3:
                return own + costs[0] + max(costs[1], costs[2])
            return own + sum(costs)
        if node.kind == "comprehension":
            iter_range, init, condition, step, result = node.parts
            inner = self.inner_scope(node, scope)
            total = sum(self.cost(part, scope) for part in (iter_range, init) if part)
            total += self.cost(result, inner) if result else 0
            if not self._is_bind(node) and iter_range is not None:
                per_step = sum(self.cost(part, inner) for part in (condition, step) if part)
                total += self._size(iter_range, scope) * per_step
            return total
        return 0

    def _size(self, node: _Node, scope: _Scope) -> int:
        """The most entries `node` can have, as cel-go estimates it, or 0 when unknown here."""
        if node.kind == "list":
            return len(node.args)
        if node.kind == "map":
            return len(node.args) // 2
        return MAX_DEVICE_MAP_ENTRIES if self.kind(node, scope) in _GO_TYPES else 0


def _mentions(tree: _TypeTree, head: str) -> bool:
    return tree[0] == head or any(isinstance(p, tuple) and _mentions(p, head) for p in tree[1:])


_GO_DURATION_PART = re.compile(r"(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)")
_GO_DURATION_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}


def _go_duration(text: str) -> bool:
    """Whether Go's time.ParseDuration accepts `text`: [-+]?([0-9]*(\\.[0-9]*)?unit)+ or 0, within int64 nanoseconds."""
    body = text[1:] if text[:1] in ("-", "+") else text
    if body == "0":
        return True
    total, index = Fraction(0), 0
    while index < len(body):
        part = _GO_DURATION_PART.match(body, index)
        if part is None or not (part.group(1) or part.group(2)):
            return False
        whole, fraction, unit = part.groups()
        value = Fraction(int(whole or "0")) + (Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0)
        total += value * _GO_DURATION_UNITS[unit]
        index = part.end()
    limit = 2**63 if text.startswith("-") else 2**63 - 1
    return bool(body) and int(total) <= limit


_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "timestamp", 3: "duration"}


def _type_tree(message: Any) -> _TypeTree:
    """A cel.expr.Type as a comparable tree: ("dyn",), ("int",), ("list", elem), ("map", key, value), ..."""
    kind = message.WhichOneof("kind")
    if kind in ("primitive", "well_known"):
        names = _PRIMITIVES if kind == "primitive" else _WELL_KNOWN
        code = getattr(message, kind)
        return (names.get(code, f"{kind} {code}"),)
    if kind == "list_type":
        return ("list", _type_tree(message.list_type.elem_type))
    if kind == "map_type":
        return ("map", _type_tree(message.map_type.key_type), _type_tree(message.map_type.value_type))
    if kind == "message_type":
        return (message.message_type,)
    if kind == "abstract_type":
        abstract = message.abstract_type
        return (abstract.name, *(_type_tree(p) for p in abstract.parameter_types))
    if kind == "type":
        return ("type", _type_tree(message.type))
    if kind == "type_param":
        return ("type_param",)  # cel-go compares type parameters without their names
    return (kind or "unset",)  # dyn, null, wrapper, error


def _type_name(tree: _TypeTree) -> str:
    """As CEL writes types: int, list(string), map(string, dyn), kubernetes.Quantity."""
    head, *parameters = tree
    if head in ("type_param", "other"):
        return "a type parameter" if head == "type_param" else "a type"
    if not parameters:
        return str(head)
    return f"{head}({', '.join(_type_name(p) for p in parameters)})"
