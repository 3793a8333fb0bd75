#!/usr/bin/python3
"""Checks that every C++ file includes only the headers its room may see (docs/architecture.md).

The component table in docs/architecture.md is the one source: for each component its public
headers (include/simdup/), the internal headers it shares with the components that depend on
it, and the components it may depend on. From it:

- a component (src/<c>/) includes its own headers, the public headers of the components it may
  depend on and their shared internal headers; a public header (include/simdup/) includes only
  the public headers its owner may see;
- adapters (cli/, python/src/, examples/) include include/simdup and their own directory only;
- unit tests (tests/unit/<c>/) see the private headers of <c> and of the components <c> may
  depend on; bench/ and fuzz/ drive private kernels and parsers and see everything;
- every public header has exactly one owner, and each src/<c>/CMakeLists.txt declares
  simdup_add_component(<c> DEPENDS ...) with exactly the table's dependencies;
- the umbrella include/simdup/simdup.hpp is the library: it includes every public header but
  those of the components in OUTSIDE_UMBRELLA (the HTTP service, included on its own).

Usage: check_includes.py [--root DIR]. Prints one line per violation; exit status 1 if any.
"""

import argparse
import os
import re
import subprocess
import sys

ADAPTERS = ("cli/", "python/src/", "examples/")
TOOLS = ("bench/", "fuzz/", "tests/unit/support/")
UMBRELLA = "simdup.hpp"  # the library's public headers; for programs, not for the library itself
OUTSIDE_UMBRELLA = ("service",)  # components whose public headers the umbrella leaves out
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cpp.in")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)


class Component:
    def __init__(self, name, public, shared, depends):
        self.name = name
        self.public = public  # file names in include/simdup
        self.shared = shared  # "<name>/<file>" under src/
        self.depends = depends  # component names


def split_cell(cell):
    """`a.hpp`, `b.hpp` (notes) -> ["a.hpp", "b.hpp"]: the backquoted names of a table cell."""
    return re.findall(r"`([^`]+)`", cell)


