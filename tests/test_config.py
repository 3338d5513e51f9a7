"""Settings come from sleuth.yaml, then SLEUTH_* variables; mistakes are named."""

from pathlib import Path

import pytest

from sleuth.config import load_settings
from sleuth.errors import ConfigError


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLEUTH_CONFIG", raising=False)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sleuth.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_embedded_default() -> None:
    settings = load_settings()
    assert settings.chain == ["local"]
    assert settings.deadline_s == 3.0
    assert settings.egress_proxy is None
    assert set(settings.providers) >= {"local", "searxng", "wikipedia"}
    assert settings.providers["searxng"].enabled is False


def test_file_configures_one_provider_and_keeps_the_others(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "chain: [local, searxng]\nproviders:\n  searxng:\n    enabled: true\n    base_url: http://searx.lan:8080\n",
    )
    settings = load_settings(path)
    assert settings.chain == ["local", "searxng"]
    assert settings.providers["searxng"].enabled is True
    assert settings.providers["searxng"].base_url == "http://searx.lan:8080"
    assert settings.providers["local"].base_url == "kb:search"


def test_environment_overrides_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "deadline_s: 2\nclean:\n  max_snippet_chars: 200\n")
    monkeypatch.setenv("SLEUTH_DEADLINE_S", "7.5")
    monkeypatch.setenv("SLEUTH_PROVIDERS__WIKIPEDIA__TIMEOUT_S", "1.5")
    settings = load_settings(path)
    assert settings.deadline_s == 7.5
    assert settings.clean.max_snippet_chars == 200
    assert settings.providers["wikipedia"].timeout_s == 1.5


def test_sleuth_config_variable_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "elsewhere.yaml"
    path.write_text("deadline_s: 9\n", encoding="utf-8")
    monkeypatch.setenv("SLEUTH_CONFIG", str(path))
    assert load_settings().deadline_s == 9


def test_unknown_keys_and_bad_values_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="deadline"):
        load_settings(write(tmp_path, "deadline: 3\n"))
    with pytest.raises(ConfigError, match=r"deadline_s"):
        load_settings(write(tmp_path, "deadline_s: -1\n"))


def test_chain_must_name_configured_providers(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nosuch"):
        load_settings(write(tmp_path, "chain: [local, nosuch]\n"))


def test_broken_yaml_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_settings(write(tmp_path, "chain: [local\n"))


def test_documented_example_config_loads() -> None:
    example = Path(__file__).parents[1] / "docs" / "sleuth.example.yaml"
    settings = load_settings(example)
    assert settings.chain


def test_overrides_are_validated_and_win_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLEUTH_DEADLINE_S", "9")
    (tmp_path / "c.jsonl").write_text("", encoding="utf-8")
    settings = load_settings(None, replay=str(tmp_path / "c.jsonl"), deadline_s="4")
    assert settings.replay == tmp_path / "c.jsonl"
    assert settings.deadline_s == 4.0
    with pytest.raises(ConfigError, match="deadline_s"):
        load_settings(None, deadline_s=0)


def test_an_unknown_key_gets_the_allowed_keys_and_the_nearest(tmp_path: Path) -> None:
    config = tmp_path / "sleuth.yaml"
    config.write_text("deadlin_s: 3\nproviders: {brave: {enabld: false}}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_settings(config)
    message = refused.value.message
    assert "deadlin_s: unknown key (did you mean 'deadline_s'?)" in message
    assert "providers.brave.enabld: unknown key (did you mean 'enabled'?)" in message
    assert "allowed here: enabled, base_url, api_key_env, timeout_s, options" in message


def test_a_misspelt_environment_variable_is_warned_about(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SLEUTH_DEADLIN_S", "3")
    monkeypatch.setenv("SLEUTH_SERVE__PORT", "9000")  # a real one: no warning
    with caplog.at_level("WARNING", logger="sleuth.config"):
        settings = load_settings()
    assert settings.serve.port == 9000
    (warned,) = [r.getMessage() for r in caplog.records if r.name == "sleuth.config"]
    assert warned == (
        "SLEUTH_DEADLIN_S is not a sleuth setting and is ignored; did you mean SLEUTH_DEADLINE_S?"
    )


@pytest.mark.parametrize("content", [None, "not json\n"])
def test_a_missing_or_broken_replay_cassette_is_a_config_error(
    tmp_path: Path, content: str | None
) -> None:
    cassette = tmp_path / "cassette.jsonl"
    if content is not None:
        cassette.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match="cassette"):
        load_settings(replay=cassette)
