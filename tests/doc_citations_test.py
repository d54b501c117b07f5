#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Docs that cannot drift: every source path cited in docs/*.md and README.md (a `path/with/a/slash.ext` in
# backticks) must exist in the tree, and every test cited in docs/threat-model.md as `file_test.cc` — `Suite.Name`
# must be defined in that file (TEST/TEST_F/TEST_P(Suite, Name); `Suite.*` needs the suite). A moved file or a
# renamed test fails here with the doc, line and citation, instead of leaving a citation that points nowhere.
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
os.chdir(ROOT)

# Paths are read relative to the repository root; these bases are also tried for citations written relative to
# the folder the surrounding text names (a public header as it is included; a file inside a fleet or node dir).
BASES = ["", "include/", "node/"]
# Citations of files that only exist at run time (in a data directory, a repository or a fleet directory).
RUNTIME_PREFIXES = ("D/", "REPO/", "DIR/", "/", "build", "feeds/", "private/", "public/", "lists/", "log/")
CITED_PATH = re.compile(r"`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+\.(?:cc|h|c|py|pyi|sh|js|mjs|cmake|md|txt|conf))`")
TEST_FILE = re.compile(r"[\w/.-]+_test\.cc")
TEST_NAME = re.compile(r"\w+\.[\w*]+")

failures = []
docs = sorted("docs/" + f for f in os.listdir("docs") if f.endswith(".md")) + ["README.md"]
for doc in docs:
    with open(doc, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        for m in CITED_PATH.finditer(line):
            path = m.group(1)
            if path.startswith(RUNTIME_PREFIXES):
                continue
            if not any(os.path.exists(base + path) for base in BASES):
                failures.append(f"{doc}:{number}: cites {path}, which does not exist")
        if doc != "docs/threat-model.md":
            continue
        current = None  # the test file the next `Suite.Name` citations belong to
        for tok in re.finditer(r"`([^`]+)`", line):
            text = tok.group(1)
            if TEST_FILE.fullmatch(text):
                current = text if os.path.exists(text) else None
            elif current and TEST_NAME.fullmatch(text):
                suite, name = text.split(".", 1)
                with open(current, encoding="utf-8") as f:
                    source = f.read()
                if name == "*":
                    found = re.search(r"TEST(?:_F|_P)?\(\s*%s\s*," % re.escape(suite), source)
                else:
                    found = re.search(r"TEST(?:_F|_P)?\(\s*%s\s*,\s*%s\s*\)" % (re.escape(suite), re.escape(name)),
                                      source)
                if not found:
                    failures.append(f"{doc}:{number}: cites {current} — {text}, which that file does not define")

for failure in failures:
    print(failure)
print(f"doc citations: {len(failures)} broken in {len(docs)} documents")
sys.exit(1 if failures else 0)
