"""What a workflow file may say, and how a mistake in one is reported when it is read:
by the file, the place and what is allowed there."""

from pathlib import Path
from typing import Any

import pytest
import yaml

from sleuth.errors import ConfigError
from sleuth.workflows.workflow_book import WorkflowBook, load_workflow


def written(tmp_path: Path, steps: list[dict[str, Any]], **top: Any) -> Path:
    path = tmp_path / "flow.yaml"
    data = {"name": "flow", "inputs": {"product": {"required": True}}, "steps": steps, **top}
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def problem(tmp_path: Path, steps: list[dict[str, Any]], **top: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        load_workflow(written(tmp_path, steps, **top))
    assert "flow.yaml is invalid" in caught.value.message
    return caught.value.message


LISTING = {"id": "docs", "documents": {"tags": ["policy"]}}


def test_a_well_formed_workflow_loads(tmp_path: Path) -> None:
    each = {
        "over": "docs",
        "key": "{{item.path}}",
        "steps": [
            {"id": "summary", "summarise": {"text": "{{item.text}}"}},
            {
                "id": "out",
                "sink": {
                    "jsonl": "out.jsonl",
                    "key": ["path"],
                    "record": {
                        "path": "{{item.path}}",
                        "s": "{{summary.text}}",
                        "p": "{{inputs.product}}",
                    },
                },
            },
        ],
    }
    flow = load_workflow(written(tmp_path, [LISTING, {"id": "each", "for_each": each}]))
    assert [step.kind for step in flow.steps] == ["documents", "for_each"]


@pytest.mark.parametrize(
    ("step", "said"),
    [
        ({"id": "s", "summarise": {"text": "{{doc.text}}"}}, "{{doc.text}} names nothing"),
        ({"id": "s", "summarise": {"text": "{{inputs.prodcut}}"}}, "no input 'prodcut'"),
        ({"id": "s", "summarise": {"text": "{{run.start}}"}}, "run has no 'start'"),
        ({"id": "s", "summarise": {"text": "{{item.text}}"}}, "{{item.text}} names nothing"),
        (
            {"id": "s", "filter": {"over": "later", "where": [{"field": "a", "equals": 1}]}},
            "over 'later' is no earlier step",
        ),
        (
            {
                "id": "s",
                "summarise": {"text": "x"},
                "extract": {"text": "x", "fields": {"a": {"pattern": "(a)"}}},
            },
            "give exactly one of",
        ),
        (
            {"id": "s", "extract": {"text": "x", "fields": {"a": {"pattern": "(unclosed"}}}},
            "is not a regular expression",
        ),
        (
            {"id": "s", "extract": {"text": "x", "fields": {"a": {"pattern": "a", "group": 2}}}},
            "has no group 2",
        ),
        ({"id": "run", "summarise": {"text": "x"}}, "reserved"),
        (
            {
                "id": "s",
                "sink": {
                    "jsonl": "a",
                    "sqlite": "b",
                    "table": "t",
                    "key": ["a"],
                    "record": {"a": "x"},
                },
            },
            "give one of jsonl",
        ),
        (
            {"id": "s", "sink": {"jsonl": "a", "key": ["b"], "record": {"a": "x"}}},
            "key names fields the record lacks: b",
        ),
        (
            {
                "id": "s",
                "sink": {
                    "sqlite": "a",
                    "table": "t",
                    "key": ["a"],
                    "record": {"a": "x", "b c": "y"},
                },
            },
            "so identifiers: b c",
        ),
    ],
)
def test_a_mistake_is_named_with_what_is_allowed(
    tmp_path: Path, step: dict[str, Any], said: str
) -> None:
    assert said in problem(tmp_path, [LISTING, step])


def test_a_schedule_must_be_cron(tmp_path: Path) -> None:
    assert "not a cron expression" in problem(tmp_path, [LISTING], schedule="every night")


def test_a_folder_of_workflows_keeps_the_last_good_set(tmp_path: Path) -> None:
    folder = tmp_path / "flows"
    folder.mkdir()
    path = written(folder, [LISTING])
    book = WorkflowBook(folder)
    assert list(book.current()) == ["flow"]
    path.write_text(path.read_text(encoding="utf-8").replace("documents", "documnets"), "utf-8")
    assert list(book.current()) == ["flow"]
