"""Every shell example in README.md and docs/*.md runs as written and does what it claims.

How to write examples (README.md and every docs/*.md, new files included, are checked):

- A fence must name its language. ```sh marks commands a reader can paste into a shell at the
  repository root after `make run`; this test runs every such block. Use ```text for
  synopses and sample output, ```json for JSON. Real commands that cannot run here (they need
  data or machines the repository does not have) go in ```sh no-run, with a comment saying
  what they need; keep those rare.
- The blocks of one file run in order, in one shell session (variables, background jobs)
  and one scratch directory that holds a copy of data/sample, so a block may use what an
  earlier block of the same file made or started. Every file starts afresh.
- `simdup` is the binary under test ($SIMDUP_BIN, put on PATH); the path
  `build/release/cli/simdup` is replaced by `simdup`.
- Every command must exit 0, unless its line ends with the comment `# exit N`.
- Lines `#> TEXT` right after a command are its expected stdout, one line each, in order (the
  one space after `#>` is not part of the line, trailing spaces are ignored);
  `...` in a line matches any text, and a line `#> ...` alone matches any number of lines.
  Without `#>` lines, stdout is not checked.
- docs/databases.md is the exception: its blocks need a PostgreSQL server, and
  tests/e2e/test_postgres_docs.py runs them against the one the tests start (RUN_ELSEWHERE).
- A command that ends with `&` runs in the background; when it has `--listen HOST:PORT`, the
  next command runs once that port accepts connections. Port 8080 is replaced by a free port.
  What still runs in the background at the end of the file is stopped with SIGTERM.
"""

import os
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cli_harness import SOURCE_DIR, simdup_bin

DOC_FILES = [SOURCE_DIR / "README.md", *sorted((SOURCE_DIR / "docs").glob("*.md"))]
# Docs whose ```sh blocks need a server this test does not start; the named test runs them.
RUN_ELSEWHERE = {"databases.md": "tests/e2e/test_postgres_docs.py (against the tests' PostgreSQL)"}
SHELL_DOCS = [d for d in DOC_FILES if d.name not in RUN_ELSEWHERE]
FENCE = re.compile(r"^(\s*)```(.*)$")
EXPECT_EXIT = re.compile(r"#\s*exit\s+(\d+)\b[^#]*$")
# A trailing `&` (not `&&`), perhaps followed by a comment.
BACKGROUND = re.compile(r"(?<!&)&\s*(#[^'\"]*)?$")
FILE_TIMEOUT_S = 600


@dataclass
class Command:
    text: str  # the shell text, continuation lines joined
    line: int  # line number in the doc
    exit_code: int = 0
    expected: list = field(default_factory=list)  # the #> lines, or None when not checked

    def background(self):
        """The command without its trailing `&` when it runs in the background, else None."""
        m = BACKGROUND.search(self.text)
        return self.text[:m.start()] if m else None


@dataclass
class Block:
    doc: Path
    line: int
    info: str
    lines: list  # (line number, text)

    def runnable(self):
        words = self.info.split()
        return bool(words) and words[0] == "sh" and "no-run" not in words[1:]


def blocks_of(doc):
    """The fenced code blocks of a Markdown file."""
    out, current = [], None
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        m = FENCE.match(line)
        if m and current is None:
            current = Block(doc, number, m.group(2).strip(), [])
        elif m and line.strip() == "```":
            out.append(current)
            current = None
        elif current is not None:
            current.lines.append((number, line))
    assert current is None, f"{doc.name}:{current.line}: unterminated code block"
    return out


def commands_of(block):
    """The commands of a block: comments dropped, continuations joined, #> lines attached."""
    commands, pending = [], None
    for number, raw in block.lines:
        line = raw.strip()
        if line.startswith("#>"):
            assert commands and pending is None, \
                f"{block.doc.name}:{number}: '#>' must follow a command"
            text = line[2:]  # one space after "#>" separates; more are part of the output
            commands[-1].expected.append((text[1:] if text.startswith(" ") else text).rstrip())
            continue
        if pending is not None:
            pending.text += "\n" + raw
            if not raw.endswith("\\"):
                commands.append(pending)
                pending = None
            continue
        if not line or line.startswith("#"):
            continue
        cmd = Command(raw, number)
        if raw.endswith("\\"):
            pending = cmd
        else:
            commands.append(cmd)
    assert pending is None, f"{block.doc.name}:{pending.line}: continuation at the end of a block"
    for cmd in commands:
        m = EXPECT_EXIT.search(cmd.text.splitlines()[-1])
        if m:
            cmd.exit_code = int(m.group(1))
    return commands


