"""What the redactor takes out, and what it leaves (mock_servers/recording/_redact.py)."""

from __future__ import annotations

import pytest

from mock_servers.recording import Redactor, is_secret_name


@pytest.mark.parametrize(
    "name",
    [
        "authorization",
        "Authorization",
        "api_key",
        "apiKey",
        "x-api-key",
        "password",
        "client_secret",
        "access_token",
        "refreshToken",
        "GITHUB_TOKEN",
        "cookie",
        "set-cookie",
    ],
)
def test_names_that_hold_credentials(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["progressToken", "maxTokens", "cursor", "author", "name", "description", "tokenizer"]
)
def test_names_the_protocol_uses_for_plain_values(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    ("text", "gone", "placeholder"),
    [
        ("Authorization: Bearer abc123def456ghi", "abc123def456ghi", "<redacted:bearer>"),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl here",
            "eyJhbGciOiJIUzI1NiJ9",
            "<redacted:jwt>",
        ),
        ("see https://h.example/x?api_key=k-998877&page=2", "k-998877", "<redacted:api_key>"),
        ("GITHUB_TOKEN=ghx-1234abcd in the env", "ghx-1234abcd", "<redacted:github_token>"),
        ("key sk-abcdefghijklmnop1234 leaked", "sk-abcdefghijklmnop1234", "<redacted:api_key>"),
        ("AKIAABCDEFGHIJKLMNOP", "AKIAABCDEFGHIJKLMNOP", "<redacted:api_key>"),
    ],
)
def test_credential_shapes_inside_text(text: str, gone: str, placeholder: str) -> None:
    redacted = Redactor().text(text)
    assert gone not in redacted
    assert placeholder in redacted


def test_prose_about_tokens_is_left_alone() -> None:
    prose = "Bearer authentication uses a token identifying the user; max_tokens: 1000"
    assert Redactor().text(prose) == prose


def test_members_named_as_secrets_are_replaced_whatever_their_value() -> None:
    redactor = Redactor()
    value = {
        "password": "x",
        "nested": [{"apiKey": "short"}],
        "progressToken": "p-1",
        "token_count": 3,
    }
    assert redactor.json(value) == {
        "password": "<redacted:password>",
        "nested": [{"apiKey": "<redacted:apikey>"}],
        "progressToken": "p-1",
        "token_count": 3,
    }
    assert redactor.found == {"password": 1, "apikey": 1}


def test_known_values_are_caught_anywhere_under_their_name() -> None:
    redactor = Redactor(
        environ={
            "MY_SERVICE_SECRET": "plain-words-value",
            "HOME": "/home/me",
            "AUTH_HOST": "localhost",  # a secret-like name, but no credential's value
            "SSH_AUTH_SOCK": "/run/agent.sock",
        }
    )
    redactor.add_header("Authorization", "Bearer opaque")
    redactor.add_header("Cookie", "sid=cookie-value-1; theme=dark")
    text = "env plain-words-value, token opaque, cookie cookie-value-1, /home/me, localhost"
    assert redactor.text(text) == (
        "env <redacted:my_service_secret>, token <redacted:authorization>, "
        "cookie <redacted:cookie sid>, /home/me, localhost"
    )


def test_the_callers_own_patterns_are_named_custom() -> None:
    redactor = Redactor([r"ACME-\d+"])
    assert redactor.text("order ACME-1234 shipped") == "order <redacted:custom> shipped"
