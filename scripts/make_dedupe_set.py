"""Write tests/data/dedupe/templated.jsonl: templated near-identical pages, labelled.

Each line is one search result: `group` (the results of one search), `page` (items
with the same page are copies of one page and should merge; different pages of one
group should not), `kind` (`page`, or how the copy was made), `url`, `title`,
`snippet`. The pages of a group come from one real-looking template (a shop's phone
listing, a flat for sale, a weather page, a timetable, release notes, a laptop
configuration, ...) and differ in one detail: a number, a model, a name or a date.
The copies are what back ends really send for one page: the same text under another
URL with another site name, a snippet window that starts later, a snippet cut short,
a date put in front (as Google does), full-width punctuation, an edited word.

Hosts are under `.example` (RFC 2606): the pages are made up, the templates are not.
Deterministic: running it again writes the same file.

    python scripts/make_dedupe_set.py
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "dedupe" / "templated.jsonl"


@dataclass(frozen=True)
class Template:
    group: str
    url: str
    title: str
    snippet: str
    base: dict[str, Any]
    #: One entry per sibling page: the slots it changes from `base`.
    siblings: list[dict[str, Any]]
    #: (sibling index, kind) of each copy to add.
    copies: list[tuple[int, str]]
    #: The mirror a `mirror` copy is on: a host and a site name for the title.
    mirror: tuple[str, str]
    site: str


TEMPLATES = [
    Template(
        group="zh-phone",
        url="https://item.shop.example/{sku}.html",
        title="{brand} {model} {storage} {color} 移动联通电信5G手机 {site}",
        snippet=(
            "{brand} {model}（{storage}）{color}，商城价 {price} 元。支持 5G 双卡双待，"
            "6.1 英寸超视网膜 XDR 显示屏，正品行货，全国联保，顺丰包邮，"
            "支持七天无理由退货。"
        ),
        base={
            "brand": "Apple",
            "model": "iPhone 15",
            "storage": "128GB",
            "color": "黑色",
            "price": "5999",
            "sku": "100066896338",
        },
        siblings=[
            {},
            {"storage": "256GB", "price": "6999", "sku": "100066896356"},
            {"color": "粉色", "sku": "100066896340"},
            {"model": "iPhone 15 Pro", "price": "7999", "sku": "100066896412"},
            {"model": "iPhone 15 Plus", "price": "6999", "sku": "100066896396"},
            {"storage": "512GB", "price": "8999", "sku": "100066896374"},
        ],
        copies=[(0, "mirror"), (1, "cut"), (3, "full_width")],
        mirror=("m.shop.example", "- 商城手机版"),
        site="- 商城",
    ),
    Template(
        group="zh-flat",
        url="https://bj.house.example/ershoufang/{code}.html",
        title="{estate} {rooms}室{halls}厅 {area}平米 {total}万 {district}二手房{site}",
        snippet=(
            "{district}{estate}，{rooms}室{halls}厅，建筑面积 {area} 平米，总价 {total} 万元，"
            "单价 {unit} 元/平米，中楼层/共 18 层，南北通透，满五唯一，近地铁 {line} 号线。"
        ),
        base={
            "estate": "望京花园",
            "rooms": "2",
            "halls": "1",
            "area": "89.5",
            "total": "560",
            "district": "朝阳",
            "unit": "62570",
            "line": "14",
            "code": "101125432817",
        },
        siblings=[
            {},
            {"area": "92.3", "total": "578", "unit": "62622", "code": "101125432903"},
            {
                "rooms": "3",
                "area": "121.8",
                "total": "760",
                "unit": "62397",
                "code": "101125433011",
            },
            {"estate": "望京西园", "code": "101125433167"},
            {"line": "15", "code": "101125433250"},
            {"total": "545", "unit": "60894", "code": "101125433318"},
        ],
        copies=[(0, "mirror"), (2, "window"), (4, "dated")],
        mirror=("m.house.example", "_房产手机版"),
        site="_房产网",
    ),
    Template(
        group="zh-train",
        url="https://rail.example/train/{train}.html",
        title="{train}次列车时刻表_{start}到{end}高铁票价_经停站{site}",
        snippet=(
            "{train}次列车从{start}南站开往{end}虹桥站，{depart} 发车，{arrive} 到达，"
            "全程 1318 公里，运行时间约 {hours}，二等座票价 {price} 元，一等座 {first} 元，"
            "途经济南西、南京南等站。"
        ),
        base={
            "train": "G1",
            "start": "北京",
            "end": "上海",
            "depart": "07:00",
            "arrive": "11:29",
            "hours": "4 小时 29 分",
            "price": "662",
            "first": "1060",
        },
        siblings=[
            {},
            {"train": "G3", "depart": "08:00", "arrive": "12:32", "hours": "4 小时 32 分"},
            {"train": "G5", "depart": "09:00", "arrive": "13:37", "hours": "4 小时 37 分"},
            {"train": "G7", "depart": "10:00", "arrive": "14:28", "hours": "4 小时 28 分"},
            {"train": "G9", "depart": "11:00", "arrive": "15:30", "hours": "4 小时 30 分"},
        ],
        copies=[(0, "mirror"), (2, "cut")],
        mirror=("m.rail.example", " - 铁路出行"),
        site="_铁路查询",
    ),
    Template(
        group="zh-weather",
        url="https://weather.example/{code}.shtml",
        title="{city}天气预报,{city}7天天气预报,{city}15天天气查询{site}",
        snippet=(
            "{city}天气预报，及时准确发布中央气象台天气信息，便捷查询{city}今日天气，"
            "一周天气预报，15日天气预报，40日天气预报，还提供各区县的生活指数、健康指数、"
            "交通指数、旅游指数，及时发布气象预警信号。"
        ),
        base={"city": "北京", "code": "101010100"},
        siblings=[
            {},
            {"city": "天津", "code": "101030100"},
            {"city": "上海", "code": "101020100"},
            {"city": "广州", "code": "101280101"},
            {"city": "深圳", "code": "101280601"},
            {"city": "杭州", "code": "101210101"},
        ],
        copies=[(0, "mirror"), (3, "full_width")],
        mirror=("m.weather.example", "-天气网手机版"),
        site="-天气网",
    ),
    Template(
        group="zh-job",
        url="https://jobs.example/job_detail/{code}.html",
        title="【{city}】{company}招聘{job}，月薪{low}-{high}K{site}",
        snippet=(
            "{company}招聘{job}，工作地点{city}，经验 3-5 年，学历本科，薪资 {low}-{high}K·14薪。"
            "岗位职责：负责核心业务系统的设计与开发，参与技术方案评审，保障系统稳定性。"
        ),
        base={
            "city": "北京",
            "company": "某科技有限公司",
            "job": "Java开发工程师",
            "low": "25",
            "high": "40",
            "code": "a1b2c3d4e5",
        },
        siblings=[
            {},
            {"job": "Go开发工程师", "code": "a1b2c3d4f6"},
            {"low": "30", "high": "50", "code": "a1b2c3d4g7"},
            {"city": "杭州", "code": "a1b2c3d4h8"},
            {"job": "Python开发工程师", "code": "a1b2c3d4i9"},
        ],
        copies=[(0, "mirror"), (1, "window")],
        mirror=("m.jobs.example", " - 招聘网手机版"),
        site=" - 招聘网",
    ),
    Template(
        group="en-laptop",
        url="https://shop.laptops.example/xps-13/{code}",
        title="Dell XPS 13 Laptop - {cpu}, {ram} RAM, {ssd} SSD {site}",
        snippet=(
            "Shop the XPS 13 laptop with {cpu} processor, {ram} LPDDR5x memory, {ssd} SSD "
            "storage and a 13.4-inch {screen} display. Free shipping and free returns on "
            "every order. Starting at ${price}."
        ),
        base={
            "cpu": "Intel Core Ultra 7 155H",
            "ram": "16GB",
            "ssd": "512GB",
            "screen": "FHD+",
            "price": "1,299.99",
            "code": "cn93401cc",
        },
        siblings=[
            {},
            {"ram": "32GB", "price": "1,499.99", "code": "cn93402cc"},
            {"ssd": "1TB", "price": "1,399.99", "code": "cn93403cc"},
            {"cpu": "Intel Core Ultra 5 125H", "price": "1,099.99", "code": "cn93404cc"},
            {"screen": "OLED 3K", "price": "1,599.99", "code": "cn93405cc"},
            {"price": "1,199.99", "code": "cn93406cc"},
        ],
        copies=[(0, "mirror"), (2, "dated"), (3, "edited")],
        mirror=("deals.laptops.example", "| Laptop Deals"),
        site="| Dell USA",
    ),
    Template(
        group="en-release",
        url="https://runtime.example/en/blog/release/v{version}",
        title="Node.js v{version} ({line}) release notes {site}",
        snippet=(
            "Node.js v{version} is a maintenance release of the {major}.x {line} line. This "
            "release includes dependency updates, documentation fixes and bug fixes across "
            "the fs, http and stream modules; it was released on {date}."
        ),
        base={"version": "20.11.0", "line": "LTS", "major": "20", "date": "January 9, 2024"},
        siblings=[
            {},
            {"version": "20.11.1", "date": "February 14, 2024"},
            {"version": "20.12.0", "date": "March 26, 2024"},
            {"version": "20.12.1", "date": "April 3, 2024"},
            {"version": "20.12.2", "date": "April 10, 2024"},
            {"version": "21.6.0", "major": "21", "line": "Current", "date": "January 14, 2024"},
        ],
        copies=[(0, "mirror"), (1, "cut"), (4, "edited")],
        mirror=("mirror.runtime.example", "- Runtime Mirror"),
        site="- Node.js",
    ),
    Template(
        group="en-weather",
        url="https://forecast.example/weather/tenday/l/{code}",
        title="{city}, {state} 10-Day Weather Forecast {site}",
        snippet=(
            "Be prepared with the most accurate 10-day forecast for {city}, {state} with "
            "highs, lows, chance of precipitation from the weather service. Today's and "
            "tonight's forecast, hourly and radar maps for the days ahead."
        ),
        base={"city": "Springfield", "state": "IL", "code": "USIL1121"},
        siblings=[
            {},
            {"state": "MO", "code": "USMO0828"},
            {"city": "Portland", "state": "OR", "code": "USOR0275"},
            {"city": "Portland", "state": "ME", "code": "USME0328"},
            {"city": "Columbus", "state": "OH", "code": "USOH0212"},
        ],
        copies=[(0, "mirror"), (2, "window")],
        mirror=("m.forecast.example", "| Forecast Mobile"),
        site="| Forecast",
    ),
    Template(
        group="en-rent",
        url="https://rentals.example/listing/{code}",
        title="{beds} Bed, {baths} Bath Apartment for Rent at {number} Maple Ave {site}",
        snippet=(
            "This {beds} bed, {baths} bath apartment at {number} Maple Ave is available now "
            "for ${rent}/month. {sqft} sq ft, in-unit laundry, hardwood floors, central air "
            "and one parking space. Pets allowed with deposit."
        ),
        base={
            "beds": "2",
            "baths": "1",
            "number": "1420",
            "rent": "1,850",
            "sqft": "940",
            "code": "8841027",
        },
        siblings=[
            {},
            {"number": "1422", "code": "8841031"},
            {"rent": "1,950", "code": "8841044"},
            {"beds": "3", "sqft": "1,180", "rent": "2,300", "code": "8841058"},
            {"baths": "2", "code": "8841062"},
            {"sqft": "980", "code": "8841075"},
        ],
        copies=[(0, "mirror"), (3, "dated"), (5, "cut")],
        mirror=("apartments.rentals.example", "- Apartment Finder"),
        site="- Rentals",
    ),
    Template(
        group="en-rate",
        url="https://fx.example/usd-cny/{code}",
        title="USD to CNY exchange rate on {date} {site}",
        snippet=(
            "On {date}, 1 US Dollar was worth {rate} Chinese Yuan Renminbi at the close of "
            "trading. See the historical USD/CNY chart, the daily high and low, and convert "
            "any amount between the two currencies."
        ),
        base={"date": "March 3, 2025", "rate": "7.2817", "code": "2025-03-03"},
        siblings=[
            {},
            {"date": "March 4, 2025", "rate": "7.2755", "code": "2025-03-04"},
            {"date": "March 5, 2025", "rate": "7.2502", "code": "2025-03-05"},
            {"date": "March 6, 2025", "rate": "7.2431", "code": "2025-03-06"},
            {"date": "March 7, 2025", "rate": "7.2389", "code": "2025-03-07"},
        ],
        copies=[(0, "mirror"), (2, "edited")],
        mirror=("rates.fx.example", "| Rates Archive"),
        site="| FX History",
    ),
]


def _mirror(template: Template, page: dict[str, str]) -> dict[str, str]:
    host, site = template.mirror
    url = page["url"].split("/", 3)
    return page | {
        "url": f"https://{host}/{url[3]}",
        "title": page["title"].replace(template.site, site),
    }


def _cut(template: Template, page: dict[str, str]) -> dict[str, str]:
    # The back end's window ends at a clause, ellipsis added, as engines send it.
    snippet = page["snippet"]
    stops = [i for i, ch in enumerate(snippet) if ch in "，,;；" and i > len(snippet) * 0.6]
    end = stops[0] if stops else int(len(snippet) * 0.8)
    return page | {
        "url": page["url"].replace("https://", "https://cache."),
        "snippet": snippet[:end] + " ...",
    }


def _window(template: Template, page: dict[str, str]) -> dict[str, str]:
    snippet = page["snippet"]
    start = next(i for i, ch in enumerate(snippet) if ch in "，,")
    return page | {
        "url": page["url"].replace("https://", "https://amp."),
        "snippet": "... " + snippet[start + 1 :].lstrip(),
    }


def _dated(template: Template, page: dict[str, str]) -> dict[str, str]:
    chinese = template.group.startswith("zh")
    prefix = "2025年3月3日 — " if chinese else "Mar 3, 2025 — "
    return page | {
        "url": page["url"].replace("https://", "https://news."),
        "snippet": prefix + page["snippet"],
    }


def _full_width(template: Template, page: dict[str, str]) -> dict[str, str]:
    table = str.maketrans({",": "，", "(": "（", ")": "）", ":": "：", "-": "－", "_": "＿"})
    return page | {
        "url": page["url"].replace("https://", "https://www2."),
        "title": page["title"].translate(table),
    }


def _edited(template: Template, page: dict[str, str]) -> dict[str, str]:
    snippet = page["snippet"]
    for old, new in (
        ("includes", "contains"),
        ("every order", "all orders"),
        ("See the", "View the"),
        ("is available now", "is available today"),
    ):
        snippet = snippet.replace(old, new)
    return page | {
        "url": page["url"].replace("https://", "https://syndicated."),
        "snippet": snippet,
    }


COPIES: dict[str, Callable[[Template, dict[str, str]], dict[str, str]]] = {
    "mirror": _mirror,
    "cut": _cut,
    "window": _window,
    "dated": _dated,
    "full_width": _full_width,
    "edited": _edited,
}


def rows() -> list[dict[str, str]]:
    out = []
    for template in TEMPLATES:
        pages = []
        for number, change in enumerate(template.siblings):
            slots = template.base | change | {"site": template.site}
            pages.append(
                {
                    "group": template.group,
                    "page": f"{template.group}-{number}",
                    "kind": "page",
                    "url": template.url.format(**slots),
                    "title": template.title.format(**slots),
                    "snippet": template.snippet.format(**slots),
                }
            )
        out.extend(pages)
        for number, kind in template.copies:
            copy = COPIES[kind](template, pages[number])
            out.append(copy | {"kind": kind})
    return out


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(row, ensure_ascii=False) for row in rows()]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pages = sum(1 for row in rows() if row["kind"] == "page")
    print(f"{OUT}: {pages} pages, {len(lines) - pages} copies")


if __name__ == "__main__":
    main()
