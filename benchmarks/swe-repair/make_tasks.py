#!/usr/bin/env python3
"""Writes each instance's derived files in the task repo from the three an author writes: task.yaml (with
`sdist`, the source distribution in images/python/sdists.txt), tests.json, and bug.patch (the documented fix
reverted, and the tests that prove it removed). Derived: gold.patch (the fix: bug.patch's non-test part,
reversed), test.patch (the tests: its test part, reversed), eval.sh (SWE-bench's shape: restore the test
files, apply test.patch, run pytest on them between the harness's markers) and the Dockerfile.

    python3 make_tasks.py --sdists DIR      # DIR holds the sdists (pip download -r images/python/sdists.txt)

Then `swebench dataset check task-repo` must report no problem.
"""
import argparse, json, os, subprocess, tarfile, tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).parent
TASKS = HERE / "task-repo" / "tasks"
GIT = ["git", "-c", "user.name=swe-repair", "-c", "user.email=swe-repair@localhost", "-c", "safe.directory=*"]

DOCKERFILE = """\
# {project} {version} from its PyPI sdist with the fix reverted (bug.patch), as one commit at /testbed.
FROM benchrouter/swe-repair-python:bookworm
COPY bug.patch /tmp/bug.patch
RUN mkdir /testbed && tar -xzf /sdists/{sdist} --strip-components=1 -C /testbed \\
 && cd /testbed && git apply /tmp/bug.patch && rm /tmp/bug.patch \\
 && git init -q && git add -A && git -c user.name=swe-repair -c user.email=swe-repair@localhost commit -qm "{project} {version}"
WORKDIR /testbed
"""

EVAL = """\
#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- {test_files}
git apply --verbose - <<'EOF_TEST_PATCH'
{test_patch}EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider {test_files}
: '>>>>> End Test Output'
git checkout HEAD -- {test_files}
"""


def git(cwd, *args):
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make(task_dir, sdists):
    meta = yaml.safe_load((task_dir / "task.yaml").read_text())
    tests = json.loads((task_dir / "tests.json").read_text())
    test_files = sorted({t.split("::")[0] for t in tests["FAIL_TO_PASS"] + tests["PASS_TO_PASS"]})
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(sdists / meta["sdist"]) as archive:
            archive.extractall(tmp, filter="data")
        src = next(Path(tmp).iterdir())
        git(src, "init", "-q")
        git(src, "add", "-A")
        git(src, "commit", "-qm", "fixed")
        git(src, "apply", str((task_dir / "bug.patch").resolve()))
        git(src, "commit", "-qam", "bug")
        changed = git(src, "diff", "--name-only", "HEAD~1", "HEAD").split()
        test_paths = [p for p in changed if p.startswith("test")]
        source_paths = [p for p in changed if p not in test_paths]
        if not source_paths or not test_paths:
            raise SystemExit(f"{task_dir}/bug.patch: expected changes to source and to test files, got {changed}")
        (task_dir / "gold.patch").write_text(git(src, "diff", "HEAD", "HEAD~1", "--", *source_paths))
        test_patch = git(src, "diff", "HEAD", "HEAD~1", "--", *test_paths)
    (task_dir / "test.patch").write_text(test_patch)
    (task_dir / "eval.sh").write_text(EVAL.format(test_files=" ".join(test_files), test_patch=test_patch))
    project, version = meta["sdist"].removesuffix(".tar.gz").rsplit("-", 1)
    (task_dir / "Dockerfile").write_text(DOCKERFILE.format(project=project, version=version, sdist=meta["sdist"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sdists", required=True, type=Path)
    parser.add_argument("instances", nargs="*")
    args = parser.parse_args()
    for task_dir in sorted(TASKS.iterdir()):
        if not args.instances or task_dir.name in args.instances:
            make(task_dir, args.sdists)
            print(f"{task_dir.name}: written")


if __name__ == "__main__":
    main()
