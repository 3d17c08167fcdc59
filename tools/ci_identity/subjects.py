"""GitHub's OIDC subjects (`sub`) for one repository, in the two forms GitHub sends.

The default subjects (docs.github.com/en/actions/reference/security/oidc, "Example subject claims"):
a job that references an environment gets `repo:OWNER/REPO:environment:NAME`; a pull_request run
whose job references none gets `repo:OWNER/REPO:pull_request`. Repositories created, renamed or
transferred on or after 2026-07-15, and those opted in, get immutable subject claims instead: the
owner's and the repository's numeric IDs follow their names after `@`,
`repo:OWNER@OWNER_ID/REPO@REPO_ID:environment:NAME` (GitHub changelog 2026-04-23, "Immutable subject
claims for GitHub Actions OIDC tokens"; learn.microsoft.com/entra/workload-id/workload-identities-github-immutable-subjects).
IDs are never reused, so a deleted or renamed repository's name claimed by someone else cannot mint
a matching subject. Nebius compares the subject whole (federated_subject_id, "calculated from the
sub claim", nebius/api nebius/iam/v1/federated_credentials.proto), so the trust must be the exact form
the repository sends.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GitHubRepository:
    """A repository as its subjects name it; `ids` (owner ID, repository ID) selects the immutable form."""

    owner: str
    name: str
    ids: tuple[int, int] | None = None

    @property
    def subject_prefix(self) -> str:
        """`repo:OWNER/REPO`, or `repo:OWNER@OWNER_ID/REPO@REPO_ID`: what GitHub's API calls sub_claim_prefix."""
        if self.ids is None:
            return f"repo:{self.owner}/{self.name}"
        owner_id, repository_id = self.ids
        return f"repo:{self.owner}@{owner_id}/{self.name}@{repository_id}"

    def environment_subject(self, environment: str) -> str:
        return f"{self.subject_prefix}:environment:{environment}"

    def pull_request_subject(self) -> str:
        return f"{self.subject_prefix}:pull_request"
