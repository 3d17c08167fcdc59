"""A price's source is printed in every cost report and plan: one that may hold a credential is refused, unquoted.

The table (prices/nebius.yaml) and a stack's nebius-dra:priceOverrides share the shape, so both refuse it, each
naming where it is, what it has the shape of, and what a source may be.
"""

from __future__ import annotations

import json

import pytest

from components.config import ConfigError, parse_stack_config
from components.config.prices import PriceTableError, load_price_table, parse_price_table
from components.config.stack_file import load_stack_config, program_config
from components.input.prices import credential_shaped, prose_credential_shaped

OVERRIDES = "nebius-dra:priceOverrides"
TOKEN = "ghp_Z9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF9eD8c"
SECRET = "S3cr3tValue9"
HOSTILE_SOURCES = {
    "a query parameter": f"https://prices.example.com/?k={SECRET}",
    "a percent-encoded path": "https://prices.example.com/%53%33%63%72%33%74",
    "an encoded '?'": f"https://prices.example.com/x%3Fk={SECRET}",
    "an encoded '?' and '='": f"https://prices.example.com/x%3Fk%3D{SECRET}",
    "a GitHub token in text": f"contract 17, {TOKEN}",
    "a GitHub token in a path": f"https://prices.example.com/{TOKEN}",
    "a token field in text": f"token={SECRET}",
    "a token named in prose": f"token {SECRET}",
    "an AWS key id": "key AKIAIOSFODNN7EXAMPLE",
}
ALLOWED = "expected the Nebius page's URL (a host, a port and a path) or a reference such as a contract number"


def gpu_entry(source: str) -> dict:
    return {
        "platform": "gpu-h200-sxm",
        "presets": ["8gpu-128vcpu-1600gb"],
        "onDemand": {"usdPerGpuHour": 2.0, "source": source, "date": "2026-11-01"},
    }


def assert_unquoted(message: str, source: str) -> None:
    assert SECRET not in message and TOKEN not in message and "AKIAIOSFODNN7EXAMPLE" not in message
    assert source not in message


@pytest.mark.parametrize("source", HOSTILE_SOURCES.values(), ids=HOSTILE_SOURCES)
def test_a_source_that_may_hold_a_credential_is_refused_by_key_and_never_quoted(source):
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(
            program_config({**load_stack_config("prod"), OVERRIDES: json.dumps({"gpu": [gpu_entry(source)]})}), "prod"
        )
    message = str(refused.value)
    assert f'{OVERRIDES}: gpu[0].onDemand.source got "<{len(source)} characters: ' in message
    assert "hidden: may be a credential>" in message
    assert "expected" in message and "a contract number" in message
    assert_unquoted(message, source)


@pytest.mark.parametrize("source", HOSTILE_SOURCES.values(), ids=HOSTILE_SOURCES)
def test_the_price_table_refuses_a_source_that_may_hold_a_credential_without_quoting_it(source):
    text = json.dumps({"gpu": [gpu_entry(source)]})
    with pytest.raises(PriceTableError) as refused:
        parse_price_table(text, "hostile.yaml")
    message = str(refused.value)
    assert "hostile.yaml: gpu[0].onDemand.source got" in message and "a contract number" in message
    assert_unquoted(message, source)


def test_a_token_shaped_source_is_refused_with_what_a_source_may_be():
    with pytest.raises(PriceTableError) as refused:
        parse_price_table(json.dumps({"gpu": [gpu_entry(f"see {TOKEN}")]}), "hostile.yaml")
    assert f"which may hold a credential; {ALLOWED}" in str(refused.value)
    assert "a word shaped as a token, 16 or more letters and digits with both cases and a digit" in str(refused.value)


