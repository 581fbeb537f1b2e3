#!/usr/bin/env python3
"""Prints, as JSON, the page and the scripts BrowserGym's own MiniWoB task setup (AbstractMiniwobTask.setup)
runs for an environment and seed, so an episode in another browser starts exactly as the miniwob benchmark's
does: BrowserGym's setup runs unmodified against a page object that records what it is asked to evaluate.

    python3 browsergym_setup.py click-test-2 0   ->   {"page": "click-test-2.html", "scripts": [...]}
"""
import json, sys

from browsergym.miniwob import ALL_MINIWOB_TASKS


class RecordingPage:
    def __init__(self):
        self.url, self.scripts = None, []

    def goto(self, url):
        self.url = url

    def evaluate(self, script):
        if script.lstrip().startswith("() =>"):  # BrowserGym reading the goal and the page state: not setup
            return [None] * 6 if "WOB_TASK_READY]" in script else ""
        self.scripts.append(script)

    def wait_for_function(self, script):
        self.scripts.append({"wait_for": script})


env_name, seed = sys.argv[1], int(sys.argv[2])
task = next(t for t in ALL_MINIWOB_TASKS if t.subdomain == env_name)(seed=seed, base_url="")
page = RecordingPage()
task.setup(page=page)
print(json.dumps({"page": page.url, "scripts": page.scripts}))
