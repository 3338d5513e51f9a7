"""Default tables of claim extraction: units, currencies, multipliers and word lists.

Data only, no logic: `sleuth.stages.facts.claims` reads them, and each is the default of a
`ClaimSettings` field of the same name in lower case (`facts:` in sleuth.yaml), so a
deployment changes them in its configuration, never here. The exception is
`FALLBACK_TRIM`, the particles trimmed from stand-in subject words, which is fixed.
They are typed read-only (`Mapping`, `tuple`); a settings object takes its own copy.

Units are matched case-insensitively unless listed in `CASE_SENSITIVE_UNITS`; Latin
units must end at a word boundary. Each maps a unit as written to its canonical unit.

>>> UNITS["英寸"], CURRENCY_PREFIXES["US$"], MULTIPLIERS["万"]
('inch', 'USD', 10000.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = [
    "CASE_SENSITIVE_UNITS",
    "CHANGE_WORDS",
    "CURRENCY_MULTIPLIERS",
    "CURRENCY_PREFIXES",
    "FALLBACK_STOPWORDS",
    "FALLBACK_TRIM",
    "MULTIPLIERS",
    "RELATIVE_TIME_WORDS",
    "UNITS",
    "UNIT_FALSE_FRIENDS",
    "UNIT_SCALE",
    "VARIANT_WORDS",
]

# fmt: off

CURRENCY_PREFIXES: Final[Mapping[str, str]] = {
    "US$": "USD", "USD": "USD", "$": "USD", "€": "EUR", "EUR": "EUR", "£": "GBP",
    "GBP": "GBP", "¥": "CNY", "￥": "CNY", "RMB": "CNY", "CNY": "CNY", "人民币": "CNY",
    "JP¥": "JPY", "JPY": "JPY", "HK$": "HKD", "HKD": "HKD", "NT$": "TWD", "A$": "AUD",
    "AU$": "AUD", "C$": "CAD", "CA$": "CAD", "S$": "SGD", "₩": "KRW", "KRW": "KRW",
    "₹": "INR", "INR": "INR", "Rs.": "INR",
}
UNITS: Final[Mapping[str, str]] = {
    # currencies
    "元": "CNY", "块钱": "CNY", "人民币": "CNY", "yuan": "CNY", "rmb": "CNY", "cny": "CNY",
    "美元": "USD", "美金": "USD", "usd": "USD", "dollars": "USD", "dollar": "USD",
    "欧元": "EUR", "eur": "EUR", "euros": "EUR", "euro": "EUR", "英镑": "GBP", "gbp": "GBP",
    "日元": "JPY", "日圆": "JPY", "円": "JPY", "yen": "JPY", "jpy": "JPY",
    "港元": "HKD", "港币": "HKD", "hkd": "HKD", "韩元": "KRW", "krw": "KRW",
    "新台币": "TWD", "台币": "TWD", "卢比": "INR", "rupees": "INR", "inr": "INR",
    # shares
    "%": "%", "％": "%", "percent": "%", "per cent": "%",
    "个百分点": "pp", "百分点": "pp", "percentage points": "pp", "percentage point": "pp",
    # length, distance, speed
    "英寸": "inch", "inches": "inch", "inch": "inch", "″": "inch",
    "毫米": "mm", "mm": "mm", "厘米": "cm", "cm": "cm", "米": "m", "meters": "m",
    "metres": "m", "公里": "km", "千米": "km", "km": "km", "kilometers": "km",
    "kilometres": "km", "miles": "mi", "纳米": "nm", "nm": "nm",
    "km/h": "km/h", "公里/小时": "km/h", "mph": "mph",
    # energy, power, frequency
    "mah": "mAh", "毫安时": "mAh", "毫安": "mAh", "wh": "Wh", "kwh": "kWh", "千瓦时": "kWh",
    "度电": "kWh", "瓦": "W", "watts": "W", "千瓦": "kW", "kilowatts": "kW",
    "hz": "Hz", "赫兹": "Hz", "khz": "kHz", "mhz": "MHz", "ghz": "GHz",
    # data
    "kb": "KB", "mb": "MB", "gb": "GB", "tb": "TB", "pb": "PB",
    "kbps": "Kbps", "mbps": "Mbps", "gbps": "Gbps",
    # mass, temperature
    "公斤": "kg", "千克": "kg", "kg": "kg", "克": "g", "grams": "g", "lbs": "lb", "lb": "lb",
    "°c": "°C", "℃": "°C", "摄氏度": "°C", "°f": "°F", "℉": "°F",
    # time
    "毫秒": "ms", "秒": "s", "sec": "s", "secs": "s", "seconds": "s",
    "分钟": "min", "min": "min", "mins": "min", "minutes": "min",
    "小时": "h", "hours": "h", "hour": "h", "hrs": "h", "hr": "h",
    "天": "day", "days": "day", "周": "week", "weeks": "week", "个月": "month", "months": "month",
    # displays, cameras
    "尼特": "nit", "nits": "nit", "ppi": "ppi", "fps": "fps", "帧": "fps",
    "mp": "MP", "megapixels": "MP", "像素": "MP", "百万像素": "MP",
}
CASE_SENSITIVE_UNITS: Final[Mapping[str, str]] = {
    "W": "W", "kW": "kW", "g": "g", "h": "h", "ms": "ms",
}
UNIT_SCALE: Final[Mapping[str, float]] = {"像素": 1e-6}
UNIT_FALSE_FRIENDS: Final[Mapping[str, str]] = {
    "元": "旦素宵年器宇件老首", "米": "粉饭线兰", "克": "拉隆力", "天": "气下津然使空才猫堂涯",
    "周": "年岁一二三四五六日末边", "秒": "杀懂", "瓦": "解斯片", "帧": "率",
}
MULTIPLIERS: Final[Mapping[str, float]] = {
    "万亿": 1e12, "千万": 1e7, "百万": 1e6, "万": 1e4, "亿": 1e8, "千": 1e3,
    "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
}
CURRENCY_MULTIPLIERS: Final[Mapping[str, float]] = {
    "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "mn": 1e6, "bn": 1e9, "b": 1e9, "B": 1e9, "tn": 1e12,
}
VARIANT_WORDS: Final[tuple[str, ...]] = (
    "pro", "max", "plus", "ultra", "mini", "lite", "se", "air", "fe", "neo", "fold", "flip",
    "pro+", "pro max", "青春版", "至尊版", "典藏版", "高配版", "低配版",
)
CHANGE_WORDS: Final[tuple[str, ...]] = (
    "降价", "直降", "降了", "优惠", "便宜", "立减", "减价", "补贴", "涨价", "上涨", "贵了",
    "下调", "上调", "off", "discount", "cheaper", "cut", "save", "saves", "rebate",
    "more expensive", "increase", "decrease",
)
RELATIVE_TIME_WORDS: Final[tuple[str, ...]] = (
    "前", "以前", "之前", "后", "以后", "之后", "ago", "later", "earlier", "from now",
)
FALLBACK_STOPWORDS: Final[tuple[str, ...]] = (
    "the", "a", "an", "is", "are", "was", "were", "be", "at", "for", "of", "to", "and", "or",
    "in", "on", "with", "from", "by", "about", "around", "approximately", "up", "only",
    "just", "over", "under", "than", "more", "less", "its", "it", "this", "that", "has",
    "have", "had", "costs", "cost", "starts", "starting", "priced", "sells", "sold", "now",
    "new", "offers", "gets", "get", "comes", "reaches", "hits", "rose", "fell", "nearly",
    "almost", "roughly", "some", "per", "each", "as", "still", "remains", "also",
)
FALLBACK_TRIM: Final[str] = "为是约达的了在至到仅只需要共近超过高低最起有均每则"
# fmt: on
