"""docs/service.md's option table says what `simdup serve --help` and the service do: every
option is listed, with the default the binary has (issue 36, item 2: the table said --k 8)."""

import re

from cli_harness import SOURCE_DIR, run
from service_harness import Server

DOC = SOURCE_DIR / "docs" / "service.md"
# | `--k` | 4 | meaning |   or   | `--data DIR` | (required for rocksdb) | ... |
ROW = re.compile(r"^\| `(--[a-z-]+)[^`]*` \|\s*([^|]*?)\s*\|")
# "  --k INT:0..32=4   Default ..." (CLI11: name, type, optional range, =default)
HELP = re.compile(r"^\s+(--[a-z-]+) [A-Z]+(?::\S+?)?(?:=(\S+))?(?:\s|$)")
# Defaults the table gives in words, and what --help shows for them (None: no default).
IN_WORDS = {
    "(required for rocksdb)": None,
    "8 MiB": str(8 << 20),
    "usable cores (RocksDB), 4 × usable cores (Redis)": "0",
}


def doc_table():
    """{option: default as --help would show it} from the table after the synopsis."""
    table = {}
    for line in DOC.read_text(encoding="utf-8").split("\n## ", 1)[0].splitlines():
        m = ROW.match(line)
        if m:
            text = m.group(2).strip()
            table[m.group(1)] = IN_WORDS[text] if text in IN_WORDS else (text.strip("`") or None)
    return table


# Options whose value's name has an "=" in it, which is not a default.
VALUE_NAMES_WITH_EQUALS = {"--import": "COLLECTION=DIR"}


def help_defaults():
    out = run(["serve", "--help"], check=0).stdout.decode()
    found = {}
    for line in out.splitlines():
        m = HELP.match(line)
        if m and m.group(1) != "--help":
            named = VALUE_NAMES_WITH_EQUALS.get(m.group(1))
            found[m.group(1)] = None if named and named in line else m.group(2)
    return found


def test_every_option_and_default_in_the_table_is_the_binarys():
    table, shown = doc_table(), help_defaults()
    assert "--k" in shown and len(shown) > 10, shown
    assert sorted(table) == sorted(shown)
    assert {o: table[o] for o in shown} == shown


def test_synopsis_values_are_the_defaults():
    synopsis = DOC.read_text(encoding="utf-8").split("```text\n", 1)[1].split("```", 1)[0]
    shown = help_defaults()
    given = re.findall(r"\[(--[a-z-]+) ([^\]|A-Z][^\] |]*)\]", synopsis)
    assert ("--k", "4") in given
    for option, value in given:
        assert shown[option] == value, (option, value)


def test_a_collection_created_without_settings_gets_the_documented_defaults(tmp_path):
    s = Server(["--data", str(tmp_path / "db")])
    try:
        c = s.client()
        status, body = c.request("PUT", "/v1/plain", {})
        assert status == 200
        assert (body["k"], body["window_s"], body["verify"]) == (4, 7 * 24 * 3600, "jaccard:0.8")
        c.close()
    finally:
        s.close()
