"""Mapping files: validated at load, overridable, reloaded on change, last good kept."""

import logging
import os
from pathlib import Path

import pytest

from sleuth import providers
from sleuth.config import Settings
from sleuth.errors import ConfigError
from sleuth.gateway import Sleuth
from sleuth.mapping_files import BUILTIN_DIR, RECHECK_S, MappingFiles, read_mapping
from sleuth.testing import Cassette

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("path", sorted(BUILTIN_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_builtin_mapping_is_valid_and_has_a_provider(path: Path) -> None:
    mapping = read_mapping(path)
    assert path.stem in providers.names()
    assert "title" in mapping.fields


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    # make the change visible even within one mtime tick
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_override_dir_wins_and_reloads_when_the_file_changes(tmp_path: Path) -> None:
    clock = Clock()
    files = MappingFiles(tmp_path, clock=clock)
    searxng = providers.get("searxng")
    assert files.for_provider(searxng).fields["snippet"] == ["content"]
    override = tmp_path / "searxng.yaml"
    write(override, "results: results\nfields:\n  title: [title]\n  snippet: [summary]\n")
    clock.now += RECHECK_S
    assert files.for_provider(searxng).fields["snippet"] == ["summary"]
    write(override, "results: results\nfields:\n  title: [title]\n  snippet: [abstract, summary]\n")
    clock.now += RECHECK_S
    assert files.for_provider(searxng).fields["snippet"] == ["abstract", "summary"]


def test_a_change_is_noticed_within_the_recheck_delay_not_at_every_search(
    tmp_path: Path,
) -> None:
    clock = Clock()
    files = MappingFiles(tmp_path, clock=clock)
    searxng = providers.get("searxng")
    override = tmp_path / "searxng.yaml"
    write(override, "results: results\nfields:\n  title: [title]\n  snippet: [summary]\n")
    assert files.for_provider(searxng).fields["snippet"] == ["summary"]
    write(override, "results: results\nfields:\n  title: [title]\n  snippet: [abstract]\n")
    clock.now += RECHECK_S / 2
    assert files.for_provider(searxng).fields["snippet"] == ["summary"]  # not looked at yet
    clock.now += RECHECK_S / 2
    assert files.for_provider(searxng).fields["snippet"] == ["abstract"]
    override.unlink()  # the override goes: the built-in mapping again, as promptly
    clock.now += RECHECK_S
    assert files.for_provider(searxng).fields["snippet"] == ["content"]


def test_a_broken_file_keeps_the_last_good_mapping_and_logs_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = MappingFiles(tmp_path, recheck_s=0.0)
    searxng = providers.get("searxng")
    override = tmp_path / "searxng.yaml"
    write(override, "results: results\nfields:\n  title: [title]\n  snippet: [summary]\n")
    assert files.for_provider(searxng).fields["snippet"] == ["summary"]
    write(override, "results: results\nfields:\n  headline: [title]\n")
    with caplog.at_level(logging.WARNING, logger="sleuth.mapping_files"):
        assert files.for_provider(searxng).fields["snippet"] == ["summary"]
    assert "keeping the last good mapping for searxng" in caplog.text
    assert "headline" in caplog.text


def test_a_file_broken_from_the_start_is_a_config_error(tmp_path: Path) -> None:
    write(tmp_path / "searxng.yaml", "results: [not, a, path]\nfields: {}\n")
    with pytest.raises(ConfigError, match=r"searxng\.yaml is invalid"):
        MappingFiles(tmp_path).for_provider(providers.get("searxng"))


async def test_a_renamed_field_is_fixed_in_yaml_with_no_code_change(tmp_path: Path) -> None:
    """SearXNG renames `content` to `summary`: snippets vanish until the YAML learns the name."""
    body = {
        "query": "q",
        "results": [{"url": "https://a.example/", "title": "A", "summary": "The text."}],
    }
    cassette = Cassette()
    for _ in range(3):
        cassette.add("searxng", "q", body=body)
    settings = Settings(
        chain=["searxng"],
        providers={"searxng": {"enabled": True}},
        mappings_dir=tmp_path,
        store={"backend": "memory"},
    )
    sleuth = Sleuth(settings, cassette.transport())
    clock = Clock()
    sleuth.mappings = MappingFiles(tmp_path, clock=clock)  # so the test need not wait
    # Each search asks the provider again: the same query would be answered from the cache.
    fresh = {"query": "q", "no_cache": True}

    before = (await sleuth.search(fresh)).results[0]
    assert before.snippet == "A" and before.missing == ["snippet"]  # fell back to the title

    builtin = (BUILTIN_DIR / "searxng.yaml").read_text(encoding="utf-8")
    # The new name as the primary field: a clean item again.
    renamed = builtin.replace("snippet: [content]", "snippet: [summary, content]")
    write(tmp_path / "searxng.yaml", renamed)
    clock.now += RECHECK_S
    after = (await sleuth.search(fresh)).results[0]
    assert after.snippet == "The text." and after.degraded is None
    # As a fallback alias it still answers, and the item says its primary field was missing.
    write(
        tmp_path / "searxng.yaml",
        builtin.replace("snippet: [content]", "snippet: [content, summary]"),
    )
    clock.now += RECHECK_S
    fallback = (await sleuth.search(fresh)).results[0]
    assert fallback.snippet == "The text." and fallback.missing == ["snippet"]