@pytest.mark.parametrize(
    "source",
    [
        "https://nebius.com/prices",
        "https://docs.nebius.com/signup-billing/billing-changes-oct-2025",
        "https://docs.nebius.com/compute/resources/pricing",
        "https://prices.example.com:8443/list/",
        "contract NB-2026-17",
        "internationalization of prices",
        # Issue 37: a page's anchor, and an '@', '&' or '#' in a reference, carry no credential and were refused.
        "https://nebius.com/prices#gpu",
        "https://docs.nebius.com/compute/resources/pricing#section-4.2",
        "H100 & H200, see @nebius",
        "contract #17",
        "https://nebius.com/prices/nvidia2024mirror",
    ],
)
def test_a_public_page_or_a_contract_number_is_a_source(source):
    assert not credential_shaped(source)
    assert parse_price_table(json.dumps({"gpu": [gpu_entry(source)]}), "fine.yaml").gpu[0].on_demand.source.source == (
        source
    )


@pytest.mark.parametrize("source", ["https://docs.nebius.com/price%20list", "price%20list of 2026-11"])
def test_an_encoded_space_is_refused_saying_to_do_without_it(source):
    with pytest.raises(PriceTableError) as refused:
        parse_price_table(json.dumps({"gpu": [gpu_entry(source)]}), "spaced.yaml")
    message = str(refused.value)
    assert "which may hold a credential" in message and source not in message
    assert "a '%'-encoding is refused whatever it spells, '%20' (a space) too: give the page's address without" in (
        message
    )
    assert "or, outside a URL (a reference such as a contract number, a note), write the space as a space" in message


def test_a_refusal_without_an_encoding_says_nothing_of_encoded_spaces():
    with pytest.raises(PriceTableError) as refused:
        parse_price_table(json.dumps({"gpu": [gpu_entry(f"see {TOKEN}")]}), "hostile.yaml")
    assert "'%20'" not in str(refused.value)


@pytest.mark.parametrize("field", ["note", "doubtful"])
@pytest.mark.parametrize("text", HOSTILE_SOURCES.values(), ids=HOSTILE_SOURCES)
def test_a_note_or_doubt_that_may_hold_a_credential_is_refused_by_key_and_never_quoted(field, text):
    entry = {**gpu_entry("https://nebius.com/prices"), field: f"read on the page, {text}"}
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(
            program_config({**load_stack_config("prod"), OVERRIDES: json.dumps({"gpu": [entry]})}), "prod"
        )
    message = str(refused.value)
    assert f'{OVERRIDES}: gpu[0].{field} got "<' in message and "hidden: may be a credential>" in message
    assert "which may hold a credential; expected a note in words, without a credential's marks: " in message
    assert "a price's source, note and doubtful are printed with it" in message
    assert_unquoted(message, text)


@pytest.mark.parametrize("field", ["note", "doubtful"])
def test_the_price_table_refuses_a_cpu_note_or_doubt_that_may_hold_a_credential(field):
    entry = {
        "platform": "cpu-d3",
        "onDemand": {"usdPerVcpuHour": 0.015, "usdPerGibHour": 0.0045, "source": "contract 17", "date": "2026-11-01"},
        field: f"see {TOKEN}",
    }
    with pytest.raises(PriceTableError) as refused:
        parse_price_table(json.dumps({"cpu": [entry]}), "hostile.yaml")
    assert f"hostile.yaml: cpu[0].{field} got" in str(refused.value)
    assert_unquoted(str(refused.value), f"see {TOKEN}")


def test_the_project_table_notes_and_doubts_are_in_words():
    table = load_price_table()
    texts = [
        text
        for price in (*table.gpu, *table.cpu)
        for text in (price.on_demand.source.note, price.on_demand.source.doubtful)
        if text
    ]
    assert texts and not [text for text in texts if credential_shaped(text)]


COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    "source",
    [
        f"https://github.com/nebius/docs/blob/{COMMIT}/prices.md",
        f"https://github.com/nebius/docs/commit/{COMMIT}",
        f"https://git.example.com/prices/tree/{'0123456789abcdef' * 4}/list",
    ],
    ids=["a permalink's SHA-1 commit", "a commit page", "a SHA-256 object id"],
)
def test_a_permalink_with_a_git_commit_id_in_its_path_is_a_source(source):
    assert not credential_shaped(source)
    assert parse_price_table(json.dumps({"gpu": [gpu_entry(source)]}), "fine.yaml").gpu[0].on_demand.source.source == (
        source
    )


