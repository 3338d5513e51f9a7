"""`sleuth run` on the shipped knowledge-steward example, as its comment says to run it:
index the pages, run the workflow, find the three tagged pages in the store."""

import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sleuth.api.cli import app

EXAMPLE = Path(__file__).parents[2] / "examples" / "knowledge_steward"


def test_the_steward_example_runs_from_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "examples" / "knowledge_steward"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("*.sqlite", "*.jsonl"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    config = str(copy / "sleuth.yaml")
    runner = CliRunner()

    indexed = runner.invoke(app, ["index", "--config", config, str(copy / "pages")])
    ran = runner.invoke(app, ["run", str(copy / "knowledge_steward.yaml"), "--config", config])
    bad = runner.invoke(
        app, ["run", str(copy / "knowledge_steward.yaml"), "--config", config, "-i", "x=1"]
    )

    assert indexed.exit_code == 0, indexed.output
    assert ran.exit_code == 0, ran.output
    assert "success" in ran.output and "written: 3" in ran.output
    rows = sqlite3.connect(copy / "knowledge_store.sqlite").execute(
        "SELECT title, reviser FROM policy_pages ORDER BY title"
    )
    assert sorted(rows) == [
        ("Expense reimbursement procedure", "Lukas Meier"),
        ("年假与请假制度", "王芳"),
        ("生产事故处理流程", "李强"),
    ]
    assert bad.exit_code == 2 and "x: unknown parameter" in bad.output
