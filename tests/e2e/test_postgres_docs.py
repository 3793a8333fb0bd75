"""Every ```sh example of docs/databases.md runs, in order, against the tests' own PostgreSQL
(PGHOST/PGDATABASE name it, as the page says) with simdup on the PATH, and succeeds."""

import os
import re
import subprocess
from pathlib import Path

from cli_harness import SOURCE_DIR, simdup_bin

DOC = SOURCE_DIR / "docs" / "databases.md"


def test_every_example_runs(postgres, tmp_path):
    blocks = re.findall(r"^```sh\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)
    assert len(blocks) >= 4
    db = postgres.create_database("docs")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "simdup").symlink_to(Path(simdup_bin()).resolve())
    env = {**os.environ, **postgres.env, "PGDATABASE": db,
           "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    for block in blocks:
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=SOURCE_DIR, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        assert proc.returncode == 0, f"{block}\nstdout:\n{proc.stdout.decode()}\nstderr:\n" \
                                     f"{proc.stderr.decode()}"
    conn = postgres.connect(db)
    cur = conn.cursor()
    cur.execute("SELECT count(*) FROM news_decisions")
    assert cur.fetchone()[0] == 2103
    cur.execute("SELECT count(*) FROM news_fps WHERE status = 'ok'")
    assert cur.fetchone()[0] == 2103
    conn.close()
