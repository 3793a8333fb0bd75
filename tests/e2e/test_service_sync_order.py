"""Durability against power loss, not only kill -9: `simdup serve` (RocksDB store) sends no
answer to an insert before the WAL write holding that insert is synced (fsync/fdatasync).

A kill -9 test cannot tell a synced write from one still in the page cache; this one watches
the system calls. tests/support/syscall_log.c (LD_PRELOAD) logs every file write with its end
offset, every sync with the sequence number taken when it started, and every socket receive
and send, in one numbered order. Afterwards each inserted id is found in the WAL file; the write
whose range holds it must be followed by a sync of that file that started after the write and
ended before the answer to the request carrying the id was sent.
"""

import dataclasses
import os
import re
import threading
from pathlib import Path

import pytest

from service_harness import Server, fp_hex, run_threads, spread_fingerprints

SHIM = os.environ.get("SIMDUP_SYSCALL_LOG_LIB")
WAL = re.compile(r"/\d+\.log$")
ID = re.compile(rb'"id": ?"(sync-\d+-[a-z]+)"')


@dataclasses.dataclass
class Call:
    seq: int
    op: str
    fd: int
    result: int
    number: int
    text: str


def read_log(path):
    calls = []
    for line in Path(path).read_text(errors="replace").splitlines():
        seq, op, fd, result, number, text = (line.split("\t", 5) + [""])[:6]
        calls.append(Call(int(seq), op, int(fd), int(result), int(number), text))
    return sorted(calls, key=lambda c: c.seq)


def answers_by_id(calls):
    """The sequence number of the answer sent for each id: on each connection (fd) the answers
    follow the requests in order, and a request's ids are in its received bytes."""
    pending = {}  # fd -> ids of requests received, in order, each request a list
    answered = {}
    for c in calls:
        if c.op == "recv":
            ids = [m.decode() for m in ID.findall(c.text.encode())]
            if c.text.startswith(("POST ", "PUT ", "GET ", "DELETE ")):
                pending.setdefault(c.fd, []).append(ids)
            elif pending.get(c.fd):  # the rest of a request that came in parts
                pending[c.fd][-1].extend(ids)
        elif c.op == "send" and c.text.startswith("HTTP/1.1 ") and not c.text.startswith(
                "HTTP/1.1 100"):
            assert pending.get(c.fd), f"answer without a request: {c}"
            status = int(c.text.split()[1])
            for doc_id in pending[c.fd].pop(0):
                answered[doc_id] = (c.seq, status)
    return answered


WAL_BLOCK, WAL_HEADER = 32768, 7  # RocksDB's log format: 32 KiB blocks, 7-byte fragment headers


def last_byte_in_wal(data, needle):
    """The offset of the last byte of `needle` in a WAL file, or -1. A record that crosses a
    32 KiB block boundary continues after the next block's fragment header, so an id can be
    split around those 7 bytes."""
    at = data.find(needle)
    if at >= 0:
        return at + len(needle) - 1
    for boundary in range(WAL_BLOCK, len(data), WAL_BLOCK):
        before = data[boundary - len(needle):boundary]
        after = data[boundary + WAL_HEADER:boundary + WAL_HEADER + len(needle)]
        i = (before + after).find(needle)
        if 0 <= i < len(needle) and i + len(needle) > len(needle):
            return boundary + WAL_HEADER + i - 1  # i bytes of it follow the header
    return -1


def violations(calls, wal_bytes, answered):
    """Ids whose answer was sent before a sync covering their WAL write had ended."""
    writes = {}  # WAL path -> [(end offset, seq)] in order
    syncs = {}  # WAL path -> [(started, ended)]
    for c in calls:
        if c.op == "write" and WAL.search(c.text) and c.result > 0:
            writes.setdefault(c.text, []).append((c.number, c.seq))
        elif c.op == "sync" and WAL.search(c.text) and c.result == 0:
            syncs.setdefault(c.text, []).append((c.number, c.seq))
    bad = []
    for doc_id, (sent, _) in answered.items():
        where = [(path, last_byte_in_wal(data, doc_id.encode())) for path, data in wal_bytes.items()]
        where = [(path, at) for path, at in where if at >= 0]
        if not where:
            bad.append(f"{doc_id}: not in any WAL file")
            continue
        path, at = where[0]
        written = next((seq for end, seq in writes.get(path, []) if end > at), None)
        if written is None:
            bad.append(f"{doc_id}: no logged write of {path} holds offset {at}")
            continue
        if written > sent:
            bad.append(f"{doc_id}: answered (#{sent}) before its WAL write (#{written})")
            continue
        if not any(written < started and ended < sent for started, ended in syncs.get(path, [])):
            bad.append(f"{doc_id}: answered (#{sent}) with its WAL write (#{written}) unsynced")
    return bad


