"""The DRA `device` environment of the API server, built with cel-expr-python on first use: its object types and the Kubernetes CEL libraries' functions."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=4)
def device_environment(device_fields: tuple[str, ...]) -> Any:
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
def constant_evaluator() -> Any:
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
