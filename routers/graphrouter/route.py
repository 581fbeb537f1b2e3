"""GraphRouter: a GNN over a heterogeneous graph of query nodes (query embedding with its task's
embedding) and model nodes, whose query-model edges carry what training observed (utility, cost,
score). Two torch_geometric GeneralConv layers encode the graph; an edge's probability is the mean of
the query's aligned features times the model node's encoding, trained with BCE on "this model has
the query's best utility", predicting edges hidden by a random mask from the visible ones. A test
query is a new node with edges to every model and no visible edge of its own; it goes to the model
whose edge is most probable. The epoch is chosen on a validation slice of train's queries."""

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
from torch import nn  # noqa: E402
from torch_geometric.nn import GeneralConv  # noqa: E402

HIDDEN = 32
EDGE_DIM = 3
EPOCHS = int(os.environ.get("GRAPHROUTER_EPOCHS", "60"))
MASK_RATE = 0.3
STEPS_PER_EPOCH = 4
LR, WEIGHT_DECAY = 1e-3, 1e-4
VALIDATION = 0.2


class GraphRouter(nn.Module):
    """GraphRouter's encoder-decoder: query and task features aligned into one node space with the models'."""

    def __init__(self, query_dim, task_dim, model_dim):
        super().__init__()
        self.query = nn.Linear(query_dim, HIDDEN)
        self.task = nn.Linear(task_dim, HIDDEN)
        self.model = nn.Linear(model_dim, 2 * HIDDEN)
        self.edge = nn.Linear(EDGE_DIM, EDGE_DIM)
        self.conv1 = GeneralConv(2 * HIDDEN, 2 * HIDDEN, in_edge_channels=EDGE_DIM)
        self.conv2 = GeneralConv(2 * HIDDEN, 2 * HIDDEN, in_edge_channels=EDGE_DIM)
        self.bn1 = nn.BatchNorm1d(2 * HIDDEN)
        self.bn2 = nn.BatchNorm1d(2 * HIDDEN)

    def forward(self, query_x, task_x, model_x, visible_index, visible_attr, predict_index):
        x0 = torch.cat([torch.cat([self.task(task_x), self.query(query_x)], 1), self.model(model_x)], 0)
        attr = F.relu(self.edge(visible_attr))
        # Messages flow both ways between a query and a model.
        both = torch.cat([visible_index, visible_index.flip(0)], 1)
        attr = torch.cat([attr, attr], 0)
        x = F.relu(self.bn1(self.conv1(x0, both, edge_attr=attr)))
        x = self.bn2(self.conv2(x, both, edge_attr=attr))
        return torch.sigmoid((x0[predict_index[0]] * x[predict_index[1]]).mean(dim=-1))


