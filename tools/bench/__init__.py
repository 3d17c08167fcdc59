"""`make bench`: how long an offline plan takes, against the floors no program on this SDK can beat.

    python -m tools.bench [--runs 5] [--no-profile] [--only plans|fleets]

Every timing is a fresh Python process timed from the outside, the way `make plan` is felt:
interpreter start, imports, the program under the mock engine. Two floors:

- the import floor, a process that only imports what the program cannot do without (`pulumi`,
  `pulumi_nebius` and the `pulumi_kubernetes` modules it uses): `make plan` of dev is held to
  a ratio of it;
- the SDK floor of each generated stack (`floor.py`): the same resources, of the same types,
  under the same parents, registered through the same SDK and mock engine with nothing else.
  The program for that stack is held to a ratio of it.

Generated stacks (`fleets.py`) start from dev's config and replace its GPU node groups and its
user claim templates with N copies; they are built in memory and handed to
`run_program(config=...)`. Where the time goes is a cProfile of one run per scenario, summed by
package (`profile.py`).

This is a benchmark, not a test: it prints PASS or FAIL per target and always exits 0.
"""

from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent
