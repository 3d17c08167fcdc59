"""The type-checked selector checks of components/cel/, against what Kubernetes 1.34 does.

Expectations come from the Kubernetes sources cited in that module (validation.go,
dynamic-resource-allocation/cel/compile.go and compile_test.go at v0.34.9, the apiserver
CEL libraries at v0.34.10) and from selectors NVIDIA ships with its DRA driver.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import dra_minors
from components.cel import (
    CEL_SELECTOR_MAX_COST,
    CEL_SELECTOR_MAX_LENGTH,
    cel_string,
    checks,
    environment,
    removed_attribute,
    selector_problem,
    selector_refusal,
)
from components.dra_constants import GPU_PRODUCTS, REMOVED_GPU_ATTRIBUTES
from components.values.claim_templates import product_selector
from tests.helpers import ROOT

GPU = 'device.attributes["gpu.nvidia.com"]'


def test_limits_are_kubernetes_own():
    # k8s.io/api resource/v1 types.go: CELSelectorExpressionMaxLength = 10 * 1024, CELSelectorExpressionMaxCost = 1000000.
    assert (CEL_SELECTOR_MAX_LENGTH, CEL_SELECTOR_MAX_COST) == (10 * 1024, 1_000_000)


# --- refused by the API server -------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "because"),
    [
        ("1 + 1", "must evaluate to bool or the unknown type, not int"),
        ('"gpu"', "not string"),
        (f"{GPU}", "not map(string, google.protobuf.Any)"),
        ("[1, 2]", "not list(int)"),
        ("foo == 1", "undeclared reference to 'foo' (line 1, column 1)"),
        ('devices.driver == "x"', "undeclared reference to 'devices.driver'"),
        ("device.foo", "undefined field 'foo'"),
        ('device["driver"] == "gpu.nvidia.com"', "no matching overload for '_[_]'"),
        ('device.driver + 1 == "x"', "no matching overload for '_+_' applied to '(string, int)'"),
        ("device.driver ==", "Syntax error"),
        ("?!", "Syntax error"),
        ("1 == 1.0", "no matching overload for '_==_'"),
        ("device.allowMultipleAllocations == false", "DRAConsumableCapacity"),
        ('quantity("1").sign() == 1', "undeclared reference to 'sign'"),  # a global function in quantity.go
        ('semver("1.0.0").isGreaterThan(quantity("1"))', "no matching overload for 'isGreaterThan'"),
        ('semver("1.0.0").foo == 1', "undefined field 'foo'"),
        ('"abc".reverse() == "cba"', "reverse"),  # strings v3; Kubernetes 1.34 has v2
        ("math.greatest(1, 2) == 2", "math"),  # not in the Kubernetes environment
        ('[1, "a"].size() == 2', "a list literal mixes int and string"),
        ('{"a": 1, "b": "x"}.size() == 2', "a map value literal mixes int and string"),
        (f'[{GPU}.productName, "x"].size() == 2', "mixes google.protobuf.Any and string"),
        ('[device.capacity["gpu.nvidia.com"].memory, 1].size() == 2', "mixes kubernetes.Quantity and int"),
        ("dyn(true)", "not dyn"),  # cel-go's dyn is not the unknown type (google.protobuf.Any) compile.go accepts
        (f"{GPU}.productName.size", "not dyn"),
        (f"{GPU}.productNames[0]", "not dyn"),
        (f"cel.bind(g, {GPU}, g.productName.size)", "not dyn"),
        ('duration("1d") > duration("0s")', 'invalid duration argument "1d"'),
        ('timestamp("2020-01-01 00:00:00Z") > timestamp("2020-01-01T00:00:00Z")', "invalid timestamp argument"),
        (f'{GPU}.productName.matches("[")', 'invalid matches argument "["'),
        ('"\\ud83d\\ude00" == "x"', "Unicode value \\ud83d is invalid"),
    ],
)
def test_the_api_server_refuses(expression, because):
    refusal = selector_refusal(expression)
    assert refusal is not None and because in refusal, refusal
    assert selector_problem(expression) == refusal
    parse_error = "Syntax error" in because or "Unicode value" in because
    assert refusal.startswith("is not valid CEL: " if parse_error else "is refused by the API server")


def test_an_11_kib_selector_is_refused_for_its_length_alone():
    expression = " || ".join([f'{GPU}.productName == "NVIDIA H200"'] * 166)
    assert 11 * 1024 <= len(expression) < 12 * 1024
    problem = selector_problem(expression)
    assert problem is not None and f"is {len(expression)} bytes long" in problem and "10240" in problem
    just_fits = "true" + " " * (CEL_SELECTOR_MAX_LENGTH - 4)
    assert selector_problem(just_fits) is None
    assert "10241 bytes" in (selector_problem(just_fits + " ") or "")


def test_length_counts_utf8_bytes_like_go():
    expression = f'{GPU}.productName == "{"é" * 5200}"'
    assert len(expression) < CEL_SELECTOR_MAX_LENGTH < len(expression.encode())
    assert "bytes long" in (selector_problem(expression) or "")


def test_a_selector_too_costly_for_the_api_server_is_refused():
    # dynamic-resource-allocation/cel/compile_test.go (v0.34.9), "expensive": estimated 85555551.
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    expression = f"{ten}.all(x, {ten}.all(y, {ten}.all(z, {ten}.all(z2, {ten}.all(z3, {ten}.all(z4, {ten}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
    problem = selector_problem(expression)
    assert problem is not None and "too complex" in problem and "CELSelectorExpressionMaxCost" in problem
    cheap = f"{ten}.all(x, {ten}.all(y, x + y > 0))"
    assert selector_problem(cheap) is None
    # 32 attributes at most per device: three nested loops over them stay under the limit.
    loops = f"{GPU}.all(a, {GPU}.all(b, {GPU}.exists(c, a + b + c == 'x')))"
    assert selector_problem(loops) is None


# --- accepted ------------------------------------------------------------------------------

KUBERNETES_COMPILE_TEST = [
    # dynamic-resource-allocation/cel/compile_test.go at v0.34.9: every case that compiles there.
    "true",
    "false",
    'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
    'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
    '"no-such-domain" in device.attributes',
    'device.driver == ""',
    'device.attributes["dra.example.com"].name',
    'device.attributes["dra.example.com"]["name"]',
    'cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
    'device.attributes["dra.example.com"].name > 0',
    'device.attributes["dra.example.com"].name == "fish"',
    'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
    'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
    'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
    '"name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
    '!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
    """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
