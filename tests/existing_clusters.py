"""A stack turned into one on an existing cluster: its kubeconfig given as a secret setting, no Nebius project or subnet."""

from __future__ import annotations

import yaml

from components.config.stack_file import load_stack_config
from tests.helpers import without_cluster_keys
from tools.plan.mock_engine import run_program

KEY = "nebius-dra:existingClusterKubeconfig"
KUBECONFIG = yaml.safe_dump(
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "c", "cluster": {"server": "https://10.0.0.1:6443", "certificate-authority-data": "Q0E="}}
        ],
        "users": [{"name": "u", "user": {"token": "t0ken-that-must-never-show"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
)


def existing(stack: str, kubeconfig: str = KUBECONFIG, secret: bool = True, **changes: str):
    """`stack` onto an existing cluster, the keys of the cluster it would create at their defaults (that mode
    refuses them)."""
    config = {
        **without_cluster_keys(load_stack_config(stack)),
        KEY: kubeconfig,
        "nebius-dra:parentId": "",
        "nebius-dra:subnetId": "",
        **changes,
    }
    return run_program(stack, config=config, secret_keys=[KEY] if secret else [])
