"""EmbedLLM's matrix factorization (TextMF) over frozen query embeddings x models, in numpy with
hand-written gradients: logit(q, m) = w . (P_m * (W^T e_q)), trained with binary cross-entropy on the
training records' scores (partial credit as a soft label) by Adam. The epoch is chosen on a
validation slice of train (never test); a test query goes to the model with the highest predicted
probability of answering it (ties to the first by name)."""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.environ["BENCHROUTER_ROUTER_INPUT"])
import routing_io  # noqa: E402

DIM = int(os.environ.get("EMBEDLLM_DIM", "32"))
EPOCHS = int(os.environ.get("EMBEDLLM_EPOCHS", "60"))
LR = float(os.environ.get("EMBEDLLM_LR", "0.01"))
BATCH = 256
VALIDATION = 0.2


def sigmoid(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


class TextMF:
    """P: model embeddings (M x d), W: query projection (D x d), w: classifier (d)."""

    def __init__(self, models, text_dim, rng):
        self.params = {
            "P": rng.normal(0, 0.1, (models, DIM)),
            "W": rng.normal(0, 1 / np.sqrt(text_dim), (text_dim, DIM)),
            "w": rng.normal(0, 0.1, DIM),
        }
        self.moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in self.params.items()}
        self.step = 0

    def logits(self, e, m):
        p = self.params
        return ((e @ p["W"]) * p["P"][m]) @ p["w"]

    def loss(self, e, m, y):
        z = np.clip(self.logits(e, m), -30, 30)
        return float(np.mean(np.logaddexp(0, z) - y * z))

    def train_batch(self, e, m, y):
        p = self.params
        z = e @ p["W"]
        pm = p["P"][m]
        h = z * pm
        dlogit = (sigmoid(h @ p["w"]) - y) / len(y)
        dh = np.outer(dlogit, p["w"])
        grads = {"w": h.T @ dlogit, "W": e.T @ (dh * pm), "P": np.zeros_like(p["P"])}
        np.add.at(grads["P"], m, dh * z)
        self.adam(grads)

    def adam(self, grads, b1=0.9, b2=0.999, eps=1e-8):
        self.step += 1
        for k, g in grads.items():
            m1, m2 = self.moments[k]
            m1 *= b1
            m1 += (1 - b1) * g
            m2 *= b2
            m2 += (1 - b2) * g * g
            self.params[k] -= LR * (m1 / (1 - b1**self.step)) / (np.sqrt(m2 / (1 - b2**self.step)) + eps)

    def snapshot(self):
        return {k: v.copy() for k, v in self.params.items()}


def pairs(rows, scores):
    """(query row, model, score) for every training record of the given query rows."""
    q, m = np.nonzero(~np.isnan(scores[rows]))
    return rows[q], m, scores[rows][q, m]


def fit(vectors, scores, fit_rows, val_rows, rng):
    model = TextMF(scores.shape[1], vectors.shape[1], rng)
    fq, fm, fy = pairs(fit_rows, scores)
    vq, vm, vy = pairs(val_rows, scores)
    best = (np.inf, 0, model.snapshot())
    for epoch in range(1, EPOCHS + 1):
        order = rng.permutation(len(fy))
        for start in range(0, len(order), BATCH):
            b = order[start : start + BATCH]
            model.train_batch(vectors[fq[b]], fm[b], fy[b])
        if len(vy):
            val_loss = model.loss(vectors[vq], vm, vy)
            if val_loss < best[0]:
                best = (val_loss, epoch, model.snapshot())
    if len(vy):
        model.params = best[2]
        return model, best[1], best[0]
    return model, EPOCHS, float("nan")


def main():
    manifest = routing_io.manifest()
    models = manifest["models"]
    rng = np.random.default_rng(manifest["seed"])
    started = time.monotonic()
    ids, prompts, scores, _ = routing_io.train_queries(routing_io.train_records(), models)
    vectors = routing_io.embed(list(zip(ids, prompts)))
    rows = rng.permutation(len(ids))
    n_val = int(len(ids) * VALIDATION)
    model, epoch, val_loss = fit(vectors, scores, rows[n_val:], rows[:n_val], rng)
    train_seconds = time.monotonic() - started

    started = time.monotonic()
    test = routing_io.test_queries()
    test_vectors = routing_io.embed([(q["id"], q["prompt"]) for q in test])
    choices = []
    for i, query in enumerate(test):
        allowed = np.array([m in query.get("models", models) for m in models])
        logits = model.logits(np.repeat(test_vectors[i : i + 1], len(models), axis=0), np.arange(len(models)))
        choices.append({"id": query["id"], "model": models[int(np.argmax(np.where(allowed, logits, -np.inf)))]})
    routing_io.write_choices(choices)
    routing_io.write_result(train_seconds, time.monotonic() - started, epoch=epoch, validation_loss=val_loss, dim=DIM)


if __name__ == "__main__":
    main()
