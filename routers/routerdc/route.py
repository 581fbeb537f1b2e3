"""RouterDC in its frozen-encoder form: a projection head (torch) over frozen query embeddings and a
learnable embedding per model, trained with RouterDC's two contrastive losses. The sample-LLM loss
pulls a query toward its top-K+ models by score and away from its bottom K- ones; the sample-sample
loss pulls a query toward another of its k-means cluster (scikit-learn, on train) and away from
queries of other clusters. A query goes to the model with the highest cosine similarity. The epoch is
chosen on a validation slice of train."""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.environ["BENCHROUTER_ROUTER_INPUT"])
import routing_io  # noqa: E402

import torch  # noqa: E402

# One thread: the job has one CPU, and torch's default pool of one thread per core oversubscribes it
# (routerdc trained in 699 s with the default on a loaded 2-core host).
torch.set_num_threads(1)
import torch.nn.functional as F  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from torch import nn  # noqa: E402

HIDDEN, OUT = 128, 64
TAU = 0.2
TOP_K, LAST_K = 1, 1
CLUSTERS = 5
SAMPLE_WEIGHT = 1.0
EPOCHS = int(os.environ.get("ROUTERDC_EPOCHS", "60"))
BATCH, LR = 64, 1e-3
VALIDATION = 0.2


class Head(nn.Module):
    def __init__(self, text_dim, models):
        super().__init__()
        self.encode = nn.Sequential(nn.Linear(text_dim, HIDDEN), nn.GELU(), nn.Linear(HIDDEN, OUT))
        self.models = nn.Parameter(torch.randn(models, OUT) * 0.1)

    def forward(self, x):
        z = F.normalize(self.encode(x), dim=-1)
        return z, z @ F.normalize(self.models, dim=-1).T / TAU


def sample_llm_loss(logits, scores, known):
    """Per query, -log of each top-K+ model's probability against itself and the bottom-K- models (RouterDC eq. 4)."""
    loss = 0.0
    masked = torch.where(known, scores, torch.tensor(float("nan")))
    high = torch.nan_to_num(masked, nan=-np.inf).topk(TOP_K, dim=1).indices
    low = torch.nan_to_num(masked, nan=np.inf).topk(LAST_K, dim=1, largest=False).indices
    negatives = logits.gather(1, low)
    for k in range(TOP_K):
        positive = logits.gather(1, high[:, k : k + 1])
        loss = loss - (positive.squeeze(1) - torch.logsumexp(torch.cat([positive, negatives], 1), dim=1))
    return loss.mean()


def sample_sample_loss(z, cluster):
    """InfoNCE within a batch: each query against another of its cluster (RouterDC eq. 5), over the queries that have one."""
    itself = torch.eye(len(cluster), dtype=torch.bool)
    same = (cluster[:, None] == cluster[None, :]) & ~itself
    has = same.any(dim=1)
    if not has.any():
        return torch.tensor(0.0)
    sims = (z[has] @ z.T) / TAU
    same, itself = same[has], itself[has]
    positive = torch.where(same, sims, torch.tensor(-np.inf)).max(dim=1).values
    others = torch.where(~same & ~itself, sims, torch.tensor(-np.inf))
    return (torch.logsumexp(torch.cat([positive[:, None], others], 1), dim=1) - positive).mean()


def main():
    manifest = routing_io.manifest()
    models = manifest["models"]
    seed = manifest["seed"]
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    started = time.monotonic()
    ids, prompts, scores, _ = routing_io.train_queries(routing_io.train_records(), models)
    vectors = routing_io.embed(list(zip(ids, prompts)))
    order = rng.permutation(len(ids))
    n_val = int(len(ids) * VALIDATION)
    val, fit = order[:n_val], order[n_val:]
    clusters = KMeans(n_clusters=min(CLUSTERS, len(fit)), n_init=10, random_state=seed).fit(vectors[fit]).labels_

    x = torch.tensor(vectors, dtype=torch.float32)
    s = torch.tensor(np.nan_to_num(scores), dtype=torch.float32)
    known = torch.tensor(~np.isnan(scores))
    head = Head(x.shape[1], len(models))
    optimizer = torch.optim.AdamW(head.parameters(), lr=LR)
    best_state, best_epoch, best_val = None, 0, -np.inf
    for epoch in range(1, EPOCHS + 1):
        head.train()
        shuffled = rng.permutation(len(fit))
        for start in range(0, len(shuffled), BATCH):
            batch = fit[shuffled[start : start + BATCH]]
            z, logits = head(x[batch])
            loss = sample_llm_loss(logits, s[batch], known[batch]) + SAMPLE_WEIGHT * sample_sample_loss(z, torch.tensor(clusters[shuffled[start : start + BATCH]]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if n_val:
            with torch.no_grad():
                head.eval()
                logits = head(x[val])[1].masked_fill(~known[val], -np.inf)
                picked = logits.argmax(dim=1).numpy()
                score = float(np.mean(np.nan_to_num(scores[val, picked])))
            if score > best_val:
                best_val, best_epoch = score, epoch
                best_state = {k: v.clone() for k, v in head.state_dict().items()}
    if best_state is not None:
        head.load_state_dict(best_state)
    train_seconds = time.monotonic() - started

    started = time.monotonic()
    test = routing_io.test_queries()
    choices = []
    if test:
        with torch.no_grad():
            head.eval()
            logits = head(torch.tensor(routing_io.embed([(q["id"], q["prompt"]) for q in test]), dtype=torch.float32))[1].numpy()
        for i, query in enumerate(test):
            allowed = np.array([m in query.get("models", models) for m in models])
            choices.append({"id": query["id"], "model": models[int(np.argmax(np.where(allowed, logits[i], -np.inf)))]})
    routing_io.write_choices(choices)
    routing_io.write_result(train_seconds, time.monotonic() - started, epoch=best_epoch, validation_score=best_val)


if __name__ == "__main__":
    main()
