#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layer table of docs/architecture.md §1 and the build agree.

Reads the table (folder in column 2, the folders it uses in column 4) and checks that
  1. every production source of a folder (not *_test.cc, *_fuzz.cc, *_bench.cc) includes internal headers only
     from itself and the folders its row names (the public headers, include/urlguard/, are allowed everywhere);
  2. each folder's urlguard_folder(...) line in CMakeLists.txt links exactly the folders its row names;
  3. the "uses" relation has no cycle, and every folder with production sources has a row.

usage: layer_check_test.py SOURCE_DIR
Prints every violation (file, line, what it includes, what the row allows) and exits 1 when there is one.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)
FOLDER_CELL = re.compile(r'^`([a-z_]+)/`$')
USES_FOLDER = re.compile(r'`([a-z_]+)/`')
CMAKE_FOLDER = re.compile(r'urlguard_folder\(\s*urlguard_([a-z_]+)\s+([a-z_]+)\s+([^)]*)\)', re.S)
# Folders that hold no layer code: the tests and tools of the whole tree, and the bindings (public API only, checked
# by tests/public_headers_only_test.sh).
NOT_LAYERS = {"tests", "tools", "demo", "fuzz", "bench", "python", "node", "include", "build", "docs", "fixtures",
              "man", "debian", "packaging", "scripts", "cmake"}


def read_table(src):
    text = open(os.path.join(src, "docs", "architecture.md"), encoding="utf-8").read()
    section = text.split("## 1. Layers", 1)[1].split("\n## 2.", 1)[0]
    uses = {}
    for line in section.splitlines():
        if not line.startswith("| "):
            continue
        # Split on unescaped pipes (the table escapes the one inside `O_EXCL\|O_NOFOLLOW`).
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 4:
            continue
        m = FOLDER_CELL.match(cells[1])
        if not m or m.group(1) == "include":
            continue
        uses[m.group(1)] = set(USES_FOLDER.findall(cells[3]))
    return uses


def production_sources(src, folder):
    for name in sorted(os.listdir(os.path.join(src, folder))):
        if not (name.endswith(".cc") or name.endswith(".h")):
            continue
        if re.search(r"_(test|fuzz|bench)\.cc$", name) or name.endswith("_test_util.h"):
            continue
        yield os.path.join(folder, name)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    uses = read_table(src)
    errors = []
    if len(uses) < 10:
        errors.append(f"docs/architecture.md §1: only {len(uses)} folder rows parsed; has the table's shape changed?")

    # 1. includes
    checked_includes = 0
    for folder, allowed in sorted(uses.items()):
        if not os.path.isdir(os.path.join(src, folder)):
            if folder not in ("tools", "demo"):
                errors.append(f"docs/architecture.md §1 names {folder}/, which does not exist")
            continue
        if folder in ("tools", "demo"):
            continue
        for path in production_sources(src, folder):
            text = open(os.path.join(src, path), encoding="utf-8").read()
            for m in INCLUDE.finditer(text):
                target = m.group(1)
                checked_includes += 1
                if target in (folder, "urlguard") or target in allowed:
                    continue
                line = text.count("\n", 0, m.start()) + 1
                errors.append(f"{path}:{line}: includes {target}/, but {folder}/ may use only "
                              f"{', '.join(sorted(allowed)) or 'nothing'} (docs/architecture.md §1)")
    if checked_includes == 0:
        errors.append("no include was checked: is SOURCE_DIR right?")

    # Every folder with production C++ sources has a row.
    for entry in sorted(os.listdir(src)):
        if entry in NOT_LAYERS or entry.startswith(".") or not os.path.isdir(os.path.join(src, entry)):
            continue
        if any(True for _ in production_sources(src, entry)) and entry not in uses:
            errors.append(f"{entry}/ holds library sources but has no row in docs/architecture.md §1")

    # 2. CMake dependencies
    cmake = open(os.path.join(src, "CMakeLists.txt"), encoding="utf-8").read()
    cmake = re.sub(r"#[^\n]*", "", cmake)
    declared = {}
    for m in CMAKE_FOLDER.finditer(cmake):
        target, folder, deps = m.groups()
        if target != folder:
            errors.append(f"CMakeLists.txt: urlguard_{target} builds {folder}/; a folder's target is urlguard_<folder>")
        declared[folder] = {d[len("urlguard_"):] for d in deps.split() if d.startswith("urlguard_")}
    for folder, allowed in sorted(uses.items()):
        if folder in ("tools", "demo"):
            continue
        if folder not in declared:
            errors.append(f"CMakeLists.txt: no urlguard_folder(urlguard_{folder} {folder} ...) line")
            continue
        if declared[folder] != allowed:
            errors.append(f"CMakeLists.txt links {folder}/ with {sorted(declared[folder])}, "
                          f"docs/architecture.md §1 says {sorted(allowed)}")
    for folder in sorted(set(declared) - set(uses)):
        errors.append(f"CMakeLists.txt builds {folder}/, which has no row in docs/architecture.md §1")

    # 3. no cycle
    state = {}

    def visit(folder, path):
        if state.get(folder) == "done":
            return
        if state.get(folder) == "open":
            errors.append("cycle: " + " -> ".join(path + [folder]))
            return
        state[folder] = "open"
        for dep in sorted(uses.get(folder, ())):
            visit(dep, path + [folder])
        state[folder] = "done"

    for folder in sorted(uses):
        visit(folder, [])

    for e in errors:
        print("FAIL:", e)
    if errors:
        return 1
    print(f"layer check: {len(uses)} folders, {checked_includes} internal includes, "
          f"{len(declared)} CMake targets agree with docs/architecture.md §1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
