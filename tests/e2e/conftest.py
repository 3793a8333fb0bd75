"""Shared helpers for the CLI end-to-end tests: find the simdup binary and run it."""

import json
import os
import subprocess

import pytest

from service_harness import SOURCE_DIR, simdup_bin  # noqa: F401 (the tests import them from here)


def run(args, input=None, check=None, timeout=120, cwd=None, env=None):
    """Runs `simdup ARGS` with bytes (or str) on stdin; returns the CompletedProcess (bytes).

    check=N asserts the exit code is N and shows stderr when it is not."""
    if isinstance(input, str):
        input = input.encode()
    run_env = dict(os.environ)
    # Leak checking is the unit tests' job; the CLI exits through paths (usage errors) that
    # CLI11 makes leak-noisy.
    run_env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    if env:
        run_env.update(env)
    proc = subprocess.run([simdup_bin(), *[str(a) for a in args]], input=input,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          cwd=cwd, env=run_env)
    if check is not None:
        assert proc.returncode == check, (
            f"exit {proc.returncode} != {check}\nstderr:\n{proc.stderr.decode(errors='replace')}")
    return proc


def jsonl(proc):
    """Parses the stdout of a run as JSON lines."""
    return [json.loads(line) for line in proc.stdout.decode().splitlines() if line]


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    return path


@pytest.fixture
def sample_records():
    """A few English and Chinese documents with varied ids."""
    return [
        {"id": 1, "text": "The quick brown fox jumps over the lazy dog near the river bank."},
        {"id": "doc-2", "text": "The quick brown fox jumped over the lazy dog near the river bank!"},
        {"id": 3.5, "text": "Completely different: stock markets fell sharply on Tuesday morning."},
        {"id": "中文", "text": "今天天气很好，我们去公园散步吧。"},
        {"id": 5, "text": ""},
    ]
