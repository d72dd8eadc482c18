#!/usr/bin/env python3
"""How much of the scenario catalog is repeated text.

Counts the expression and pattern lines (40+ characters, comments and spec
quotes left out) that occur in at least MIN_FILES scenario files, and prints
the most copied ones. A rule stated in many files is a rule that changes in
many places: move it into a CEL helper or a probe fact (scenarios/README.md).

usage: scripts/scenario-repeats.py [SCENARIO_DIR] [--min-files N] [--top N]
"""
import argparse
import collections
import pathlib


def lines_of(path):
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = " ".join(raw.split())
        if len(line) < 40 or line.startswith("#"):
            continue
        if line.startswith(("quote:", "- quote:", "title:", "reason:", "message:", "section:")):
            continue  # citations and explanations are text, not rules
        yield line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?", default="scenarios")
    ap.add_argument("--min-files", type=int, default=5)
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    files = sorted(pathlib.Path(args.dir).rglob("*.yaml"))
    seen = collections.defaultdict(set)
    for f in files:
        for line in lines_of(f):
            seen[line].add(f)
    repeated = {l: fs for l, fs in seen.items() if len(fs) >= args.min_files}
    copies = sum(len(fs) for fs in repeated.values())
    print(f"{len(files)} scenario files; {len(repeated)} rule lines in >= {args.min_files} files, "
          f"{copies} copies in all")
    for line, fs in sorted(repeated.items(), key=lambda kv: -len(kv[1]))[: args.top]:
        print(f"{len(fs):4}  {line[:110]}")


if __name__ == "__main__":
    main()
