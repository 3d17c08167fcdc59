"""`python -m tools.import_graph [--modules]`: the project's import graph, read from the code, as Mermaid.

The modules are found on disk (every `.py` under components/, tools/ and policies/, plus the
program's `__main__.py`) and their imports read from the syntax tree, relative ones resolved, so
the graph and the architecture guards (tests/test_architecture.py) see the same modules and
edges. By default modules are grouped by package (`components.config.*` is one node); with
`--modules` every module is a node. Paste the output into any Mermaid renderer, or a Markdown
file that GitHub renders.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Lower layers first; a module may import its own layer or a lower one, never a higher one.
LAYERS = (
    (
        "components.dra_constants",
        "components.nebius_sdk",
        "components.dra_minors",
        "components.gpu_platforms",
        "components.resource_presets",
        "components.redaction",
        "components.shown",
    ),
    ("components.input",),
    ("components.model", "components.merge", "components.queue_model", "components.repository_model"),
    ("components.labels",),
    ("components.cel",),
    ("components.config",),
    ("components.values",),
    ("components",),
)


PACKAGES = ("components", "tools", "policies")


def python_files() -> list[Path]:
    """Every Python file of the program, the tools and the pack, found on disk rather than by import."""
    return sorted(
        path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "__pycache__" not in path.parts and "node_modules" not in path.parts
    )


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> list[str]:
    return ["__main__", *sorted(module_name(path) for path in python_files())]


def module_file(name: str) -> Path:
    path = ROOT / Path(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def project_imports(name: str, known: Collection[str] | None = None) -> set[str]:
    """Every project module `name` imports, guarded by TYPE_CHECKING or not, at any depth in the file.

    `known` is the project's modules (found on disk when not given): a caller walking every module finds them once.
    """
    path = module_file(name)
    tree = ast.parse(path.read_text())
    known = set(project_modules() if known is None else known)
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            for alias in node.names:
                child = f"{module}.{alias.name}"
                found.add(child if child in known else module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {module for module in found if module in known and module != name}


def layer_of(name: str) -> int:
    for rank, prefixes in enumerate(LAYERS):
        if any(name == prefix or name.startswith(f"{prefix}.") for prefix in prefixes):
            return rank
    return len(LAYERS)


def package_of(name: str) -> str:
    """The node a module is drawn as at package level: its subpackage (`components.config`), or itself.

    Modules directly under components/ (model, the components) are layers of their own, so they stay apart.
    """
    package = name if module_file(name).name == "__init__.py" else name.rpartition(".")[0]
    return package if package.count(".") >= 1 else name


def edges(modules: bool = False) -> set[tuple[str, str]]:
    node = (lambda name: name) if modules else package_of
    known = project_modules()
    return {
        (node(name), node(target))
        for name in known
        for target in project_imports(name, known)
        if node(name) != node(target)
    }


def mermaid(modules: bool = False) -> str:
    lines = ["graph TD"]
    lines += [f'    {a.replace(".", "_")}["{a}"] --> {b.replace(".", "_")}["{b}"]' for a, b in sorted(edges(modules))]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.import_graph", description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", action="store_true", help="one node per module instead of per package")
    args = parser.parse_args(argv)
    sys.stdout.write(mermaid(args.modules))
    return 0


if __name__ == "__main__":
    sys.exit(main())
