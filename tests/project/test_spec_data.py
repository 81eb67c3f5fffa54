"""tests/_spec_data.py: the official spec data is found through one setting; without it the
tests that need it are skipped with one reason, and under CI they fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from _spec_data import SETTING, spec_data, spec_data_dir


def test_the_setting_names_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mcp-schemas").mkdir()
    monkeypatch.setenv(SETTING, str(tmp_path))
    assert spec_data_dir() == tmp_path
    assert spec_data("mcp-schemas") == tmp_path / "mcp-schemas"


def test_the_default_is_the_shared_folder_beside_the_checkout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(SETTING, raising=False)
    assert spec_data_dir() == Path(__file__).resolve().parents[2].parent / "shared"


def test_absent_data_is_a_skip_that_says_what_to_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SETTING, str(tmp_path / "nowhere"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        spec_data("mcp-schemas/2025-11-25/schema.json")
    reason = str(skipped.value)
    assert str(tmp_path / "nowhere") in reason
    assert "modelcontextprotocol/modelcontextprotocol" in reason
    assert SETTING in reason
    # One reason for every such test, whatever it asked for: -ra folds them into one line.
    with pytest.raises(pytest.skip.Exception) as other:
        spec_data("spec-client-requirements.md")
    assert str(other.value) == reason


def test_absent_data_fails_under_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SETTING, str(tmp_path / "nowhere"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set: these tests must run"):
        spec_data("mcp-schemas/2025-11-25/schema.json")