def read_components(root):
    """The component table of docs/architecture.md, in its (dependency) order."""
    path = os.path.join(root, "docs", "architecture.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = "| component | owns | public headers | shared with dependents | may depend on |"
    if header not in lines:
        sys.exit(f"{path}: no component table starting with {header!r}")
    components = {}
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = cells[0]
        components[name] = Component(
            name, split_cell(cells[2]), split_cell(cells[3]), split_cell(cells[4])
        )
    return components


def list_files(root):
    if os.path.exists(os.path.join(root, ".git")):
        out = subprocess.run(
            ["git", "-C", root, "ls-files"], check=True, capture_output=True, text=True
        ).stdout
        files = out.splitlines()
    else:
        files = []
        for dirpath, _, names in os.walk(root):
            for n in names:
                files.append(os.path.relpath(os.path.join(dirpath, n), root))
    return sorted(f for f in files if f.endswith(SOURCE_SUFFIXES))


def room_of(path, owner):
    """('component', c) | ('adapter', dir) | ('test', c) | ('tool', None) | None (unchecked)."""
    parts = path.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return ("component", parts[1])
    if path.startswith("include/simdup/"):
        name = parts[-1]
        return ("adapter", "include/simdup/") if name == UMBRELLA else ("component", owner.get(name))
    for a in ADAPTERS:
        if path.startswith(a):
            return ("adapter", os.path.dirname(path) + "/")
    for t in TOOLS:
        if path.startswith(t):
            return ("tool", None)
    if parts[0] == "tests" and parts[1] == "unit" and len(parts) > 3:
        return ("test", parts[2])
    return None


def check(root):
    components = read_components(root)
    problems = []
    owner = {}
    for c in components.values():
        for h in c.public:
            if h in owner:
                problems.append(f"docs/architecture.md: {h} is owned by both {owner[h]} and {c.name}")
            owner[h] = c.name
            if not os.path.exists(os.path.join(root, "include", "simdup", h)):
                problems.append(f"docs/architecture.md: {c.name} lists include/simdup/{h}, which is missing")
        for h in c.shared:
            if not h.startswith(c.name + "/") or not os.path.exists(os.path.join(root, "src", h)):
                problems.append(f"docs/architecture.md: {c.name} shares src/{h}, not a header of its own")
        for d in c.depends:
            if d not in components and d != "the standard library":
                problems.append(f"docs/architecture.md: {c.name} depends on unknown component {d}")
    public_dir = os.path.join(root, "include", "simdup")
    for h in sorted(os.listdir(public_dir)):
        if h != UMBRELLA and h not in owner:
            problems.append(f"include/simdup/{h}: no component lists it in docs/architecture.md")

    with open(os.path.join(public_dir, UMBRELLA), encoding="utf-8") as f:
        umbrella = {m.group(2)[len("simdup/") :] for m in INCLUDE_RE.finditer(f.read())
                    if m.group(2).startswith("simdup/")}
    for h in sorted(owner):
        inside = owner[h] not in OUTSIDE_UMBRELLA
        if inside and h not in umbrella:
            problems.append(f"include/simdup/{UMBRELLA}: does not include simdup/{h}")
        elif not inside and h in umbrella:
            problems.append(
                f"include/simdup/{UMBRELLA}: includes simdup/{h}, a header of {owner[h]}, which "
                "is included on its own"
            )

    def sees_private(room, header):
        """May `room` include the internal header src/<header>?"""
        kind, name = room
        comp = header.split("/")[0]
        if kind == "tool":
            return True
        if kind == "test":
            return comp == name or comp in components[name].depends
        if kind == "component":
            if comp == name:
                return True
            return comp in components[name].depends and header in components[comp].shared
        return False

    def sees_public(room, header):
        kind, name = room
        if kind != "component":
            return True
        if header == UMBRELLA:
            return False
        return owner.get(header) in [name] + components[name].depends

    for path in list_files(root):
        room = room_of(path, owner)
        if room is None:
            continue
        if room[0] == "component" and room[1] not in components:
            problems.append(f"{path}: not in a component of docs/architecture.md")
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in INCLUDE_RE.finditer(text):
            bracket, target = m.group(1), m.group(2)
            line = text.count("\n", 0, m.start()) + 1
            where = f"{path}:{line}: {target}"
            if target.startswith("simdup/"):
                header = target[len("simdup/") :]
                if header != UMBRELLA and header not in owner:
                    problems.append(f"{where}: not a public header")
                elif not sees_public(room, header):
                    problems.append(
                        f"{where}: public header of {owner.get(header, 'the umbrella')}, "
                        f"which {room[1]} may not depend on"
                    )
                continue
            if bracket == "<":
                continue  # the standard library and third-party headers
            local = os.path.normpath(os.path.join(os.path.dirname(path), target))
            if os.path.exists(os.path.join(root, local)):
                inside = room[0] != "component" or local.startswith(f"src/{room[1]}/")
                if room[0] == "adapter" and not local.startswith(room[1]):
                    inside = False
                if not inside:
                    problems.append(f"{where}: outside {room[1]}")
                continue
            if os.path.exists(os.path.join(root, "src", target)):
                if not sees_private(room, target):
                    rule = {
                        "adapter": "adapters include include/simdup only",
                        "test": f"tests/unit/{room[1]} sees {room[1]} and its dependencies",
                        "component": f"not shared with {room[1]}",
                    }[room[0]]
                    problems.append(f"{where}: private to {target.split('/')[0]} ({rule})")

    declare = re.compile(r"simdup_add_component\(\s*(\w+)([^)]*)\)")
    for c in components.values():
        path = f"src/{c.name}/CMakeLists.txt"
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                m = declare.search(f.read())
        except FileNotFoundError:
            m = None
        if not m or m.group(1) != c.name:
            problems.append(f"{path}: no simdup_add_component({c.name} ...)")
            continue
        words = m.group(2).split() + ["SOURCES"]
        declared = words[1 : words.index("SOURCES")] if words[0] == "DEPENDS" else []
        wanted = [d for d in c.depends if d in components]
        if sorted(declared) != sorted(wanted):
            problems.append(
                f"{path}: DEPENDS {' '.join(declared) or '(none)'}, "
                f"docs/architecture.md says {' '.join(wanted) or '(none)'}"
            )
    return problems


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=here, help="repository root (default: this checkout)")
    args = parser.parse_args()
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include rule violation(s); the rules: docs/architecture.md")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
