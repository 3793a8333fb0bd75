"""-o naming a FIFO or device (/dev/null) writes into it: the output is not swapped in by
renaming a temporary file over the node (which replaced /dev/null with a regular file)."""

import os
import stat
import threading

from cli_harness import SOURCE_DIR, run


def test_output_to_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    run(["fingerprint", SOURCE_DIR / "data" / "sample" / "news.jsonl", "-o", fifo], check=0)
    reader.join(timeout=60)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received and received[0].count(b"\n") == 2103
    assert not list(tmp_path.glob("out.fifo.tmp.*"))
