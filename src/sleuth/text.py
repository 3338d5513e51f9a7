"""Small language helpers shared by the stages: language guess, tokens, sentence ends.

Pure functions, Chinese and English alike. Word segmentation for Chinese (jieba) is
loaded lazily by the callers that need words; here Chinese is tokenised into
character bigrams, which is fast and language-agnostic enough for ranking.

>>> tokens("Python 3.12 发布说明")
('python', '3.12', '发布', '布说', '说明')
>>> split_sentences("第一句。第二句！Third one. Fourth?")
['第一句。', '第二句！', 'Third one.', 'Fourth?']
"""

from __future__ import annotations

import re
from functools import lru_cache

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
# Either a run of Chinese characters or a Latin/digit word (3.12, don't, covid-19);
# a word never swallows an adjacent Chinese run ("Python发布" is two tokens).
_TOKEN = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+(?:[.'’-][^\W_{_CJK}]+)*)", re.UNICODE)
# A sentence ends at Chinese 。！？ (no space needed) or at . ! ? followed by space or
# the end; "3.5" and "e.g." inside a word do not end a sentence.
_SENTENCE_END = re.compile(r"(?<=[。！？])|(?<=[.!?])(?=\s|$)|(?<=[.!?][\"”’)\]])(?=\s|$)")


def is_cjk(char: str) -> bool:
    return bool(_CJK_RUN.fullmatch(char))


def language_of(text: str) -> str:
    """'zh' when Chinese characters make up a fair share of the letters, else 'en'."""
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    letters = sum(1 for ch in text if ch.isalpha())
    return "zh" if letters and cjk / letters >= 0.3 else "en"


@lru_cache(maxsize=8192)
def tokens(text: str) -> tuple[str, ...]:
    """Lower-cased words for Latin script, overlapping bigrams for Chinese runs.

    Cached: dedupe and rank tokenise the same titles and snippets in one search.
    """
    out: list[str] = []
    for cjk, word in _TOKEN.findall(text.lower()):
        if not cjk:
            out.append(word)
        elif len(cjk) == 1:
            out.append(cjk)
        else:
            out.extend([cjk[i : i + 2] for i in range(len(cjk) - 1)])
    return tuple(out)


def split_sentences(text: str) -> list[str]:
    """Sentences with their closing punctuation, surrounding space trimmed."""
    parts = _SENTENCE_END.split(text)
    return [part.strip() for part in parts if part and part.strip()]
