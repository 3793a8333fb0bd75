"""Helpers for the end-to-end tests of the simdup CLI: the source tree, the binary under test,
and running it."""

import json
import os
import subprocess
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("SIMDUP_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def simdup_bin():
    """The simdup CLI: $SIMDUP_BIN (set by CTest), else the first build dir that has one."""
    path = os.environ.get("SIMDUP_BIN")
    if path:
        return path
    for build in ("asan", "release", "dev"):
        candidate = SOURCE_DIR / "build" / build / "cli" / "simdup"
        if candidate.exists():
            return str(candidate)
    raise RuntimeError("set SIMDUP_BIN to the simdup binary")


def run(args, input=None, check=None, timeout=120, cwd=None, env=None, preexec_fn=None):
    """Runs `simdup ARGS` with bytes (or str) on stdin; returns the CompletedProcess (bytes).

    check=N asserts the exit code is N and shows stderr when it is not; `preexec_fn` runs in
    the child before the binary (e.g. to pin it to one CPU)."""
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
                          cwd=cwd, env=run_env, preexec_fn=preexec_fn)
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


def snapshot(directory):
    """Every file under `directory` (its index/ included) by relative path, with its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}
