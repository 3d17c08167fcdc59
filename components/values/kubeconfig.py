"""The kubeconfig for an mk8s cluster, shaped as Nebius's own tooling writes it.

It carries no credential: the `nebius` CLI's exec plugin mints a short-lived token on
every call, so the file is safe to hand to CI runners that have the CLI and a profile.
"""

from __future__ import annotations

import base64

import yaml

EXEC_API_VERSION = "client.authentication.k8s.io/v1beta1"
TOKEN_ARGS = ("mk8s", "v1", "cluster", "get-token", "--format", "json")


def build_kubeconfig(cluster_name: str, endpoint: str, ca_pem: str, profile: str | None = None) -> str:
    server = endpoint if endpoint.startswith("https://") else f"https://{endpoint}"
    user = f"{cluster_name}-nebius"
    args = [*TOKEN_ARGS] + (["--profile", profile] if profile else [])
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster_name,
                "cluster": {
                    "server": server,
                    "certificate-authority-data": base64.b64encode(ca_pem.encode()).decode(),
                },
            }
        ],
        "users": [
            {
                "name": user,
                "user": {
                    "exec": {
                        "apiVersion": EXEC_API_VERSION,
                        "command": "nebius",
                        "args": args,
                        "interactiveMode": "Never",
                        "provideClusterInfo": False,
                    }
                },
            }
        ],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": user}}],
        "current-context": cluster_name,
    }
    return yaml.safe_dump(config, sort_keys=False)
