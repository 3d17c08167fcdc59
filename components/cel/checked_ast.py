"""The checked AST that cel-expr-python serializes, decoded from protobuf by field number into plain nodes the walks read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

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
def cel_expr_classes() -> dict[str, Any]:
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
class Node:
    """One cel.expr.Expr. Calls keep target and args apart; a comprehension's parts are in `parts`."""

    id: int
    kind: str  # const | ident | select | call | list | map | struct | comprehension | unset
    message: Any = field(repr=False)  # the Expr message, to evaluate constant sub-expressions
    name: str = ""  # ident name, selected field, called function, struct message name
    value: Any = None  # const: the Python value (str, int, bool, float, bytes, None)
    target: Node | None = None  # select operand or call target
    args: tuple[Node, ...] = ()  # call args, list elements, map/struct keys and values in order
    test_only: bool = False
    variables: tuple[str, str, str] = ("", "", "")  # comprehension iter_var, iter_var2, accu_var
    parts: tuple[Node | None, ...] = ()  # iter_range, accu_init, loop_condition, loop_step, result

    def children(self) -> tuple[Node, ...]:
        ahead = (self.target,) if self.target else ()
        return (*ahead, *self.args, *(part for part in self.parts if part))

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children():
            yield from child.walk()


@dataclass(frozen=True)
class Tree:
    root: Node
    types: Mapping[int, Any]  # expr id -> Type message (empty when only parsed)


def decode_any(serialized: bytes) -> Tree | None:
    from google.protobuf import any_pb2

    wrapper = any_pb2.Any.FromString(serialized)
    classes = cel_expr_classes()
    if wrapper.type_url.endswith("/cel.expr.CheckedExpr"):
        checked = classes["CheckedExpr"].FromString(wrapper.value)
        return Tree(_decode_expr(checked.expr), checked.type_map)
    if wrapper.type_url.endswith("/cel.expr.ParsedExpr"):
        return Tree(_decode_expr(classes["ParsedExpr"].FromString(wrapper.value).expr), {})
    return None


def _decode_expr(expr: Any) -> Node:
    kind = expr.WhichOneof("kind")
    if kind == "const_expr":
        constant = expr.const_expr
        which = constant.WhichOneof("kind")
        value = getattr(constant, which) if which and which != "null_value" else None
        return Node(expr.id, "const", expr, value=value)
    if kind == "ident_expr":
        return Node(expr.id, "ident", expr, name=expr.ident_expr.name)
    if kind == "select_expr":
        select = expr.select_expr
        return Node(
            expr.id, "select", expr, name=select.field, target=_decode_expr(select.operand), test_only=select.test_only
        )
    if kind == "call_expr":
        call = expr.call_expr
        return Node(
            expr.id,
            "call",
            expr,
            name=call.function,
            target=_decode_expr(call.target) if call.HasField("target") else None,
            args=tuple(_decode_expr(arg) for arg in call.args),
        )
    if kind == "list_expr":
        return Node(expr.id, "list", expr, args=tuple(_decode_expr(e) for e in expr.list_expr.elements))
    if kind == "struct_expr":
        create = expr.struct_expr
        args: list[Node] = []
        for entry in create.entries:
            if entry.HasField("map_key"):
                args.append(_decode_expr(entry.map_key))
            args.append(_decode_expr(entry.value))
        return Node(
            expr.id, "struct" if create.message_name else "map", expr, name=create.message_name, args=tuple(args)
        )
    if kind == "comprehension_expr":
        loop = expr.comprehension_expr
        return Node(
            expr.id,
            "comprehension",
            expr,
            variables=(loop.iter_var, loop.iter_var2, loop.accu_var),
            parts=tuple(
                _decode_expr(getattr(loop, part)) if loop.HasField(part) else None
                for part in ("iter_range", "accu_init", "loop_condition", "loop_step", "result")
            ),
        )
    return Node(expr.id, "unset", expr)
