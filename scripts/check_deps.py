#!/usr/bin/python3
"""Proves that scripts/install-deps.sh installs everything the build and the tests use.

Collects every system file the build touched and every third-party Python module the tests and
the Python package import, maps each to the Debian package that owns it (dpkg's file lists, with
`dpkg -S` as the fallback) and fails, naming the file and the package, when that package is
neither listed in install-deps.sh, nor pulled in by a listed package (its Depends closure), nor
part of the base system (see BASE_PACKAGES). A file no Debian package owns passes only when it
lies in a directory install-deps.sh fills from npm (its npm_packages array) and that directory's
SIMDUP-NPM manifest names the same packages and integrities.

What counts as used:
  - headers: the compiler's dependency files, read back through `ninja -t deps`;
  - libraries: every library on a link line (`ninja -t commands`: absolute paths and -l names);
  - CMake look-ups: every FILEPATH in the cache (find_library, find_program, compilers, tools),
    each file a find_path call names (its directory from the cache, the file from the call), and
    each package configuration found by find_package (<Name>_DIR);
  - programs the project's Python looks up with shutil.which("name");
  - Python: top-level modules imported by tests/, python/, eval/ and scripts/ that are neither
    standard library nor the project's own, resolved with /usr/bin/python3.

Usage: check_deps.py BUILD_DIR [--install-script FILE] [--verbose]
Exit 0 when every dependency is accounted for, 1 with a list of the unlisted ones, 2 on misuse.
"""

import argparse
import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

# Packages every Debian build machine has before install-deps.sh runs, with the reason they are
# not listed there. Packages marked Essential or Priority: required count as base too.
BASE_PACKAGES = {
    "libc6": "the C library; Essential in practice, every binary links it",
    "libgcc-s1": "GCC's runtime, a dependency of libc6 and libstdc++6",
    "libstdc++6": "the C++ runtime of the base toolchain",
    "python3-minimal": "Debian's /usr/bin/python3 itself",
    "libpython3.11-minimal": "the Python standard library's core modules",
    "libpython3.11-stdlib": "the Python standard library",
}

PROJECT_DIRS_FOR_PYTHON = ("tests", "python", "eval", "scripts", "bench")
SYSTEM_PREFIXES = ("/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/", "/etc/", "/opt/")


def listed_packages(install_script: Path) -> set[str]:
    """The packages named in install-deps.sh's `packages=( ... )` array (comments stripped)."""
    text = install_script.read_text()
    match = re.search(r"^packages=\((.*?)^\)", text, re.S | re.M)
    if not match:
        sys.exit(f"check-deps: error: no packages=( ... ) array in {install_script}")
    names = set()
    for line in match.group(1).splitlines():
        names.update(line.split("#", 1)[0].split())
    return names


def npm_installs(install_script: Path) -> dict[str, set[str]]:
    """install-deps.sh's `npm_packages=( ... )` lines: target directory -> "spec integrity" set.

    Files under such a directory count as installed by the script when the directory's
    SIMDUP-NPM manifest (written by install-deps.sh) names exactly those packages."""
    match = re.search(r"^npm_packages=\((.*?)^\)", install_script.read_text(), re.S | re.M)
    targets: dict[str, set[str]] = {}
    for line in match.group(1).splitlines() if match else []:
        words = line.split("#", 1)[0].strip().strip('"').split()
        if len(words) >= 3:
            targets.setdefault(words[2].rstrip("/"), set()).add(f"{words[0]} {words[1]}")
    return targets


def npm_owner(path: str, targets: dict[str, set[str]]) -> str | None:
    """The npm packages that installed `path`, when it lies under an install-deps.sh target whose
    manifest matches the script; None otherwise."""
    for target, specs in targets.items():
        if not os.path.realpath(path).startswith(os.path.realpath(target) + "/"):
            continue
        manifest = Path(target) / "SIMDUP-NPM"
        if manifest.is_file() and set(manifest.read_text().split("\n")) - {""} == specs:
            return ", ".join(sorted(s.split()[0] for s in specs))
    return None