""",
    'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c',
    'device.attributes.exists_one(x, x == "dra.example.com")',
    'device.attributes["dra.example.com"].exists_one(x, x == "services")',
    'device.attributes["dra.example.com"].services.split("example").size() >= 2',
    'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
    'device.capacity.exists_one(x, x == "dra.example.com")',
    'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
]

# kubernetes-sigs/dra-driver-nvidia-gpu at 95932046683719c43b6a0dd9613c2e5aad5d6703.
NVIDIA_SELECTORS = {
    "deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    "deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-mig.yaml": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    "deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-vfio-gpu.yaml": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'",
    "deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-compute-domain-daemon.yaml": "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == 'daemon'",
    "deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-compute-domain-default-channel.yaml": "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == 'channel' && device.attributes['compute-domain.nvidia.com'].id == 0",
    "demo/specs/quickstart/v1/gpu-test4.yaml": "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'",
    "demo/specs/extended-resources/mig-1g-12gb.yaml": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && device.attributes['gpu.nvidia.com'].profile == '1g.12gb'",
    "tests/bats/specs/gpu-simple-mig.yaml": "device.capacity['gpu.nvidia.com'].multiprocessors.isGreaterThan(quantity(\"10\"))\n&&\ndevice.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity(\"10Gi\"))\n",
    "test/e2e/framework/specs/driver-version.yaml.tmpl": 'device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("580.65.6")) >= 0',
    "site/content/docs/guides/gpu-allocation/allocating-gpus.md": "device.attributes['gpu.nvidia.com'].architecture == 'Hopper'\n&&\ndevice.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity(\"80Gi\"))\n",
}
# demo/specs/quickstart/v1/gpu-test6.yaml: valid for the API server, but it selects on `index`.
NVIDIA_INDEX_SELECTOR = """device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')
&&
(device.attributes['gpu.nvidia.com'].index == 0 ||
device.attributes['gpu.nvidia.com'].index == 2 ||
device.attributes['gpu.nvidia.com'].index == 4 ||
device.attributes['gpu.nvidia.com'].index == 6)
"""

LIBRARY_SELECTORS = [
    # The examples.
    f'{GPU}.driverVersion.compareTo(semver("580.0.0")) >= 0',
    'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0',
    # semverlib.go (SemverVersion 1) and quantity.go
    f'{GPU}.driverVersion.isLessThan(semver("600.0.0")) && {GPU}.driverVersion.major() >= 580',
    f'{GPU}.driverVersion.minor() > 0 && {GPU}.driverVersion.patch() >= 0 && isSemver("1.2.3")',
    f"semver({GPU}.driverVersionString, true).major() == 580",
    'isQuantity("80Gi") && sign(quantity("-1")) == -1',
    'device.capacity["gpu.nvidia.com"].memory.add(quantity("1Gi")).sub(1).isInteger()',
    'device.capacity["gpu.nvidia.com"].memory.asApproximateFloat() > 1e9',
    'device.capacity["gpu.nvidia.com"].memory.asInteger() > 80 * 1024 * 1024 * 1024',
    # lists.go, regex.go, urls.go, ip.go, cidr.go, format.go, ext.Sets
    "[3, 1].isSorted() || [1, 2].sum() == 3 && [1.5, 2.0].max() == 2.0 && [1, 2].indexOf(2) == 1",
    f'{GPU}.productName.find("H[0-9]+") == "H200" && {GPU}.productName.findAll("[0-9]", 2).size() == 2',
    'url("https://example.com/a?b=c").getQuery()["b"][0] == "c" && isURL("https://example.com")',
    'ip("10.0.0.1").family() == 4 && ip.isCanonical("10.0.0.1") && cidr("10.0.0.0/8").containsIP(ip("10.0.0.1"))',
    'string(cidr("10.0.0.0/8").masked()) == "10.0.0.0/8" && cidr("10.0.0.0/8").ip().isGlobalUnicast()',
    'format.dns1123Label().validate("gpu-0").hasValue() == false && format.named("uuid").hasValue()',
    'sets.contains(["a", "b"], ["a"]) && sets.intersects([1], [1, 2]) && sets.equivalent([1], [1])',
    # The base environment: strings v2, optionals, cross-type numeric comparisons, bind.
    f'{GPU}.productName.lowerAscii().contains("h200") && {GPU}.productName.split(" ").size() == 2',
    f'"{{}}".format([{GPU}.productName]) != "" && ["a", "b"].join(",") == "a,b" && strings.quote("x") != ""',
    '"%s %d".format(["a", 1]) != ""',  # format() literals are exempt from the homogeneity rule
    f"{GPU}.?productName.orValue('') == 'NVIDIA H200' && device.attributes[?'dra.net'].hasValue()",
    "1 < 1.5 && 2u > 1 && 1.5 >= 1u",
    'cel.bind(gpu, device.attributes["gpu.nvidia.com"], gpu.productName == "NVIDIA H200" && gpu.cudaComputeCapability.isGreaterThan(semver("9.0.0")))',
    'device.attributes["dra.net"].rdma == true && device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00"',
    'duration("1µs") < duration("1h30m") && timestamp("2026-01-01T00:00:00Z") > timestamp("2025-01-01T00:00:00+01:00")',
    # Results typed google.protobuf.Any ("the unknown type") are accepted, and so are literals of one type.
    'device.attributes["dra.net"].rdma',
    'cel.bind(net, device.attributes["dra.net"], net["rdma"])',
    f"{GPU}.?hasNvlink.orValue(false)",
    f'[{GPU}.productName, {GPU}.architecture].exists(v, v == "Hopper")',
    '[device.capacity["gpu.nvidia.com"].memory, quantity("80Gi")].all(q, q.isGreaterThan(quantity("1")))',
    '[semver("1.0.0"), semver("2.0.0")].exists(v, v.major() == 2)',
]


@pytest.mark.parametrize("expression", KUBERNETES_COMPILE_TEST + LIBRARY_SELECTORS + list(NVIDIA_SELECTORS.values()))
def test_valid_selectors_compile(expression):
    assert selector_problem(expression) is None


def test_kubernetes_accepts_nvidias_index_demo_which_never_matches_now():
    assert selector_refusal(NVIDIA_INDEX_SELECTOR) is None
    assert removed_attribute(NVIDIA_INDEX_SELECTOR) == "index"
    problem = selector_problem(NVIDIA_INDEX_SELECTOR)
    assert problem is not None and problem.startswith("uses the GPU attribute index") and "25.8.0" in problem


def test_selectors_the_stack_builds_compile():
    assert selector_problem(product_selector(list(GPU_PRODUCTS.values()))) is None
    assert selector_problem(product_selector(["NVIDIA H200", "NVIDIA H100 80GB HBM3", 'odd "quoted" \\ name'])) is None


def test_two_variable_comprehensions_are_parsed_but_not_type_checked():
    # ext.TwoVarComprehensions (Kubernetes 1.32) and existsOne are not in the C++ parser: no false refusal.
    for expression in (
        "device.attributes.all(domain, attributes, attributes.size() < 33)",
        f"{GPU}.existsOne(name, name == 'uuid')",
        f"{GPU}.transformList(name, value, name).size() > 0",
    ):
        assert selector_problem(expression) is None, expression
        assert checks._analysis(expression).checked is False
    assert removed_attribute(f"{GPU}.index == 0 && device.attributes.all(d, a, true)") == "index"
    assert selector_refusal("device.attributes.all(d, a, true) &&") is not None  # still has to parse


def test_capacity_values_are_dyn_here_a_known_gap():
    # Kubernetes declares them as kubernetes.Quantity and refuses this; a protobuf field cannot express that type.
    assert selector_problem('device.capacity["gpu.nvidia.com"].memory > 1') is None


# --- removed GPU attributes ----------------------------------------------------------------


@pytest.mark.parametrize("attribute", REMOVED_GPU_ATTRIBUTES)
@pytest.mark.parametrize(
    "template",
    [
        "{gpu}.{a} == 0",
        '{gpu}["{a}"] == 0',
        "{gpu}['{a}'] == 0",
        "cel.bind(g, {gpu}, g.{a} == 0)",
        'cel.bind(k, "{a}", {gpu}[k] == 0)',
        "{gpu}.?{a}.orValue(-1) == 0",
        'device.attributes[?"gpu.nvidia.com"].?{a}.orValue(-1) == 0',
        "has({gpu}.{a}) && {gpu}.{a} == 0",
        '(device.driver == "gpu.nvidia.com" ? {gpu} : device.attributes["dra.net"]).{a} == 0',
        "[1, 2].exists(i, {gpu}.{a} == i)",
        '{gpu}["{a}".upperAscii().lowerAscii()] == 0',
    ],
)
def test_reads_of_removed_gpu_attributes_are_found(attribute, template):
    expression = template.format(gpu=GPU, a=attribute)
    assert selector_refusal(expression) is None, expression
    assert removed_attribute(expression) == attribute, expression


def test_keys_and_domains_built_from_constants_are_evaluated():
    assert removed_attribute(f'{GPU}["ind" + "ex"] == 0') == "index"
    assert removed_attribute('device.attributes["gpu." + "nvidia.com"]["mi" + "nor"] == 0') == "minor"
    assert removed_attribute('cel.bind(d, "gpu.nvidia.com", device.attributes[d].index == 0)') == "index"


@pytest.mark.parametrize(
    "expression",
    [
        'device.attributes["dra.net"].index == 0',
        'device.attributes["dra.net"]["minor"] == 0',
        f'{GPU}.productName == "x.minor" || {GPU}.uuid == "index"',
        f'{GPU}.productName.indexOf("H") == 0',
        f"{GPU}.driverVersion.minor() >= 0",
        f"has({GPU}.index)",
        f'!("minor" in {GPU})',
        f'{GPU}.exists(name, name == "index")',
        'device.capacity["gpu.nvidia.com"].index.isGreaterThan(quantity("0"))',
        "[1].all(device, true)",
        "device.attributes[device.driver].index == 0",  # the domain is known only per device
    ],
)
def test_other_uses_of_the_words_are_not_reads_of_removed_attributes(expression):
    assert selector_problem(expression) is None, expression
    assert removed_attribute(expression) is None


def test_a_shadowing_variable_is_not_the_device():
    assert (
        removed_attribute(
            '[{"attributes": {"gpu.nvidia.com": {"index": 0}}}].all(device, device.attributes["gpu.nvidia.com"].index == 0)'
        )
        is None
    )


def test_refused_selectors_are_not_analysed_for_removed_attributes():
    assert removed_attribute(f"{GPU}.index + 1") is None
    assert "not int" in (selector_problem(f"{GPU}.index + 1") or "")


# --- CEL string literals -------------------------------------------------------------------


def _evaluate(literal: str) -> object:
    return environment.constant_evaluator().compile(literal).eval().plain_value()


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        ("NVIDIA H200", '"NVIDIA H200"'),
        ('say "hi" \\ ', '"say \\"hi\\" \\\\ "'),
        ("tab\tnew\nline\r", '"tab\\tnew\\nline\\r"'),
        ("😀", '"😀"'),
        ("Ünïcödé", '"Ünïcödé"'),
        ("\x00\x7f", '"\\u0000\\u007f"'),
        ("zero\u200bwidth", '"zero\\u200bwidth"'),
        ("\U000e0001", '"\\U000e0001"'),
    ],
)
def test_cel_string_spells_literals_cel_reads_back(value, literal):
    assert cel_string(value) == literal
    assert _evaluate(literal) == value


def test_json_surrogate_escapes_are_not_cel():
    # What product_selector's json.dumps writes for a character outside the BMP, and why it must not.
    assert json.dumps("\U0001f600") == '"\\ud83d\\ude00"'
    assert "invalid" in (selector_problem(f"{GPU}.productName == {json.dumps(chr(0x1F600))}") or "")
    assert selector_problem(f"{GPU}.productName == {cel_string(chr(0x1F600))}") is None
    assert _evaluate('"\\U0001F600"') == "\U0001f600"


def test_cel_string_refuses_what_no_cel_string_holds():
    with pytest.raises(ValueError, match="surrogate"):
        cel_string("\ud83d")


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40))
def test_cel_string_round_trips(value):
    literal = cel_string(value)
    assert _evaluate(literal) == value
    assert selector_problem(f"{GPU}.productName in [{literal}, {cel_string(value + 'x')}]") is None


# --- cost and laziness ---------------------------------------------------------------------


def test_each_distinct_expression_compiles_once():
    expression = f'{GPU}.productName == "cache probe"'
    checks._analysis.cache_clear()
    for _ in range(3):
        selector_problem(expression)
        removed_attribute(expression)
    assert checks._analysis.cache_info().misses == 1


def test_importing_the_module_loads_no_cel_library():
    code = "import sys, components.cel; print(sorted(m for m in sys.modules if m.startswith('cel_expr_python')))"
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_allow_multiple_allocations_is_declared_only_where_consumable_capacity_is_on():
    expression = "device.allowMultipleAllocations == true"
    refusal = selector_problem(expression, "1.35") or ""
    assert "DRAConsumableCapacity, Alpha and off by default in 1.35" in refusal
    assert 'set kubernetesVersion to "1.36"' in refusal
    assert selector_problem(expression, "1.36") is None


@pytest.mark.parametrize("minor", ["1.34", "1.35", "1.36"])
def test_a_selector_sees_the_device_fields_its_minor_declares(minor):
    declared = set(dra_minors.cel_device_fields(minor))
    for name in dra_minors.CEL_DEVICE_FIELDS:
        problem = selector_problem(f"has(device.{name})", minor)
        assert (problem is None) == (name in declared), (minor, name, problem)
