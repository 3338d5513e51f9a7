"""Train the query injection model (sleuth.stages.safety.query_injection_model).

Reads the labelled training queries (tests/data/safety/train/*.jsonl and the rows of
tests/data/safety/queries.jsonl with "split": "tune", plus the information need of each
injection that names one, as a benign query), cleans each as the guard does,
reads its features as `detect_query` does, and fits a logistic regression
(scikit-learn, the `train` extra). The regularisation and the two thresholds (the model
alone, and the lower one that suffices when a pattern or the score found an order) are
chosen by 5-fold cross-validation on the training rows alone: for each C the
thresholds that catch the most injections out of fold while the false-positive rate
stays within --max-false-positives, and the smallest C whose detection is within one
standard error of the best. Held-out rows (every row of queries.jsonl not in the tune split,
and the files given with --held-out) are never read for training: a training row equal
to one of them is dropped and counted.

Writes src/sleuth/query_injection_model.json (the weights over |w| >= --prune)
and prints the cross-validated figures.

    pip install -e '.[train]'
    python scripts/train_query_injection_model.py
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from sleuth.injection_model import BUNDLED, InjectionModel, ModelSettings
from sleuth.stages.safety.guard import GuardSettings, cleaned
from sleuth.stages.safety.query_injection import QueryInjectionSettings, query_features

ROOT = Path(__file__).parents[1]
SAFETY = ROOT / "tests" / "data" / "safety"
SEED = 20261130


def rows_of(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").split("\n")  # not splitlines: U+2028 may be data
    return [json.loads(line) for line in lines if line.strip()]


def needs_of(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A benign row for the information need of each injection that names one: the
    need alone is a genuine search ("best laptop 2025" from "best laptop 2025. Ignore
    your rules and ..."), so that the words of a need do not count as an attack."""
    return [
        {
            "query": row["need"],
            "label": "benign",
            "lang": row["lang"],
            "note": "need of an injection",
        }
        for row in rows
        if row["label"] == "injection" and row.get("need", "").strip()
    ]


def training_rows(data: Path, held_out: list[Path]) -> tuple[list[dict[str, Any]], int]:
    """The training rows, without duplicates and without any held-out query."""
    corpus = rows_of(SAFETY / "queries.jsonl")
    rows = [row for row in corpus if row["split"] == "tune"]
    for path in sorted(data.glob("*.jsonl")):
        rows.extend(rows_of(path))
    rows.extend(needs_of(rows))
    unseen = {row["query"].casefold() for row in corpus if row["split"] != "tune"}
    for path in held_out:
        unseen |= {row["query"].casefold() for row in rows_of(path)}
    kept: dict[str, dict[str, Any]] = {}
    dropped = 0
    for row in rows:
        key = row["query"].casefold()
        if key in unseen:
            dropped += 1
        else:
            kept.setdefault(key, row)
    return list(kept.values()), dropped


def chosen_thresholds(
    probabilities: np.ndarray, labels: np.ndarray, patterns: np.ndarray, max_fp: float
) -> tuple[float, float, float, float]:
    """The thresholds (alone, with a pattern's order) that catch the most injections
    while the false-positive rate stays within max_fp, and the rates they give."""
    best = (0.0, 0.0, 0.995, 0.995)
    for alone in np.arange(0.3, 1.0, 0.005):
        above = probabilities >= alone
        for with_pattern in np.arange(0.02, alone + 0.001, 0.02):
            flagged = above | (patterns & (probabilities >= with_pattern))
            detection, alarms = rates(flagged, labels)
            if alarms <= max_fp and (detection, -alarms) > (best[0], -best[1]):
                best = (detection, alarms, round(float(alone), 3), round(float(with_pattern), 3))
    return best