class Dpkg:
    """File-to-package map and dependency closure from dpkg's own database."""

    def __init__(self) -> None:
        self.owner: dict[str, str] = {}
        info = Path("/var/lib/dpkg/info")
        for lst in info.glob("*.list"):
            pkg = lst.stem.split(":", 1)[0]
            for line in lst.read_text(errors="replace").splitlines():
                self.owner.setdefault(line, pkg)
        self.depends: dict[str, set[str]] = {}
        self.provides: dict[str, set[str]] = {}
        self.base: set[str] = set(BASE_PACKAGES)
        self._read_status()

    def _read_status(self) -> None:
        text = Path("/var/lib/dpkg/status").read_text(errors="replace")
        for stanza in text.split("\n\n"):
            fields = dict(re.findall(r"^([A-Za-z-]+): ?(.*)$", stanza, re.M))
            pkg = fields.get("Package")
            if not pkg or "installed" not in fields.get("Status", "").split():
                continue
            deps = set()
            for key in ("Depends", "Pre-Depends"):
                for clause in fields.get(key, "").split(","):
                    for alt in clause.split("|"):
                        name = alt.strip().split(" ")[0].split(":")[0]
                        if name:
                            deps.add(name)
            self.depends[pkg] = deps
            for prov in fields.get("Provides", "").split(","):
                name = prov.strip().split(" ")[0]
                if name:
                    self.provides.setdefault(name, set()).add(pkg)
            if fields.get("Essential") == "yes" or fields.get("Priority") == "required":
                self.base.add(pkg)

    def closure(self, roots: set[str]) -> dict[str, str]:
        """Every installed package reachable from roots, mapped to the listed root that pulls it in."""
        via: dict[str, str] = {}
        for root in sorted(roots):
            stack = [root]
            while stack:
                pkg = stack.pop()
                for real in {pkg} | self.provides.get(pkg, set()):
                    if real in via or real not in self.depends:
                        continue
                    via[real] = root
                    stack.extend(self.depends[real])
        return via

    def package_of(self, path: str) -> str | None:
        candidates = [path, os.path.realpath(path)]
        for p in list(candidates):  # merged /usr: dpkg may list /lib/... for /usr/lib/...
            if p.startswith("/usr/lib/") or p.startswith("/usr/bin/") or p.startswith("/usr/sbin/"):
                candidates.append(p[len("/usr"):])
        for p in candidates:
            if p in self.owner:
                return self.owner[p]
        for p in candidates:
            out = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
            if out.returncode == 0:
                return out.stdout.split(":", 1)[0].split(",")[0].strip()
        return None


def ninja(build: Path, *args: str) -> str:
    return subprocess.run(["ninja", "-C", str(build), *args], capture_output=True, text=True,
                          check=True).stdout


def header_files(build: Path) -> set[str]:
    files = set()
    for line in ninja(build, "-t", "deps").splitlines():
        if line.startswith("    "):
            files.add(line.strip())
    return files


def library_files(build: Path) -> set[str]:
    """Libraries on every link line: absolute archive/shared paths and resolved -l names."""
    files = set()
    for cmd in ninja(build, "-t", "commands").splitlines():
        if " -o " not in cmd or (" -c " in cmd and "-Wl," not in cmd):
            continue
        try:
            words = shlex.split(cmd)
        except ValueError:
            continue
        search = [w[2:] for w in words if w.startswith("-L")]
        search += ["/usr/lib/x86_64-linux-gnu", "/usr/lib", "/lib/x86_64-linux-gnu"]
        for w in words:
            if re.search(r"\.(so(\.\d+)*|a)$", w) and w.startswith("/"):
                files.add(w)
            elif w.startswith("-l") and len(w) > 2:
                for d in search:
                    hit = next((f"{d}/lib{w[2:]}{ext}" for ext in (".so", ".a")
                                if os.path.exists(f"{d}/lib{w[2:]}{ext}")), None)
                    if hit:
                        files.add(hit)
                        break
    return files


def cmake_lookups(build: Path, source: Path) -> set[str]:
    cache = {}
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+):(FILEPATH|PATH)=(.*)$", line)
        if m:
            cache[m.group(1)] = (m.group(2), m.group(3))
    files = set()
    for name, (kind, value) in cache.items():
        if not value.startswith(SYSTEM_PREFIXES):
            continue
        if kind == "FILEPATH" and os.path.isfile(value):
            files.add(value)
        elif kind == "PATH" and name.endswith("_DIR") and os.path.isdir(value):
            configs = [f for f in os.listdir(value)
                       if f.lower().endswith(("config.cmake", "-config.cmake"))]
            files.update(f"{value}/{f}" for f in configs)
    # find_path(VAR name ...) in the project's CMake files: the named file in the found directory.
    cmake_files = [source / "CMakeLists.txt", *source.glob("cmake/*.cmake"),
                   *source.glob("*/CMakeLists.txt"), *source.glob("*/*/CMakeLists.txt")]
    for cf in cmake_files:
        for var, names in re.findall(r"find_path\(\s*(\w+)\s+(?:NAMES\s+)?([^\s)]+)", cf.read_text()):
            if var in cache and os.path.isfile(f"{cache[var][1]}/{names}"):
                files.add(f"{cache[var][1]}/{names}")
    return files


