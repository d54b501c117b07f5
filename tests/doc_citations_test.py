#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Docs that cannot drift:
#   1. every source path cited in docs/*.md and README.md (a `path/with/a/slash.ext` in backticks) exists;
#   2. every path of the tree cited in a source file, header, script or build file (a `folder/...` beginning with
#      one of the tree's top-level folders, in a comment or anywhere else) exists, as a file, a folder, or a
#      file's stem (`core/snapshot_writer` for its .h/.cc);
#   3. every section cited as `docs/<name>.md §N` (or `NAME.md §N.M`), in docs and in sources, is a heading of that
#      document (`## N.` or `### N.M`);
#   4. every test cited in docs/threat-model.md as `file_test.cc` — `Suite.Name` is defined in that file
#      (TEST/TEST_F/TEST_P(Suite, Name); `Suite.*` needs the suite).
# A moved file, a renumbered section or a renamed test fails here with the file, line and citation, instead of
# leaving a citation that points nowhere.
import os
import re
import subprocess
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

# ---- 2. paths cited in the tree's own files --------------------------------------------------------------------
TOP = ("bench", "client", "cmake", "core", "daemon", "debian", "demo", "docs", "feeds", "fixtures", "format", "fuzz",
       "http", "include", "man", "node", "packaging", "pg", "platform", "publish", "python", "scripts", "server",
       "signing", "sync", "tests", "tools")
TREE_PATH = re.compile(r"(?<![\w./-])((?:%s)/[A-Za-z0-9_./-]*[A-Za-z0-9_])" % "|".join(TOP))
SOURCE_KINDS = re.compile(r"(\.(cc|h|c|py|pyi|sh|js|mjs|cmake|in)|CMakeLists\.txt|/rules)$")
# `feeds/NAME.txt`, `feeds/NAME.meta` and the like are a repository's feed state (docs/feeds-file.md §5), not the
# feeds/ folder of the tree: a feeds/ citation is a source path only when it names a source file.
RUNTIME_FEEDS = re.compile(r"^feeds/(?!.*\.(h|cc)$)")


def exists_in_tree(path, citing):
    path = path.rstrip(".")
    # Relative to the root, to include/ (a public header as it is included), or to the citing file's top folder
    # (python/CMakeLists.txt names its own cmake/ folder).
    for base in ("", "include/", citing.split("/", 1)[0] + "/" if "/" in citing else ""):
        if os.path.exists(base + path):
            return True
        if any(os.path.exists(base + path + ext) for ext in (".h", ".cc", ".py", ".sh", ".md")):
            return True
    return False


def comments(source, lines):
    """The comment text of each line: what follows // in C-family files, # elsewhere (code is checked by the
    compiler and the tests that run it; citations live in comments)."""
    marker = "//" if re.search(r"\.(cc|h|c|js|mjs)$", source) else "#"
    for number, line in enumerate(lines, 1):
        at = line.find(marker)
        if marker == "#" and at >= 0 and line[:at].rstrip().endswith("$"):
            at = line.find(marker, at + 1)  # $# in shell is not a comment
        if at >= 0:
            yield number, line[at:]


tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=False).stdout.split()
if not tracked:  # not a git checkout (an unpacked release): walk the tree instead
    tracked = [os.path.relpath(os.path.join(d, f)) for d, _, fs in os.walk(".") if "/build" not in d
               and "/." not in d for f in fs]
sources = [p for p in tracked if SOURCE_KINDS.search(p) and not p.startswith("fixtures/")]
checked_sources = 0
for source in sources:
    try:
        with open(source, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (UnicodeDecodeError, FileNotFoundError):
        continue
    checked_sources += 1
    for number, line in comments(source, lines):
        for m in TREE_PATH.finditer(line):
            path = m.group(1)
            if line[m.end():m.end() + 1] in ("*", "\\") or RUNTIME_FEEDS.match(path):
                continue
            if not exists_in_tree(path, source):
                failures.append(f"{source}:{number}: cites {path}, which does not exist")

# ---- 3. sections ------------------------------------------------------------------------------------------------
SECTION = re.compile(r"((?:docs/)?[a-z0-9_-]+\.md),?\s*§\s*(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s", re.M)
headings = {}
for name in os.listdir("docs"):
    if name.endswith(".md"):
        with open("docs/" + name, encoding="utf-8") as f:
            headings[name] = set(HEADING.findall(f.read()))
checked_sections = 0
for source in sources + docs:
    try:
        with open(source, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (UnicodeDecodeError, FileNotFoundError):
        continue
    for number, line in enumerate(lines, 1):
        for m in SECTION.finditer(line):
            doc_name = os.path.basename(m.group(1))
            if doc_name not in headings:
                if m.group(1).startswith("docs/") or doc_name != "README.md":
                    failures.append(f"{source}:{number}: cites {m.group(1)} §{m.group(2)}, and there is no "
                                    f"docs/{doc_name}")
                continue
            checked_sections += 1
            if m.group(2) not in headings[doc_name]:
                failures.append(f"{source}:{number}: cites docs/{doc_name} §{m.group(2)}, which is not a heading "
                                f"of it")

if checked_sources < 100 or checked_sections < 20:
    failures.append(f"only {checked_sources} sources and {checked_sections} section citations checked: "
                    f"has the tree's shape changed?")

for failure in failures:
    print(failure)
print(f"doc citations: {len(failures)} broken in {len(docs)} documents, {checked_sources} sources, "
      f"{checked_sections} section citations")
sys.exit(1 if failures else 0)
