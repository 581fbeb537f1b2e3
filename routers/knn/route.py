"""kNN router: per test query, the k most similar training queries (cosine of L2-normalized
embeddings, ties to the earlier training query); the model with the best mean score over them (ties
to the first by name), and per α in 0, 0.1, ..., 1 the best α·ã + (1 − α)·(1 − c/max c) over the
neighbours' mean scores ã (min–max normalized) and costs c. Reads and writes through routing_io."""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.environ["BENCHROUTER_ROUTER_INPUT"])
import routing_io  # noqa: E402

K = int(os.environ.get("KNN_K", "10"))
ALPHAS = [i / 10 for i in range(11)]


def balance(score, cost, alpha):
    spread = score.max() - score.min()
    acc_term = (score - score.min()) / spread if spread > 0 else np.ones_like(score)
    cost_term = 1 - cost / cost.max() if cost.max() > 0 else np.ones_like(cost)
    return alpha * acc_term + (1 - alpha) * cost_term


def pick(values, allowed):
    values = np.where(allowed, values, -np.inf)
    return int(np.argmax(values))  # the first maximum: models are sorted by name


def main():
    manifest = routing_io.manifest()
    models = manifest["models"]
    started = time.monotonic()
    ids, prompts, scores, costs = routing_io.train_queries(routing_io.train_records(), models)
    train_vectors = routing_io.embed(list(zip(ids, prompts)))
    train_seconds = time.monotonic() - started

    started = time.monotonic()
    test = routing_io.test_queries()
    test_vectors = routing_io.embed([(q["id"], q["prompt"]) for q in test])
    k = min(K, len(ids))
    choices = []
    for i, query in enumerate(test):
        sims = train_vectors @ test_vectors[i]
        # Stable sort on −similarity: equal similarities keep the earlier training query first.
        nearest = np.argsort(-sims, kind="stable")[:k]
        with np.errstate(invalid="ignore"):
            mean_score = np.nanmean(scores[nearest], axis=0)
            mean_cost = np.nanmean(costs[nearest], axis=0)
        answered = ~np.isnan(mean_score)
        allowed = answered & np.array([m in query.get("models", models) for m in models])
        mean_score = np.nan_to_num(mean_score)
        mean_cost = np.nan_to_num(mean_cost)
        choices.append({"id": query["id"], "model": models[pick(mean_score, allowed)]})
        for alpha in ALPHAS:
            choices.append({"id": query["id"], "model": models[pick(balance(mean_score, mean_cost, alpha), allowed)], "setting": alpha})
    routing_io.write_choices(choices)
    routing_io.write_result(train_seconds, time.monotonic() - started, k=k)


if __name__ == "__main__":
    main()