@pytest.fixture
def logged_server(tmp_path):
    assert SHIM and Path(SHIM).exists(), "SIMDUP_SYSCALL_LOG_LIB (set by CTest) names no library"
    log = tmp_path / "syscalls.log"
    data = tmp_path / "db"
    # The shim comes before the ASan runtime in the library order, which ASan would refuse.
    env = {"LD_PRELOAD": SHIM, "SIMDUP_SYSCALL_LOG": str(log),
           "ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0"}
    server = Server(["--data", str(data), "--window", "0", "--collection", "crawl"], env=env)
    yield server, log, data
    server.close()


def wal_files(data):
    return {str(p): p.read_bytes() for p in data.iterdir() if WAL.search(str(p))}


def test_no_insert_is_answered_before_its_wal_write_is_synced(logged_server):
    server, log, data = logged_server
    values = spread_fingerprints(8 * 30 + 8 * 5 * 4, 6, seed=3)

    def worker(t):
        client = server.client()
        for i in range(30):  # one at a time, three endpoints
            doc_id = f"sync-{t * 1000 + i:05d}-one"
            path = ("/v1/crawl/insert", "/v1/crawl/check-insert")[i % 2]
            status, body = client.post(path, {"id": doc_id,
                                              "fingerprint": fp_hex(values[t * 30 + i])})
            assert status == 200 and body["status"] in ("inserted", "new"), body
        for b in range(5):  # batches of four
            base = 8 * 30 + (t * 5 + b) * 4
            docs = [{"id": f"sync-{t * 1000 + 100 + b * 4 + j:05d}-batch",
                     "fingerprint": fp_hex(values[base + j])} for j in range(4)]
            status, body = client.post("/v1/crawl/check-insert", {"documents": docs})
            assert status == 200, body
        client.close()

    # Eight clients at once: the group commit syncs requests of several connections together.
    run_threads(8, worker)
    server.terminate()

    calls = read_log(log)
    answered = answers_by_id(calls)
    assert len(answered) == 8 * (30 + 5 * 4)
    assert all(status == 200 for _, status in answered.values())
    assert violations(calls, wal_files(data), answered) == []

    # The check can fail: the same log with one answer moved before its sync is caught.
    doc_id, (sent, status) = next(iter(answered.items()))
    early = dict(answered)
    early[doc_id] = (min(c.seq for c in calls if c.op == "recv" and doc_id in c.text) + 1, status)
    assert any(v.startswith(doc_id) for v in violations(calls, wal_files(data), early))


def test_answers_wait_for_the_sync_of_an_old_log_file_after_a_switch(logged_server):
    """When RocksDB starts a new log file (a memtable switch, here every 16 MB of records), the
    records written before it end the old file, written from a writer's thread: that file must
    be synced too before they are answered. The group commit does (rocks_backend::sync_log);
    RocksDB's flush of the old memtable also syncs closed log files, usually first, so this
    checks that some sync covered them, not whose. Long ids fill the memtables fast."""
    server, log, data = logged_server
    seen = set()  # log files seen in the directory, however briefly
    switched = threading.Event()

    def worker(t):
        client = server.client()
        for b in range(1000):
            if switched.is_set():
                break
            # The checked id first, so that the logged start of the request holds it.
            docs = [{"id": f"sync-{t}{b:04d}-switch", "fingerprint": fp_hex(t << 32 | b)}]
            docs += [{"id": f"fill-{t}-{b}-{i}-" + "f" * 980,
                      "fingerprint": fp_hex((t << 48) | (b << 8) | (i + 1))}
                     for i in range(99)]
            status, body = client.post("/v1/crawl/insert", {"documents": docs})
            assert status == 200, body
            seen.update(p.name for p in data.iterdir() if WAL.search(str(p)))
            if len(seen) >= 3:
                switched.set()
        client.close()

    run_threads(4, worker)
    assert switched.is_set(), f"no two log switches: {sorted(seen)}"
    server.terminate()

    calls = read_log(log)
    answered = answers_by_id(calls)
    assert answered and all(status == 200 for _, status in answered.values())
    wal = wal_files(data)
    assert violations(calls, wal, answered) == []
    # The checked ids span the switches (else the old files' tails were not checked).
    holding = {path for path, data_ in wal.items()
               for doc_id in answered if data_.find(doc_id.encode()) >= 0}
    assert len(holding) >= 2, holding
