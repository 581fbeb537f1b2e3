"""Submit a run and print each reward as a JSON line the moment the stream delivers it, then `END`.

    python3 examples/stream_rewards.py --api http://127.0.0.1:8391 --token "$(cat ~/.benchrouter/api-token)" \\
        --benchmark arith --model reference --endpoint http://127.0.0.1:8399/v1 --instances 0,1,2

Extra submit fields go in --options as JSON, e.g. '{"concurrency": 2, "gateway": false}'.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from benchrouter_client import Client  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--benchmark", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--instances", help="comma-separated instance ids")
    parser.add_argument("--options", default="{}", help="more submit fields, as a JSON object")
    args = parser.parse_args()

    client = Client(args.api, args.token)
    options = json.loads(args.options)
    if args.instances:
        options["instances"] = args.instances.split(",")
    run = client.submit(args.benchmark, model=args.model, endpoint=args.endpoint, **options)
    print(f"RUN {run}", flush=True)
    for reward in client.rewards(run):
        print(json.dumps(reward.__dict__), flush=True)
    print("END", flush=True)


if __name__ == "__main__":
    main()