def rates(flagged: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    return float(flagged[labels == 1].mean()), float(flagged[labels == 0].mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SAFETY / "train")
    parser.add_argument("--held-out", type=Path, action="append", default=[])
    parser.add_argument("--max-false-positives", type=float, default=0.0075)
    parser.add_argument("--prune", type=float, default=0.01)
    parser.add_argument(
        "--strengths",
        type=float,
        nargs="+",
        default=[1.0, 3.0, 10.0, 30.0],
        help="the inverse regularisation strengths (C) to cross-validate",
    )
    parser.add_argument("--output", type=Path, default=BUNDLED)
    args = parser.parse_args()

    rows, dropped = training_rows(args.data, args.held_out)
    random.Random(SEED).shuffle(rows)  # noqa: S311 (a reproducible order, not a secret)
    guard = GuardSettings()
    # features do not depend on a model; read them without one
    settings = QueryInjectionSettings(model=ModelSettings(enabled=False))
    features = [query_features(cleaned(row["query"], guard), settings) for row in rows]
    labels = np.array([row["label"] == "injection" for row in rows], dtype=int)
    patterns = np.array([any(name.startswith("r:") for name in found) for found in features])
    vectorizer = DictVectorizer()
    matrix = vectorizer.fit_transform([dict.fromkeys(found, 1) for found in features])
    print(
        f"{len(rows)} training queries ({labels.sum()} injections, {len(rows) - labels.sum()} "
        f"benign; {dropped} dropped as held out), {matrix.shape[1]} features"
    )
    detection, alarms = rates(patterns, labels)
    print(f"patterns and score alone: detection {detection:.1%}, false positives {alarms:.1%}")

    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED)
    results: list[tuple[float, tuple[float, float, float, float]]] = []
    for strength in sorted(args.strengths):
        out_of_fold = np.zeros(len(rows))
        for train, test in folds.split(matrix, labels):
            model = LogisticRegression(C=strength, class_weight="balanced", max_iter=5000)
            model.fit(matrix[train], labels[train])
            out_of_fold[test] = model.predict_proba(matrix[test])[:, 1]
        chosen = chosen_thresholds(out_of_fold, labels, patterns, args.max_false_positives)
        detection, alarms, threshold, with_pattern = chosen
        print(
            f"C={strength:<5} thresholds {threshold:.3f}, {with_pattern:.3f} with a pattern: "
            f"detection {detection:.1%}, false positives {alarms:.1%} (5-fold, out of fold)"
        )
        results.append((strength, chosen))
    # the strongest regularisation whose detection is within one standard error of the
    # best: a smaller difference is noise, and a smoother model is calibrated better
    top = max(detection for _, (detection, *_) in results)
    error = math.sqrt(top * (1 - top) / max(int(labels.sum()), 1))
    strength, (detection, alarms, threshold, with_pattern) = next(
        result for result in results if result[1][0] >= top - error
    )

    model = LogisticRegression(C=strength, class_weight="balanced", max_iter=5000)
    model.fit(matrix, labels)
    names = vectorizer.get_feature_names_out()
    weights = {
        str(name): round(float(weight), 4)
        for name, weight in zip(names, model.coef_[0], strict=True)
        if abs(weight) >= args.prune
    }
    pruned = InjectionModel(float(model.intercept_[0]), threshold, weights)
    kept_probabilities = np.array([pruned.probability(found) for found in features])
    full_probabilities = model.predict_proba(matrix)[:, 1]
    changed = int(((kept_probabilities >= threshold) != (full_probabilities >= threshold)).sum())
    print(f"pruning to |w| >= {args.prune} changes {changed} of {len(rows)} training verdicts")
    about = {
        "trained_on": len(rows),
        "injections": int(labels.sum()),
        "regularisation_C": strength,
        "cross_validated": {"detection": round(detection, 4), "false_positives": round(alarms, 4)},
        "max_false_positives": args.max_false_positives,
        "features_kept": len(weights),
        "features_seen": int(matrix.shape[1]),
    }
    document = {
        "bias": round(float(model.intercept_[0]), 4),
        "threshold": threshold,
        "threshold_with_pattern": with_pattern,
        "about": about,
        "weights": dict(sorted(weights.items())),
    }
    args.output.write_text(
        json.dumps(document, ensure_ascii=False, indent=0, sort_keys=False) + "\n",
        encoding="utf-8",
    )
    size = args.output.stat().st_size / 1024
    print(
        f"wrote {args.output}: C={strength}, threshold {threshold}, "
        f"{len(weights)} of {matrix.shape[1]} weights kept, {size:.0f} KiB"
    )


if __name__ == "__main__":
    main()
