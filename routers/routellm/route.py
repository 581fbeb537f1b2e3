"""RouteLLM's matrix-factorization router, run from the routellm 0.2.0 package as it ships: training
with its MFModel_Train, PairwiseDataset and train_loops, routing with its MFModel.pred_win_rate, which
embeds each test prompt itself through the OpenAI client at OPENAI_BASE_URL (routing_io's local endpoint).
Only the glue is ours: the pairwise battles from the training records, the model-name mapping onto
routellm's fixed MODEL_IDS, and the thresholds."""

import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.environ["BENCHROUTER_ROUTER_INPUT"])
import routing_io  # noqa: E402

# routellm builds an OpenAI client when imported, from these. Its MFModel embeds each test prompt itself, at
# routing_io's local endpoint: the analysis's cached vectors, and the gateway for any text they lack.
os.environ["OPENAI_BASE_URL"] = routing_io.serve_embeddings()
os.environ["OPENAI_API_KEY"] = os.environ.get("BENCHROUTER_API_KEY") or "unused"

import torch  # noqa: E402

# One thread: the job has one CPU, and torch's default pool of one thread per core oversubscribes it
# (routerdc trained in 699 s with the default on a loaded 2-core host).
torch.set_num_threads(1)
from routellm.routers.matrix_factorization.model import MODEL_IDS, MFModel  # noqa: E402
from routellm.routers.matrix_factorization.train_matrix_factorization import (  # noqa: E402
    MFModel_Train,
    PairwiseDataset,
    evaluator,
    train_loops,
)

# routellm's ids are a fixed list of arena models; the pair is trained under the paper's own pair's names.
STRONG_ID, WEAK_ID = "gpt-4-1106-preview", "mixtral-8x7b-instruct-v0.1"
# Upstream's example settings (train_matrix_factorization.py __main__), fewer epochs for a CPU.
DIM, BATCH, ALPHA, LR, WEIGHT_DECAY = 128, 64, 0.1, 3e-4, 1e-5
EPOCHS = int(os.environ.get("ROUTELLM_EPOCHS", "30"))
VALIDATION = 0.1
THRESHOLDS = [i / 10 for i in range(11)]


def main():
    manifest = routing_io.manifest()
    models = manifest["models"]
    started = time.monotonic()
    ids, prompts, scores, costs = routing_io.train_queries(routing_io.train_records(), models)
    strong, weak = routing_io.strong_and_weak(np.nanmean(scores, axis=0), np.nanmean(costs, axis=0))
    name = {strong: STRONG_ID, weak: WEAK_ID}
    vectors = routing_io.embed(list(zip(ids, prompts)))

    # A battle per training query the two scored differently; ties are dropped, as upstream filters them.
    battles = []
    for q in range(len(ids)):
        a, b = scores[q, strong], scores[q, weak]
        if np.isnan(a) or np.isnan(b) or a == b:
            continue
        battles.append({"model_a": name[strong], "model_b": name[weak], "idx": q, "winner": "model_a" if a > b else "model_b"})
    if not battles:
        raise SystemExit(f"routellm: {models[strong]} and {models[weak]} score the same on every training query: no battle to learn from")
    rng = np.random.default_rng(manifest["seed"])
    order = rng.permutation(len(battles))
    n_val = int(len(battles) * VALIDATION)
    # train_loops evaluates on its second loader every epoch (it reports, it selects nothing): a slice of train.
    val = [battles[i] for i in order[:n_val]] or [battles[i] for i in order[:1]]
    fit = [battles[i] for i in order[n_val:]]
    torch.manual_seed(manifest["seed"])
    with tempfile.TemporaryDirectory() as scratch:
        npy = os.path.join(scratch, "embeddings.npy")
        np.save(npy, vectors.astype(np.float32))
        net = MFModel_Train(dim=DIM, num_models=len(MODEL_IDS), num_prompts=len(ids), text_dim=vectors.shape[1], use_proj=True, npy_path=npy)
    train_loops(
        net,
        PairwiseDataset(fit).get_dataloaders(batch_size=BATCH, shuffle=True),
        PairwiseDataset(val).get_dataloaders(1024, shuffle=False),
        lr=LR,
        weight_decay=WEIGHT_DECAY,
        alpha=ALPHA,
        num_epochs=EPOCHS,
        device="cpu",
        evaluator=evaluator,
    )
    # As upstream's checkpoints: the trained state without Q (test prompts are embedded when routed).
    router = MFModel(dim=DIM, num_models=len(MODEL_IDS), text_dim=vectors.shape[1], num_classes=1, use_proj=True)
    # MFModel wraps its two linear layers in Sequential (text_proj.0, classifier.0); MFModel_Train does not.
    renamed = {"P.weight": "P.weight", "text_proj.weight": "text_proj.0.weight", "classifier.weight": "classifier.0.weight"}
    router.load_state_dict({renamed[k]: v for k, v in net.state_dict().items() if k != "Q.weight"}, strict=True)
    router.embedding_model = os.environ["BENCHROUTER_MODEL_NAME"]
    router.eval()
    train_seconds = time.monotonic() - started

    started = time.monotonic()
    choices = []
    for query in routing_io.test_queries():
        allowed = query.get("models", models)
        win_rate = router.pred_win_rate(MODEL_IDS[STRONG_ID], MODEL_IDS[WEAK_ID], query["prompt"] or " ")

        def route(threshold):
            # routellm's rule: the strong model when its win rate is at least the threshold.
            pick = models[strong] if win_rate >= threshold else models[weak]
            return pick if pick in allowed else allowed[0]

        choices.append({"id": query["id"], "model": route(0.5)})
        choices.extend({"id": query["id"], "model": route(t), "setting": t} for t in THRESHOLDS)
    # Every test prompt was embedded by routellm's own code, one request each (a check that cannot pass otherwise).
    test_queries = len(choices) // (1 + len(THRESHOLDS))
    if routing_io.served["requests"] != test_queries:
        raise SystemExit(f"routellm's MFModel made {routing_io.served['requests']} embedding requests for {test_queries} test prompts")
    routing_io.write_choices(choices)
    routing_io.write_result(
        train_seconds,
        time.monotonic() - started,
        strong=models[strong],
        weak=models[weak],
        battles=len(fit),
        epochs=EPOCHS,
        routellm_embedding_requests=routing_io.served["requests"],
    )


if __name__ == "__main__":
    main()
