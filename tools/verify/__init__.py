"""Checks a live cluster the way the DRA guide's manual steps do, in one command.

`python -m tools.verify --stack <stack>` reads what the stack promises (its config), asks the
cluster through the official `kubernetes` client whether it holds, runs a smoke workload that
claims a GPU (and an InfiniBand NIC on InfiniBand stacks), and exits 0 only when every check
passed. The checks are pure functions over API objects, so the tests feed them the same JSON
the API server returns.
"""
