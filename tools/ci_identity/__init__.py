"""Keyless CI identities: the one-time bootstrap (a Pulumi project of its own) and the CI login it enables.

`Pulumi.yaml` here is the bootstrap an administrator runs once per repository and environment
(`pulumi up -s dev`, `-s prod` from this directory); `exchange` is what a workflow runs on every job
to trade GitHub's OIDC token for a short-lived Nebius IAM token. Nothing here is imported by the
stack's own program.
"""