def python_modules(source: Path) -> dict[str, str]:
    """Third-party top-level modules imported anywhere in the project's Python, with one importer."""
    local = set()
    for d in PROJECT_DIRS_FOR_PYTHON:
        for p in (source / d).rglob("*.py") if (source / d).is_dir() else []:
            local.add(p.stem)
            local.update(part for part in p.relative_to(source / d).parts[:-1])
    modules: dict[str, str] = {}
    for d in PROJECT_DIRS_FOR_PYTHON:
        for p in sorted((source / d).rglob("*.py")) if (source / d).is_dir() else []:
            try:
                tree = ast.parse(p.read_text(), str(p))
            except SyntaxError as e:
                sys.exit(f"check-deps: error: cannot parse {p}: {e}")
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for n in names:
                    top = n.split(".")[0]
                    if top in sys.stdlib_module_names or top in local or top == "simdup":
                        continue
                    modules.setdefault(top, str(p.relative_to(source)))
    return modules


def test_programs(source: Path) -> dict[str, str]:
    """Programs the project's Python looks up with shutil.which("name"), resolved on PATH."""
    found = {}
    for d in PROJECT_DIRS_FOR_PYTHON:
        for p in sorted((source / d).rglob("*.py")) if (source / d).is_dir() else []:
            for name in re.findall(r"which\(\s*[\"']([\w.+-]+)[\"']", p.read_text()):
                path = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
                if path:
                    found.setdefault(path, f"program '{name}' (looked up by {p.relative_to(source)})")
    return found


def module_files(modules: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Each module's file as /usr/bin/python3 sees it; modules it cannot import are problems."""
    code = ("import importlib.util, sys\n"
            "for m in sys.argv[1:]:\n"
            "    s = importlib.util.find_spec(m)\n"
            "    print(m, s.origin if s and s.origin else '-')\n")
    out = subprocess.run(["/usr/bin/python3", "-c", code, *sorted(modules)], capture_output=True,
                         text=True, check=True).stdout
    files, missing = {}, []
    for line in out.splitlines():
        name, origin = line.split(" ", 1)
        if origin == "-":
            missing.append(f"Python module '{name}' (imported by {modules[name]}) is not "
                           "installed for /usr/bin/python3")
        else:
            files[origin] = f"Python module '{name}' (imported by {modules[name]})"
    return files, missing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--install-script", type=Path,
                    default=Path(__file__).resolve().parent / "install-deps.sh")
    ap.add_argument("--verbose", action="store_true", help="print every file and its package")
    args = ap.parse_args()
    source = Path(__file__).resolve().parent.parent
    if not (args.build_dir / "build.ninja").is_file():
        print(f"check-deps: error: {args.build_dir} is not a configured Ninja build directory",
              file=sys.stderr)
        return 2

    listed = listed_packages(args.install_script)
    npm_targets = npm_installs(args.install_script)
    dpkg = Dpkg()
    unknown = sorted(p for p in listed if p not in dpkg.depends)
    via = dpkg.closure(listed)

    used: dict[str, str] = {}
    for f in header_files(args.build_dir):
        used.setdefault(f, "header")
    for f in library_files(args.build_dir):
        used.setdefault(f, "library on a link line")
    for f in cmake_lookups(args.build_dir, source):
        used.setdefault(f, "CMake look-up")
    py_files, problems = module_files(python_modules(source))
    used.update(py_files)
    used.update(test_programs(source))
    problems += [f"{args.install_script.name} names '{p}', which is not installed" for p in unknown]

    checked = 0
    unlisted: dict[str, list[str]] = {}
    for path, what in sorted(used.items()):
        if not path.startswith(SYSTEM_PREFIXES):
            continue
        checked += 1
        pkg = dpkg.package_of(path)
        if pkg is None and (npm := npm_owner(path, npm_targets)):
            if args.verbose:
                print(f"  {path}: npm {npm} (install-deps.sh npm_packages)")
            continue
        if pkg is None:
            problems.append(f"{path} ({what}) belongs to no Debian package: installed by hand?")
        elif pkg in listed or pkg in dpkg.base:
            pass
        elif pkg in via:
            if args.verbose:
                print(f"  {path}: {pkg} (via {via[pkg]})")
            continue
        else:
            unlisted.setdefault(pkg, []).append(f"{path} ({what})")
        if args.verbose and pkg:
            print(f"  {path}: {pkg}")

    for pkg, files in sorted(unlisted.items()):
        more = f" and {len(files) - 1} more file(s)" if len(files) > 1 else ""
        problems.append(f"Debian package '{pkg}' is used but {args.install_script.name} does not "
                        f"list it (nor any listed package depends on it): {files[0]}{more}")
    if problems:
        print(f"check-deps: {len(problems)} unlisted dependenc{'y' if len(problems) == 1 else 'ies'}:",
              file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"check-deps: {checked} system files and {len(py_files)} Python modules, all from packages "
          f"that {args.install_script.name} installs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
