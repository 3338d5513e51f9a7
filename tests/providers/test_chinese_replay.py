"""A Chinese question through `sleuth search` with the four Chinese back ends, offline.

The cassettes of bocha, zhipu, baidu and iqs (tests/data/<name>/cassette.jsonl) answer
the same question; the bodies share pages (Xinhua, NobelPrize.org), so what a user
checks is that they come back merged into one list, dated, with a cited summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DATA_ROOT
from typer.testing import CliRunner

from sleuth.api.cli import app

QUERY = "2024年诺贝尔物理学奖授予了谁"
CHINESE = ("bocha", "zhipu", "baidu", "iqs")


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLEUTH_CONFIG", raising=False)
    monkeypatch.setenv("SLEUTH_KB__PATH", str(tmp_path / "kb.sqlite"))
    monkeypatch.setenv("SLEUTH_STORE__PATH", str(tmp_path / "state.sqlite"))
    # A loaded test machine must not turn a slow replay into a timeout.
    monkeypatch.setenv("SLEUTH_DEADLINE_S", "60")
    for name in ("BOCHA_API_KEY", "ZHIPU_API_KEY", "QIANFAN_API_KEY", "IQS_API_KEY"):
        monkeypatch.delenv(name, raising=False)  # replay needs no key
    return CliRunner()


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    path = tmp_path / "chinese.jsonl"
    path.write_text(
        "".join(
            (DATA_ROOT / name / "cassette.jsonl").read_text(encoding="utf-8") for name in CHINESE
        ),
        encoding="utf-8",
    )
    return path


def test_four_chinese_back_ends_replay_to_merged_dated_cited_results(
    runner: CliRunner, cassette: Path
) -> None:
    result = runner.invoke(
        app,
        [
            "search",
            QUERY,
            "--providers",
            ",".join(CHINESE),
            "--replay",
            str(cassette),
            "--json",
            "--include",
            "url",
            "--include",
            "published_at",
            "--max-results",
            "20",
            "--no-cache",
        ],
    )
    assert result.exit_code == 0, result.output
    response = json.loads(result.stdout)
    assert response["errors"] == []
    assert {name: response["providers"][name]["results"] for name in CHINESE} == {
        "bocha": 4,
        "zhipu": 3,
        "baidu": 3,
        "iqs": 2,
    }
    urls = [item["url"] for item in response["results"]]
    assert len(urls) == len(set(urls)), "the same page from three back ends is one result"
    assert urls.count("https://www.nobelprize.org/prizes/physics/2024/summary/") == 1
    xinhua_url = "https://www.news.cn/world/20241008/5b1c0e8d2f7a4a6c9e3d1f2a7b8c9d0e/c.html"
    assert urls.count(xinhua_url) == 1
    assert len(urls) == 7  # 12 hits in, 7 distinct pages
    xinhua = response["results"][urls.index(xinhua_url)]
    assert xinhua["published_at"].startswith("2024-10-08")
    assert sum(item["published_at"] is not None for item in response["results"]) >= 3
    summary = response["summary"]
    assert summary and all(sentence["citations"] for sentence in summary)
    assert "霍普菲尔德" in summary[0]["text"]
    assert all(item["url"] for item in response["results"])


def test_an_unknown_chinese_provider_name_lists_the_real_ones(runner: CliRunner) -> None:
    result = runner.invoke(app, ["search", QUERY, "--providers", "bocha,metaso", "--json"])
    error = json.loads(result.stdout)["errors"][0]
    assert error["field"] == "providers"
    assert {"bocha", "zhipu", "baidu"} <= set(error["allowed"])


def test_a_first_chinese_search_from_the_command_line_loads_the_segmenter_outside_its_deadline(
    cassette: Path, tmp_path: Path
) -> None:
    # A new process, so the segmenter's dictionary (about a second to load) is not loaded
    # yet; the deadline is shorter than that load.
    env = {
        **os.environ,
        "SLEUTH_DEADLINE_S": "0.8",
        "SLEUTH_KB__PATH": str(tmp_path / "kb.sqlite"),
        "SLEUTH_STORE__PATH": str(tmp_path / "state.sqlite"),
    }
    env.pop("SLEUTH_CONFIG", None)
    command = [sys.executable, "-m", "sleuth.api.cli", "search", QUERY, "--providers", "zhipu"]
    done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [*command, "--replay", str(cassette), "--json", "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout)
    assert response["providers"]["zhipu"]["status"] == "ok", response["providers"]
    assert response["results"]
