"""The client against a real `br serve`, worker, Temporal and Docker, run by test/python-client.test.ts
(which sets BENCHROUTER_TEST_API_URL, _API_TOKEN, _ENDPOINT: a replay model serving
test/fixtures/replay/arith.jsonl, and _ANSWERS: that file)."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from benchrouter_client import ApiError, Client, Reward  # noqa: E402

ENV = os.environ


def expected_rewards(instances):
    """What the replay model's canned answers score on arith's two tasks: (task, instance, score, prompt, completion)."""
    answers = {}
    with open(ENV["BENCHROUTER_TEST_ANSWERS"]) as file:
        for line in file:
            entry = json.loads(line)
            answers[entry["messages"][1]["content"]] = entry
    rows = []
    root = os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks", "arith", "tasks")
    for task in ("addition", "multiplication"):
        with open(os.path.join(root, task, "problems.jsonl")) as file:
            for line in file:
                problem = json.loads(line)
                if str(problem["index"]) not in instances:
                    continue
                answer = answers[problem["question"]]
                rows.append((task, problem["index"], int(answer["content"] == problem["answer"]),
                             answer["usage"]["prompt_tokens"], answer["usage"]["completion_tokens"]))
    return sorted(rows)


def rows_of(rewards):
    return sorted((r.task, r.instance, r.score, r.prompt_tokens, r.completion_tokens) for r in rewards)


@unittest.skipUnless(ENV.get("BENCHROUTER_TEST_API_URL"), "needs a running br serve (test/python-client.test.ts)")
class ClientTest(unittest.TestCase):
    def setUp(self):
        self.client = Client(ENV["BENCHROUTER_TEST_API_URL"], ENV["BENCHROUTER_TEST_API_TOKEN"], backoff=0.2)

    def submit(self, instances):
        return self.client.submit("arith", model="replay", endpoint=ENV["BENCHROUTER_TEST_ENDPOINT"], instances=instances)

    def test_rewards_stream_each_selected_instance_once_and_equal_the_final_records(self):
        instances = ["0", "3", "7", "11"]
        run = self.submit(instances)
        rewards = list(self.client.rewards(run))
        self.assertEqual(rows_of(rewards), expected_rewards(instances))
        self.assertEqual(len({(r.job, r.line) for r in rewards}), 8)
        result = self.client.wait(run, timeout=120)
        self.assertEqual(result["status"], "COMPLETED")
        # Instances 3, 7 and 11 have wrong canned answers: 1 of 4 right in each task.
        self.assertEqual(result["overall"], 0.25)
        records = self.client.records(run)
        self.assertEqual(
            sorted((r["jobId"], r["index"], r["score"], r["prompt_tokens"], r["completion_tokens"], r["cost"]) for r in records),
            sorted((r.job, r.instance, r.score, r.prompt_tokens, r.completion_tokens, r.cost) for r in rewards),
        )

    def test_rewards_resume_after_an_event_id_with_the_rest_only(self):
        run = self.submit(["1", "2", "4"])
        stream = self.client.rewards(run)
        first = [next(stream), next(stream)]
        stream.close()
        rest = list(self.client.rewards(run, after=first[-1].event_id))
        self.assertEqual(len(rest), 4)
        self.assertEqual(rows_of(first + rest), expected_rewards(["1", "2", "4"]))
        # Read again from the start, a finished run's stream holds the same six.
        self.assertEqual(rows_of(self.client.rewards(run)), rows_of(first + rest))

    def test_errors_name_the_status_code_and_field(self):
        with self.assertRaises(ApiError) as missing:
            self.client.status("br-20000101-000000-000000")
        self.assertEqual((missing.exception.status, missing.exception.code), (404, "NOT_FOUND"))
        with self.assertRaises(ApiError) as comma:
            self.submit(["1,2"])
        self.assertEqual((comma.exception.status, comma.exception.field), (400, "body.instances.0"))
        run = self.submit(["0"])
        with self.assertRaises(ApiError) as cursor:
            list(self.client.rewards(run, after="x=1"))
        self.assertEqual((cursor.exception.status, cursor.exception.field), (400, "headers.last-event-id"))
        self.assertIn('"x=1": expected <job>=<rewards read>', cursor.exception.message)
        self.assertEqual(self.client.wait(run, timeout=120)["status"], "COMPLETED")

    def test_a_reward_from_an_event(self):
        data = {"job": "r.000-addition", "task": "addition", "repeat": 0, "line": 2, "instance": 5, "score": 1,
                "prompt_tokens": 25, "completion_tokens": 3, "cost": None}
        self.assertEqual(Reward.from_event(data, "0=2"), Reward("r.000-addition", "addition", 0, 2, 5, 1, 25, 3, None, "0=2"))


if __name__ == "__main__":
    unittest.main()