def output_matches(expected, actual_lines):
    """`expected` (#> lines, `...` wildcards) against the lines of stdout."""
    pattern = ""
    for line in expected:
        if line.strip() == "...":
            pattern += r"(?:.*\n)*?"
        else:
            pattern += ".*".join(re.escape(part) for part in line.split("...")) + r"\n"
    return re.fullmatch(pattern, "".join(l.rstrip() + "\n" for l in actual_lines)) is not None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def script_for(commands, logs):
    """A bash script that runs the commands in one shell (variables, `$!` and jobs carry over),
    each command's stdout, stderr and exit code captured under `logs`."""
    parts = ["set -o pipefail",
             # What is left in the background is stopped at the end; its own exit is not checked.
             "trap 'jobs -p | xargs -r kill -TERM 2>/dev/null; wait' EXIT"]
    for i, cmd in enumerate(commands):
        redirect = f'>"{logs}/out.{i}" 2>"{logs}/err.{i}"'
        body = cmd.background()
        if body is not None:
            # No braces: bash then runs the command itself as the job, so `kill %1` reaches it
            # and `wait %1` gives its exit status (not a subshell's).
            parts.append(f"{body.rstrip()} {redirect} &")
            parts.append(f'echo 0 >"{logs}/rc.{i}"')
            m = re.search(r"--listen\s+([\w.]+):(\d+)", cmd.text)
            if m:
                host = "127.0.0.1" if m.group(1) in ("localhost", "0.0.0.0") else m.group(1)
                parts.append(
                    f"for _ in $(seq 300); do (exec 9<>/dev/tcp/{host}/{m.group(2)}) "
                    f"2>/dev/null && break; sleep 0.1; done")
        else:
            parts.append(f"{{ {cmd.text}\n}} {redirect}")
            parts.append(f'echo $? >"{logs}/rc.{i}"')
    return "\n".join(parts) + "\n"


def prepare_scratch(scratch):
    """The repository root as the examples see it: the sample data, and nothing they write."""
    shutil.copytree(SOURCE_DIR / "data" / "sample", scratch / "data" / "sample")
    bindir = scratch / ".docs-test-bin"
    bindir.mkdir()
    (bindir / "simdup").symlink_to(Path(simdup_bin()).resolve())
    return bindir


def run_doc(doc, tmp_path):
    """Runs the sh blocks of `doc`; returns the number of commands checked."""
    scratch = tmp_path / "repo"
    scratch.mkdir(parents=True)
    bindir = prepare_scratch(scratch)
    env = dict(os.environ)
    env["PATH"] = f"{bindir}{os.pathsep}{env['PATH']}"
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    port = str(free_port())
    commands = []
    for block in blocks_of(doc):
        if not block.runnable():
            continue
        lines = [(n, l.replace("build/release/cli/simdup", "simdup").replace(":8080", ":" + port))
                 for n, l in block.lines]
        commands += commands_of(Block(block.doc, block.line, block.info, lines))
    if not commands:
        return 0
    logs = tmp_path / "logs"
    logs.mkdir()
    subprocess.run(["bash", "-c", script_for(commands, logs)], cwd=scratch, env=env,
                   timeout=FILE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    for i, cmd in enumerate(commands):
        where = f"{doc.name}:{cmd.line}: {cmd.text.strip()}"
        rc_file = logs / f"rc.{i}"
        assert rc_file.exists(), f"{where}\nnever ran (an earlier command ended the shell)"
        out = (logs / f"out.{i}").read_text(errors="replace")
        err = (logs / f"err.{i}").read_text(errors="replace")
        rc = int(rc_file.read_text())
        assert rc == cmd.exit_code, \
            f"{where}\nexit {rc}, expected {cmd.exit_code}\nstdout:\n{out}\nstderr:\n{err}"
        if cmd.expected:
            assert output_matches(cmd.expected, out.splitlines()), \
                f"{where}\nstdout does not match the #> lines:\n" + \
                "\n".join(cmd.expected) + f"\n--- got:\n{out}\nstderr:\n{err}"
    return len(commands)


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda p: p.name)
def test_every_fence_names_its_language(doc):
    unnamed = [b.line for b in blocks_of(doc) if not b.info]
    assert not unnamed, f"{doc.name}: fences without a language at lines {unnamed} " \
                        "(sh runs, text or json does not; see this test's docstring)"


def test_docs_run_elsewhere_have_their_runner():
    for name, runner in RUN_ELSEWHERE.items():
        assert (SOURCE_DIR / "docs" / name).is_file(), name
        assert (SOURCE_DIR / runner.split()[0]).is_file(), runner


@pytest.mark.parametrize("doc", SHELL_DOCS, ids=lambda p: p.name)
def test_shell_examples_run_as_written(doc, tmp_path):
    run_doc(doc, tmp_path)


def test_the_conventions_themselves(tmp_path):
    """The harness catches what it promises to: a wrong exit code, wrong output, `...`."""
    doc = tmp_path / "example.md"
    doc.write_text("```sh\n"
                   "echo hello world\n"
                   "#> hello ...\n"
                   "printf 'a\\nb\\nc\\n'\n"
                   "#> a\n#> ...\n#> c\n"
                   "false   # exit 1\n"
                   "X=4; echo $((X * 2))\n"
                   "#> 8\n"
                   "```\n\nProse.\n\n```text\nnot run\n```\n\n```sh\n"
                   "echo $X   # the session goes on across blocks\n"
                   "#> 4\n"
                   "```\n", encoding="utf-8")
    assert run_doc(doc, tmp_path / "ok") == 5
    for i, (body, needle) in enumerate((("echo hi\n#> bye\n", "does not match"),
                                        ("false\n", "exit 1, expected 0"),
                                        ("true   # exit 3\n", "exit 0, expected 3"),
                                        ("exit 0\necho after\n", "never ran"))):
        bad = tmp_path / f"bad-{i}.md"
        bad.write_text("```sh\n" + body + "```\n", encoding="utf-8")
        with pytest.raises(AssertionError, match=needle):
            run_doc(bad, tmp_path / f"bad-{i}")
