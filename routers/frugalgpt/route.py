"""FrugalGPT's LLM cascade in its frozen-embedding form: per model, a scorer (scikit-learn logistic
regression on the query embedding) predicts whether the model answers the query; a cascade asks the
models of a chain in order and stops at the first whose score reaches its threshold (the last always
answers). Chains of up to three of at most six candidate models (the cheapest and the most accurate) and thresholds
from a grid are fitted on a validation slice of train, per budget (mean cascade cost per query): the
chain with the best validation accuracy within the budget. The choice without a setting is the best
chain under the largest budget; each budget is a cost setting (USD per query)."""

import itertools
import os
import sys
import time

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, os.environ["BENCHROUTER_ROUTER_INPUT"])
import routing_io  # noqa: E402

MAX_CHAIN = 3
MAX_CANDIDATES = 6
THRESHOLDS = [i / 10 for i in range(1, 10)]
BUDGETS = 8
VALIDATION = 0.3


def scorer(x, y):
    if len(y) == 0 or y.min() == y.max():
        constant = float(y[0]) if len(y) else 0.0
        return lambda e: np.full(len(e), constant)
    fitted = LogisticRegression(max_iter=2000).fit(x, y)
    return lambda e: fitted.predict_proba(e)[:, 1]


def candidates_of(acc, cost):
    """The models a chain is made of: all of them up to MAX_CANDIDATES, else the cheapest and the most accurate others."""
    everyone = list(range(len(acc)))
    if len(everyone) > MAX_CANDIDATES:
        cheapest = min(everyone, key=lambda m: (cost[m], m))
        others = sorted((m for m in everyone if m != cheapest), key=lambda m: (-acc[m], m))
        everyone = [cheapest] + others[: MAX_CANDIDATES - 1]
    return sorted(everyone, key=lambda m: (cost[m], m))


def cascade(chain, thresholds, probs):
    """Per query, the position in the chain that answers: the first whose probability reaches its threshold, else the last."""
    answered = np.full(probs.shape[0], len(chain) - 1)
    for position in reversed(range(len(chain) - 1)):
        answered = np.where(probs[:, chain[position]] >= thresholds[position], position, answered)
    return answered


def evaluate(chain, thresholds, probs, scores, costs):
    """Validation accuracy and mean cascade cost (every model asked is paid, as in FrugalGPT)."""
    at = cascade(chain, thresholds, probs)
    picked = np.array(chain)[at]
    acc = float(np.mean(scores[np.arange(len(at)), picked]))
    paid = np.cumsum(costs[:, chain], axis=1)[np.arange(len(at)), at]
    return acc, float(np.mean(paid))


def fit_strategies(candidates, probs, scores, costs):
    """Every (chain, thresholds) with its validation accuracy and cost."""
    out = []
    for length in range(1, MAX_CHAIN + 1):
        for chain in itertools.permutations(candidates, length):
            for thresholds in itertools.product(THRESHOLDS, repeat=length - 1):
                acc, cost = evaluate(list(chain), list(thresholds), probs, scores, costs)
                out.append((acc, cost, list(chain), list(thresholds)))
    return out


def best_within(strategies, budget):
    # The most accurate within budget; among equals the cheapest, then the shorter chain, then first found.
    within = [s for s in strategies if s[1] <= budget + 1e-12]
    return max(within, key=lambda s: (s[0], -s[1], -len(s[2]))) if within else min(strategies, key=lambda s: s[1])


def main():
    manifest = routing_io.manifest()
    models = manifest["models"]
    rng = np.random.default_rng(manifest["seed"])
    started = time.monotonic()
    ids, prompts, scores, costs = routing_io.train_queries(routing_io.train_records(), models)
    vectors = routing_io.embed(list(zip(ids, prompts)))
    order = rng.permutation(len(ids))
    n_val = max(1, int(len(ids) * VALIDATION))
    val, fit = order[:n_val], order[n_val:]

    # Scorers on the fitting part; chains and thresholds on the validation part, among queries every model answered.
    scorers = []
    for m in range(len(models)):
        rows = fit[~np.isnan(scores[fit, m])]
        scorers.append(scorer(vectors[rows], (scores[rows, m] >= 0.5).astype(int)))
    complete = val[~np.isnan(scores[val]).any(axis=1)]
    probs = np.column_stack([s(vectors[complete]) for s in scorers])
    acc, cost = np.nanmean(scores[fit], axis=0), np.nanmean(costs[fit], axis=0)
    candidates = candidates_of(np.nan_to_num(acc), np.nan_to_num(cost))
    strategies = fit_strategies(candidates, probs, scores[complete], costs[complete])
    lo, hi = min(s[1] for s in strategies), max(s[1] for s in strategies)
    budgets = sorted({round(float(b), 12) for b in np.linspace(lo, hi, BUDGETS)})
    chosen = {b: best_within(strategies, b) for b in budgets}
    train_seconds = time.monotonic() - started

    started = time.monotonic()
    test = routing_io.test_queries()
    test_probs = np.column_stack([s(routing_io.embed([(q["id"], q["prompt"]) for q in test])) for s in scorers]) if test else np.zeros((0, len(models)))
    choices = []
    for i, query in enumerate(test):
        allowed = [models.index(m) for m in query.get("models", models)]

        def route(strategy):
            _, _, chain, thresholds = strategy
            # A model without a record for the query is skipped in the cascade.
            kept = [(m, t) for m, t in zip(chain, thresholds + [0.0]) if m in allowed] or [(allowed[0], 0.0)]
            chain_i, thresholds_i = [m for m, _ in kept], [t for _, t in kept][:-1]
            return models[chain_i[cascade(chain_i, thresholds_i, test_probs[i : i + 1])[0]]]

        choices.append({"id": query["id"], "model": route(chosen[budgets[-1]])})
        choices.extend({"id": query["id"], "model": route(chosen[b]), "setting": b} for b in budgets)
    routing_io.write_choices(choices)
    top = chosen[budgets[-1]]
    routing_io.write_result(
        train_seconds,
        time.monotonic() - started,
        candidates=[models[m] for m in candidates],
        chain=[models[m] for m in top[2]],
        thresholds=top[3],
        validation_accuracy=top[0],
        budgets={str(b): {"chain": [models[m] for m in s[2]], "thresholds": s[3], "validation_accuracy": s[0], "validation_cost": s[1]} for b, s in chosen.items()},
    )


if __name__ == "__main__":
    main()
