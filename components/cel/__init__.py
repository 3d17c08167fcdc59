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
  compile.go of v0.34.12, v0.35.4 and v0.36.3 by tests/components/test_dra_minors.py), so a stack's selectors
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

Modules: `checks` (the public checks and their order), `environment` (the `device` environment),
`checked_ast` (the decoded AST), `walker` (types, literals, cost and removed attributes over it),
`literals` (CEL string literals) and `go_duration` (the duration literal grammar).
"""

from components.cel.checks import (
    CEL_SELECTOR_MAX_COST,
    CEL_SELECTOR_MAX_LENGTH,
    removed_attribute,
    required_products,
    selector_problem,
    selector_refusal,
)
from components.cel.literals import cel_string

__all__ = [
    "CEL_SELECTOR_MAX_COST",
    "CEL_SELECTOR_MAX_LENGTH",
    "cel_string",
    "removed_attribute",
    "required_products",
    "selector_problem",
    "selector_refusal",
]
