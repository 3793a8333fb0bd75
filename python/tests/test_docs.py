"""Every ```python example of docs/python.md runs, in order, in one namespace."""

import os
import re

from conftest import SOURCE_DIR


def test_examples_run(capsys):
    text = (SOURCE_DIR / "docs" / "python.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 6
    namespace = {}
    cwd = os.getcwd()
    os.chdir(SOURCE_DIR)  # the examples name data/sample/news.jsonl
    try:
        for i, block in enumerate(blocks):
            exec(compile(block, f"docs/python.md example {i + 1}", "exec"), namespace)
    finally:
        os.chdir(cwd)