@pytest.mark.parametrize(
    "source",
    [
        f"https://github.com/nebius/docs/blob/{COMMIT.upper()}/prices.md",
        f"https://github.com/nebius/docs/blob/{COMMIT}ab/prices.md",
        f"https://github.com/nebius/docs/blob/{TOKEN}/prices.md",
        f"commit {COMMIT}",
    ],
    ids=["upper-case hex", "42 hex digits", "a GitHub token in a path", "40 hex digits outside a path"],
)
def test_only_a_whole_path_segment_of_lowercase_hex_git_id_length_is_taken_for_a_commit(source):
    assert credential_shaped(source)


@pytest.mark.parametrize(
    "text",
    [
        f"https://nebius.com/prices#{SECRET}",
        f"https://nebius.com/prices#access_token={SECRET}",
        f"https://nebius.com/prices#gpu&k={SECRET}",
        f"https://ops@nebius.com/prices#{SECRET}",
        f"contract 17 k={SECRET}&x",
        f"contract 17 @{SECRET}Zq9xW2mN",
    ],
    ids=["a fragment of a token's case", "a fragment's parameter", "a parameter after an anchor", "a user", "a "
         "parameter in a reference", "a token-shaped word after an '@'"],
)  # fmt: skip
def test_a_fragment_or_mark_that_may_carry_a_credential_is_still_refused(text):
    """Issue 37's fix takes only what carries nothing: a page anchor, a reference's bare '@', '&' and '#'."""
    assert credential_shaped(text)
    if "://" in text:  # prose holds '=' and '&' as punctuation outside a URL
        assert prose_credential_shaped(f"see {text}")


def test_an_override_in_another_currency_is_refused_saying_why_only_usd_is_allowed():
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(
            program_config({**load_stack_config("prod"), OVERRIDES: json.dumps({"currency": "EUR", "gpu": []})}),
            "prod",
        )
    message = str(refused.value)
    assert f'{OVERRIDES}: currency got "EUR"; allowed: USD (the default), the only currency' in message
    assert "in US dollars as Nebius's price list and prices/nebius.yaml (currency: USD) give them" in message
    assert "convert a price quoted in another currency to USD" in message


@pytest.mark.parametrize(
    "note",
    [
        "Read on 2026-11-01: the page lists H200 at $3.50; spot below it.",
        "Contract NB-2026-17 (signed; see the account team): 8 GPUs a node.",
        "From https://nebius.com/prices, read 2026-11-01.",
        # Issue 37: a URL's page anchor in a note was refused as a credential's mark.
        "note: H100 & H200 read from https://nebius.com/prices#gpu, see @nebius.",
        "Mirror nvidia2024mirror priced as on https://nebius.com/prices#gpu-h200.",
    ],
)
def test_a_note_in_prose_may_use_colons_and_semicolons(note):
    entry = {**gpu_entry("https://nebius.com/prices"), "note": note}
    config = parse_stack_config(
        program_config({**load_stack_config("prod"), OVERRIDES: json.dumps({"gpu": [entry]})}), "prod"
    )
    assert config is not None


@pytest.mark.parametrize("field", ["note", "doubtful"])
@pytest.mark.parametrize("text", ["\x1b[31mred", "bell\x07", "two\nlines", "rtl\u202eoverride"])
def test_a_note_or_doubt_with_a_character_a_terminal_acts_on_is_refused(field, text):
    """Attack 2, A1: `\\e[31m` and `\\x07` in a note were taken, though a source refuses them by its pattern."""
    entry = {**gpu_entry("https://nebius.com/prices"), field: f"read on the page, {text}"}
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(
            program_config({**load_stack_config("prod"), OVERRIDES: json.dumps({"gpu": [entry]})}), "prod"
        )
    message = str(refused.value)
    assert f"{OVERRIDES}: gpu[0].{field} " in message and "a character a terminal acts on" in message
    assert not any(character in message for character in "\x1b\x07\u202e")
