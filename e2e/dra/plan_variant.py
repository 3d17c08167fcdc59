"""The offline plan of a stack config that has no Pulumi.<stack>.yaml: a variant of a real stack.

    venv/bin/python e2e/dra/plan_variant.py --stack ib-operator --config config.json --out DIR

`config.json` maps full keys (`nebius-dra:gpuNodeGroups`) to the strings a Pulumi program receives,
as `components.config.stack_file.load_stack_config` returns them. It runs the same `build_plan` as
`python -m tools.plan` (real program, SDK mock engine, the same files under `<out>/<stack>/`) and exits
as that command does: 0 when `pulumi up` could go ahead, 1 on a mandatory policy, 2 when the program
refuses the config. The e2e tests run it in a subprocess, as they run `python -m tools.plan` for the
real stacks, so the program's global Pulumi state never leaks into the test process.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent


def main() -> int:
    sys.path.insert(0, str(PROJECT_DIR))
    from tools.plan.__main__ import exit_status
    from tools.plan.model import build_plan
    from tools.plan.report import RENDERERS, render_error

    parser = argparse.ArgumentParser(prog="plan_variant.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", required=True)
    parser.add_argument("--config", type=Path, required=True, help="JSON map of full config keys to strings")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    config = json.loads(args.config.read_text())
    if not isinstance(config, dict) or not all(isinstance(v, str) for v in config.values()):
        print(f"{args.config}: expected a JSON map of config keys to strings", file=sys.stderr)
        return 2
    plan = build_plan(args.stack, config=config, out=args.out)
    if plan.error is not None:
        sys.stderr.write(render_error(plan))
    else:
        sys.stdout.write(RENDERERS["text"](plan))
    return exit_status(plan)


if __name__ == "__main__":
    sys.exit(main())
