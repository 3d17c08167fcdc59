"""Walks over a checked selector: cel-go's types where the C++ checker reads dyn, literal and aggregate rules, the cost lower bound, removed GPU attributes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.cel.checked_ast import Node, Tree, cel_expr_classes
from components.cel.environment import constant_evaluator
from components.cel.go_duration import is_go_duration
from components.cel.literals import cel_string
from components.dra_constants import GPU_DRIVER, REMOVED_GPU_ATTRIBUTES

# k8s.io/api/resource/v1/types.go: ResourceSliceMaxAttributesAndCapacitiesPerDevice bounds
# every attribute and capacity map, which is what the DRA size estimator tells cel-go.
MAX_DEVICE_MAP_ENTRIES = 32


_TypeTree = tuple[Any, ...]  # a type as ("int",), ("list", elem), ("map", key, value), ("kubernetes.Quantity",) ...

# What a node evaluates to, as far as the walks care (None: anything else).
_DEVICE = "device"
_ATTRIBUTES, _CAPACITIES = "device.attributes", "device.capacity"
_ATTRIBUTE_MAP, _CAPACITY_MAP = "device.attributes[domain]", "device.capacity[domain]"
_GPU, _OPTIONAL_GPU = 'device.attributes["gpu.nvidia.com"]', 'device.attributes[?"gpu.nvidia.com"]'
_Scope = Mapping[str, Any]  # variable -> a kind above, ("string", value) for a bound constant, or None
TOP: _Scope = {"device": _DEVICE}
_ANY, _QUANTITY, _STRING = ("google.protobuf.Any",), ("kubernetes.Quantity",), ("string",)
# How cel-go types these values (compile.go): attribute values are AnyType, capacities Quantity.
_GO_TYPES: dict[str, _TypeTree] = {
    _ATTRIBUTE_MAP: ("map", _STRING, _ANY),
    _GPU: ("map", _STRING, _ANY),
    _CAPACITY_MAP: ("map", _STRING, _QUANTITY),
    _ATTRIBUTES: ("map", _STRING, ("map", _STRING, _ANY)),
    _CAPACITIES: ("map", _STRING, ("map", _STRING, _QUANTITY)),
}


class Walker:
    def __init__(self, tree: Tree) -> None:
        self.tree = tree

    # -- scopes

    def scoped(self, node: Node, scope: _Scope = TOP, prune: str = "") -> Iterator[tuple[Node, _Scope]]:
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

    def inner_scope(self, node: Node, scope: _Scope) -> _Scope:
        iter_var, iter_var2, accu_var = node.variables
        init = node.parts[1]
        inner = {**scope, iter_var: None, **({iter_var2: None} if iter_var2 else {})}
        inner[accu_var] = self._bound(init, scope) if init is not None and self._is_bind(node) else None
        return inner

    @staticmethod
    def _is_bind(node: Node) -> bool:
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

    def _bound(self, init: Node, scope: _Scope) -> Any:
        kind = self.kind(init, scope)
        if kind is not None:
            return kind
        value = self.constant(init, scope)
        return ("string", value) if value is not None else None

    # -- what a node is

    def kind(self, node: Node, scope: _Scope) -> Any:
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

    def lookup(self, node: Node, scope: _Scope) -> _TypeTree | None:
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

    def go_type(self, node: Node, scope: _Scope) -> _TypeTree | None:
        """The type cel-go gives `node`, where C++ and Go surely agree; None where C++'s dyn may hide more."""
        known = self.lookup(node, scope) or _GO_TYPES.get(self.kind(node, scope))
        if known:
            return known
        if node.id not in self.tree.types:
            return None
        tree = _type_tree(self.tree.types[node.id])
        return None if _mentions(tree, "dyn") else tree

    def certainly_dyn(self, node: Node, scope: _Scope = TOP) -> bool:
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

    def constant(self, node: Node, scope: _Scope) -> str | None:
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

        parsed = cel_expr_classes()["ParsedExpr"](expr=expr)
        wrapper = any_pb2.Any(type_url="type.googleapis.com/cel.expr.ParsedExpr", value=parsed.SerializeToString())
        try:
            value = constant_evaluator().deserialize(wrapper.SerializeToString()).eval()
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

    # -- the GPU products a selector requires

    def required_products(self) -> tuple[str, ...] | None:
        """The products a device must have for the selector to be true, when a term of its top-level `&&` is
        `productName == "X"` (either side) or `productName in ["X", ...]` on the NVIDIA driver's attributes, with
        constant names; None when no such term says (an `||`, a `!`, a name known only at run time)."""
        pending = [self.tree.root]
        while pending:
            node = pending.pop(0)
            if node.kind != "call":
                continue
            if node.name == "_&&_":
                pending += node.args
                continue
            if node.name in ("_==_", "@in") and len(node.args) == 2:
                left, right = node.args
                pairs = [(left, right), (right, left)] if node.name == "_==_" else [(left, right)]
                for read, names in pairs:
                    if self._reads_product(read):
                        products = [names] if node.name == "_==_" else list(names.args) if names.kind == "list" else []
                        constants = [self.constant(product, TOP) for product in products]
                        if constants and all(constant is not None for constant in constants):
                            return tuple(dict.fromkeys(c for c in constants if c is not None))
        return None

    def _reads_product(self, node: Node) -> bool:
        if node.kind == "select" and node.target and not node.test_only:
            return node.name == "productName" and self.kind(node.target, TOP) == _GPU
        if node.kind == "call" and node.name == "_[_]" and len(node.args) == 2:
            return self.kind(node.args[0], TOP) == _GPU and self.constant(node.args[1], TOP) == "productName"
        return False

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
                if not is_go_duration(literal):
                    return f"invalid duration argument {cel_string(literal)} (Go's time.ParseDuration refuses it)"
                continue
            if node.name == "timestamp" and not node.target and isinstance(literal, str):
                probe = f"timestamp({cel_string(literal)})"
            elif node.name == "matches" and isinstance(literal, str):
                probe = f'"".matches({cel_string(literal)})'
            else:
                continue
            value = constant_evaluator().compile(probe).eval()
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

    def _homogeneous(self, elements: tuple[Node, ...], scope: _Scope, what: str) -> str | None:
        types = [self.go_type(element, scope) for element in elements]
        known = [t for t in types if t is not None]
        if len(known) < len(elements) or len(known) < 2:
            return None
        different = next((t for t in known if t != known[0]), None)
        if different is None:
            return None
        return (
            f"a {what} literal mixes {shown_type(known[0])} and {shown_type(different)}; "
            "Kubernetes requires every element of a literal to have the same type"
        )

    # -- cost

    def cost(self, node: Node, scope: _Scope = TOP) -> int:
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

    def _size(self, node: Node, scope: _Scope) -> int:
        """The most entries `node` can have, as cel-go estimates it, or 0 when unknown here."""
        if node.kind == "list":
            return len(node.args)
        if node.kind == "map":
            return len(node.args) // 2
        return MAX_DEVICE_MAP_ENTRIES if self.kind(node, scope) in _GO_TYPES else 0


def _mentions(tree: _TypeTree, head: str) -> bool:
    return tree[0] == head or any(isinstance(p, tuple) and _mentions(p, head) for p in tree[1:])


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


def shown_type(tree: _TypeTree) -> str:
    """As CEL writes types: int, list(string), map(string, dyn), kubernetes.Quantity."""
    head, *parameters = tree
    if head in ("type_param", "other"):
        return "a type parameter" if head == "type_param" else "a type"
    if not parameters:
        return str(head)
    return f"{head}({', '.join(shown_type(p) for p in parameters)})"
