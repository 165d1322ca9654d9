from __future__ import annotations

import json
from pathlib import Path

import pytest

import aimem
from aimem.settings import Settings, config_dir, data_dir


def test_defaults_match_the_design() -> None:
    s = Settings.load(environ={}, config_file=Path("/nonexistent"))
    assert (s.max_memories, s.min_priority_score, s.auto_prune, s.interpretation_enabled) == (
        100,
        0.3,
        True,
        True,
    )
    assert s.max_content_chars == 16_000 and s.database_url is None


def test_precedence_argument_env_file_default(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"max_memories": 10, "min_priority_score": 0.1, "model": "f"}))
    env = {"AIMEM_MAX_MEMORIES": "20", "AIMEM_MODEL": "e", "AIMEM_AUTO_PRUNE": "false"}
    s = Settings.load(environ=env, config_file=config, max_memories=30)
    assert s.max_memories == 30  # argument beats env
    assert s.model == "e"  # env beats file
    assert s.min_priority_score == 0.1  # file beats default
    assert s.auto_prune is False


def test_config_file_in_platform_dir_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    config_dir().mkdir(parents=True)
    (config_dir() / "config.json").write_text('{"max_memories": 7}')
    assert Settings.load().max_memories == 7
    assert str(data_dir()).endswith("xdg-data/aimem")


def test_openai_key_is_secret_and_from_standard_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    s = Settings.load()
    assert s.openai_api_key is not None and "sk-test-123" not in repr(s)


@pytest.mark.parametrize(
    ("env", "match"),
    [
        ({"AIMEM_MAX_MEMORIES": "lots"}, "max_memories"),
        ({"AIMEM_MIN_PRIORITY_SCORE": "1.5"}, "min_priority_score"),
        ({"AIMEM_MAX_MEMORIES": "0"}, "max_memories"),
    ],
)
def test_bad_values_name_the_setting(env: dict[str, str], match: str) -> None:
    with pytest.raises(aimem.ValidationError, match=match):
        Settings.load(environ=env, config_file=Path("/nonexistent"))


def test_broken_config_file_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(aimem.ValidationError, match="config file"):
        Settings.load(environ={}, config_file=bad)


def test_explicit_settings_object_with_keyword_overrides(db_url: str) -> None:
    base = Settings.load(max_memories=5)
    with aimem.MemoryStore(
        db_url, settings=base, min_priority_score=0.0, judge=aimem.HeuristicJudge()
    ) as store:
        assert (store.settings.max_memories, store.settings.min_priority_score) == (5, 0.0)
        assert store.settings.database_url == db_url
