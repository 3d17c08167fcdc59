"""Kubeconfigs and exec credential plugins the verifier's tests write into a test's temporary directory."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import yaml

EXEC_API = "client.authentication.k8s.io/v1beta1"


def kubeconfig_text(server: str, user: dict[str, Any] | None = None) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": server}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "users": [{"name": "u", "user": user if user is not None else {"token": "t"}}],
            "current-context": "x",
        }
    )


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def exec_user(command: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"apiVersion": EXEC_API, "command": command, "args": ["--profile", "dev"]}
    if env:
        spec["env"] = [{"name": name, "value": value} for name, value in env.items()]
    return {"exec": spec}
