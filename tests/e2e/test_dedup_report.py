"""report.html in a real browser: headless Chromium renders it to a PNG that is not blank."""

import shutil
import struct
import subprocess
import tempfile
import zlib

import pytest

from cli_harness import run, write_jsonl
from dedup_corpus import corpus

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def png_pixels(data):
    """Decodes an 8-bit RGB/RGBA non-interlaced PNG: (width, height, rows of bytes, channels)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = prev[i]
            ul = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + left) & 0xFF
            elif f == 2:
                line[i] = (line[i] + up) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif f == 4:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else ul)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows, channels


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_report_renders_in_headless_chromium(tmp_path):
    records, _ = corpus()
    path = write_jsonl(tmp_path / "in.jsonl", records)
    out = tmp_path / "out"
    run(["dedup", path, "--out", out, "--quiet", "-k", "12"], check=0)
    png = tmp_path / "report.png"
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", f"--screenshot={png}",
             "--window-size=1280,2000", (out / "report.html").as_uri()],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert png.exists(), proc.stderr.decode(errors="replace")[-2000:]
    assert 10_000 < png.stat().st_size < 20_000_000
    width, height, rows, channels = png_pixels(png.read_bytes())
    assert (width, height) == (1280, 2000)
    colours = set()
    for row in rows[::7]:
        for x in range(0, len(row), channels * 5):
            colours.add(row[x:x + 3])
    # Text, two charts, highlighted differences: a blank or error page has a handful.
    assert len(colours) > 50, len(colours)
    # The charts' bar colours are on the page.
    assert any(abs(c[0] - 0x4a) < 8 and abs(c[1] - 0x7b) < 8 and abs(c[2] - 0xd0) < 8
               for c in colours)