def main():
    manifest = routing_io.manifest()
    models, datasets = manifest["models"], manifest["datasets"]
    M = len(models)
    torch.manual_seed(manifest["seed"])
    rng = np.random.default_rng(manifest["seed"])
    started = time.monotonic()
    records = routing_io.train_records()
    ids, prompts, scores, costs = routing_io.train_queries(records, models)
    dataset_of = {r["id"]: r["dataset"] for r in records}
    test = routing_io.test_queries()
    query_vectors = routing_io.embed(list(zip(ids, prompts)))
    # Task features: the mean of the task's training query embeddings (upstream embeds a task description).
    train_task = np.array([datasets.index(dataset_of[i]) for i in ids])
    task_vectors = np.vstack([query_vectors[train_task == d].mean(axis=0) if (train_task == d).any() else np.zeros(query_vectors.shape[1]) for d in range(len(datasets))])
    # The test queries are nodes of the graph from the start; embedding them is routing time, not training.
    embedding_test = time.monotonic()
    test_vectors = routing_io.embed([(q["id"], q["prompt"]) for q in test])
    test_embed_seconds = time.monotonic() - embedding_test

    # Nodes: training queries, then test queries, then models (one-hot: no model descriptions here).
    n_train, n_test = len(ids), len(test)
    query_x = torch.tensor(np.vstack([query_vectors, test_vectors]) if n_test else query_vectors, dtype=torch.float32)
    task_of = [datasets.index(dataset_of[i]) for i in ids] + [datasets.index(q["dataset"]) for q in test]
    task_x = torch.tensor(task_vectors[task_of], dtype=torch.float32)
    model_x = torch.eye(M)
    model_node = n_train + n_test + np.arange(M)

    # Edges of training queries: (utility, normalized cost, score); the label is the best utility (ties all 1).
    cost_scale = np.nanmax(costs) if np.nanmax(costs) > 0 else 1.0
    q_idx, m_idx = np.nonzero(~np.isnan(scores))
    attr = np.column_stack([scores[q_idx, m_idx], costs[q_idx, m_idx] / cost_scale, scores[q_idx, m_idx]])
    best = np.nanmax(scores, axis=1)
    label = torch.tensor(np.isclose(scores[q_idx, m_idx], best[q_idx]), dtype=torch.float32)
    edge_index = torch.tensor(np.vstack([q_idx, model_node[m_idx]]), dtype=torch.long)
    edge_attr = torch.tensor(attr, dtype=torch.float32)

    order = rng.permutation(n_train)
    val_queries = set(order[: int(n_train * VALIDATION)].tolist())
    is_val = torch.tensor([q in val_queries for q in q_idx])
    fit_edges = ~is_val

    net = GraphRouter(query_x.shape[1], task_x.shape[1], M)
    optimizer = torch.optim.AdamW(net.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    criterion = nn.BCELoss()
    best_state, best_epoch, best_val = None, 0, -np.inf
    val_rows = sorted(val_queries)
    for epoch in range(1, EPOCHS + 1):
        net.train()
        optimizer.zero_grad()
        loss = 0
        for _ in range(STEPS_PER_EPOCH):
            hidden = fit_edges & (torch.rand(len(fit_edges)) < MASK_RATE)
            visible = fit_edges & ~hidden
            out = net(query_x, task_x, model_x, edge_index[:, visible], edge_attr[visible], edge_index[:, hidden])
            loss = loss + criterion(out, label[hidden])
        (loss / STEPS_PER_EPOCH).backward()
        optimizer.step()
        if val_rows:
            # Validation queries see only the fitting edges, as test queries will see only training edges.
            score = validation_score(net, query_x, task_x, model_x, edge_index[:, fit_edges], edge_attr[fit_edges], val_rows, model_node, scores)
            if score > best_val:
                best_val, best_epoch = score, epoch
                best_state = {k: v.clone() for k, v in net.state_dict().items()}
    if best_state is not None:
        net.load_state_dict(best_state)
    train_seconds = time.monotonic() - started - test_embed_seconds

    started = time.monotonic() - test_embed_seconds
    choices = []
    if n_test:
        probs = edge_probabilities(net, query_x, task_x, model_x, edge_index, edge_attr, n_train + np.arange(n_test), model_node)
        for i, query in enumerate(test):
            allowed = np.array([m in query.get("models", models) for m in models])
            choices.append({"id": query["id"], "model": models[int(np.argmax(np.where(allowed, probs[i], -np.inf)))]})
    routing_io.write_choices(choices)
    routing_io.write_result(train_seconds, time.monotonic() - started, epoch=best_epoch, validation_score=best_val)


@torch.no_grad()
def edge_probabilities(net, query_x, task_x, model_x, visible_index, visible_attr, rows, model_node):
    net.eval()
    M = len(model_node)
    predict = torch.tensor(np.vstack([np.repeat(rows, M), np.tile(model_node, len(rows))]), dtype=torch.long)
    return net(query_x, task_x, model_x, visible_index, visible_attr, predict).reshape(len(rows), M).numpy()


def validation_score(net, query_x, task_x, model_x, visible_index, visible_attr, rows, model_node, scores):
    probs = edge_probabilities(net, query_x, task_x, model_x, visible_index, visible_attr, np.array(rows), model_node)
    probs = np.where(np.isnan(scores[rows]), -np.inf, probs)
    picked = np.argmax(probs, axis=1)
    return float(np.mean(scores[rows, picked]))


if __name__ == "__main__":
    main()
