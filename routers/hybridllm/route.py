"""HybridLLM's router in its frozen-embedding form, for a pair of models (of more, the most accurate on
train and the cheapest of the rest): a logistic regression (scikit-learn) on the query embedding predicts whether the small (cheaper) model's score is within t
of the large one's, P(s_small >= s_large - t). A query goes to the small model when that probability
is at least a threshold. The regularization C and the relaxation t (HybridLLM's r-trans data
transformation) are chosen on a validation slice of train; the choice without a setting uses
threshold 0.5, and each threshold in 0, 0.1, ..., 1 is a cost setting."""

import os
import sys
import time

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, os.environ["BENCHROUTER_ROUTER_INPUT"])
import routing_io  # noqa: E402

THRESHOLDS = [i / 10 for i in range(11)]
RELAXATIONS = [0.0, 0.1, 0.2]
CS = [0.1, 1.0, 10.0]
VALIDATION = 0.2


def classifier(C, x, y):
    """A logistic regression; where train holds one class only, that class's constant probability."""
    if y.min() == y.max():
        return lambda e: np.full(len(e), float(y[0]))
    fitted = LogisticRegression(C=C, max_iter=2000).fit(x, y)
    return lambda e: fitted.predict_proba(e)[:, 1]


def main():
    manifest = routing_io.manifest()
    models = manifest["models"]
    rng = np.random.default_rng(manifest["seed"])
    started = time.monotonic()
    ids, prompts, scores, costs = routing_io.train_queries(routing_io.train_records(), models)
    large, small = routing_io.strong_and_weak(np.nanmean(scores, axis=0), np.nanmean(costs, axis=0))
    scores, costs = scores[:, [small, large]], costs[:, [small, large]]
    both = ~np.isnan(scores).any(axis=1)
    rows = np.flatnonzero(both)
    vectors = routing_io.embed([(ids[r], prompts[r]) for r in rows])
    gap = scores[rows, 0] - scores[rows, 1]

    order = rng.permutation(len(rows))
    n_val = int(len(rows) * VALIDATION)
    val, fit = order[:n_val], order[n_val:]
    best = None
    for t in RELAXATIONS:
        y = (gap >= -t).astype(int)
        for C in CS:
            p = classifier(C, vectors[fit], y[fit])(vectors[val]) if n_val else np.zeros(0)
            # The validation slice's quality when routing at 0.5: the small model's score where routed there.
            routed_small = p >= 0.5
            quality = float(np.mean(np.where(routed_small, scores[rows[val], 0], scores[rows[val], 1]))) if n_val else 0.0
            if best is None or quality > best[0]:
                best = (quality, t, C)
    _, relaxation, C = best
    predict = classifier(C, vectors, (gap >= -relaxation).astype(int))
    train_seconds = time.monotonic() - started

    started = time.monotonic()
    test = routing_io.test_queries()
    p_small = predict(routing_io.embed([(q["id"], q["prompt"]) for q in test]))
    choices = []
    for query, p in zip(test, p_small):
        allowed = query.get("models", models)

        def route(threshold):
            pick = models[small] if p >= threshold else models[large]
            return pick if pick in allowed else allowed[0]

        choices.append({"id": query["id"], "model": route(0.5)})
        choices.extend({"id": query["id"], "model": route(threshold), "setting": threshold} for threshold in THRESHOLDS)
    routing_io.write_choices(choices)
    routing_io.write_result(
        train_seconds, time.monotonic() - started, small=models[small], large=models[large], relaxation=relaxation, C=C, validation_quality=best[0]
    )


if __name__ == "__main__":
    main()
