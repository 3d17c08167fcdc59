"""What each stack key and each group field means, written once beside its type, for the generated docs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import (
    BaseModel,
)


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Setting:
    """A stack key as `Pulumi.yaml` declares it and the README lists it (`python -m tools.config_docs`).

    `meaning` is Markdown, written once: the README's column, and `Pulumi.yaml`'s description with
    the Markdown taken out. `default` is what the CLI merges in when a stack leaves the key out
    (REQUIRED: none). `shown_default` and `shown_type` are the README's words where the value
    itself would not say it (`dra-<stack>` for an empty name).
    """

    section: str
    meaning: str
    default: Any = REQUIRED
    shown_default: str | None = None
    shown_type: str | None = None


@dataclass(frozen=True)
class Doc:
    """What a setting means, in Markdown, where the README's tables read it (`python -m tools.config_docs`).

    `required` is the README's word for when a field must be given; without it, "yes" for a field
    with no default and "no" otherwise.
    """

    meaning: str
    required: str | None = None


def field_docs(model: type[BaseModel]) -> list[tuple[str, str, str]]:
    """(name, required, meaning) of every field of `model`, in declaration order; every field must have a Doc."""
    docs = []
    for name, info in model.model_fields.items():
        (doc,) = [item for item in info.metadata if isinstance(item, Doc)]
        docs.append((name, doc.required or ("yes" if info.is_required() else "no"), doc.meaning))
    return docs
