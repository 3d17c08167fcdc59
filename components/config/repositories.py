"""Where each chart is pulled from: every release's repository is a setting, so a mirror can serve them all.

An air-gapped or proxied cluster pulls its charts from a mirror (a Harbor or Artifactory project, a
classic repository on a private host); the stack's upstream repositories are only the defaults.
"""

from __future__ import annotations


def chart_repository(given: str, upstream: str) -> str:
    """The stack's mirror when it names one, else the chart's upstream; no trailing slash either way."""
    return (given or upstream).rstrip("/")
