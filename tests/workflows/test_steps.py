"""The computing steps: fields found by pattern (and missing ones said to be missing),
a lead summary within its length, items filtered by their fields."""

from sleuth.workflows.steps import extract_fields, keep, summarise
from sleuth.workflows.workflow_models import Condition, FieldPattern

PAGE = (
    "---\ntags: [policy]\n---\n# 请假制度\n\n员工请假需提前三天申请。"
    "连续请假超过五天需部门负责人批准。病假需附医院证明。\n\n生效日期：2026年3月1日适用部门：人力资源部修订人：王芳"
)


def test_fields_are_taken_from_their_patterns_and_a_missing_one_is_none() -> None:
    fields = {
        "effective_date": FieldPattern(pattern=r"生效日期[:：]\s*(\d{4}年\d{1,2}月\d{1,2}日)"),
        "department": FieldPattern(pattern=r"适用部门[:：]\s*(.+?)(?=修订人|$)"),
        "reviser": FieldPattern(pattern=r"修订人[:：]\s*(\S+)"),
        "approver": FieldPattern(pattern=r"批准人[:：]\s*(\S+)"),
        "whole": FieldPattern(pattern=r"ef+ective", group=0, flags=["ignorecase"]),
    }
    found = extract_fields(PAGE + "\nEFFECTIVE", fields)
    assert found == {
        "effective_date": "2026年3月1日",
        "department": "人力资源部",
        "reviser": "王芳",
        "approver": None,
        "whole": "EFFECTIVE",
    }


def test_a_summary_keeps_whole_leading_sentences_within_its_length() -> None:
    short = summarise(PAGE, 35)
    assert short["text"] == "员工请假需提前三天申请。连续请假超过五天需部门负责人批准。"
    assert short["sentences"] == 2 and len(short["text"]) <= 35
    assert "tags" not in summarise(PAGE, 300)["text"] and "#" not in summarise(PAGE, 300)["text"]
    english = summarise("# T\n\nFirst point here. Second point. Third.", 32)
    assert english["text"] == "First point here. Second point."
    cut = summarise("一句非常非常长的话" * 10, 20)
    assert cut["cut"] and len(cut["text"]) == 20 and cut["text"].endswith("…")


def test_filter_keeps_items_meeting_every_condition() -> None:
    items = [
        {"title": "Leave policy", "tags": ["policy", "hr"], "lang": "en"},
        {"title": "Team lunch", "tags": ["news"], "lang": "en"},
        {"title": "请假制度", "tags": ["policy"], "lang": "zh"},
    ]
    assert keep(items, [Condition(field="tags", contains="policy")]) == [items[0], items[2]]
    assert keep(
        items,
        [Condition(field="tags", one_of=["hr", "news"]), Condition(field="lang", equals="en")],
    ) == [items[0], items[1]]
    assert keep(items, [Condition(field="title", matches=r"^Team")]) == [items[1]]


def test_a_pattern_without_groups_gives_its_whole_match() -> None:
    fields = {"year": FieldPattern(pattern=r"20\d\d")}
    assert extract_fields("修订于 2026 年", fields) == {"year": "2026"}
