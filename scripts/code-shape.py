#!/usr/bin/env python3
"""The shape of the Rust sources: the longest files and functions, and the
cycles between modules.

Test code is left out: files named tests.rs, files under a tests/ folder, and
`#[cfg(test)]` items (a `mod tests { … }` at the end of a file). A function is
counted from its `fn` line to its closing brace. Module dependencies are the
`crate::…` and `super::…` paths the code names (in `use` and inline, inside
functions too); each crate is read on its own: a library (lib.rs and the
modules it declares) and a binary (main.rs and its modules, such as
src/cli/), and every crate of the workspace (crates/*/src). A cycle is a strongly connected
set of two or more modules: among top-level modules (src/X.rs, src/X/), and
among file modules.

usage: scripts/code-shape.py [SRC_DIR...] [--top N]
"""
import argparse
import pathlib
import re

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"C\"\s+)?fn\s+(\w+)")
CFG_TEST = re.compile(r"^\s*#\[cfg\(test\)\]")


def strip_literals(line, state):
    """The line without comments, string and char literals (their braces are
    not code), and the lexer state at its end: None, "block" (inside a
    block comment), or the closing delimiter of a string literal that goes
    on to the next line (`"` or `"#…`). Test modules are full of JSON in
    multi-line raw strings; without carrying the state across lines their
    braces ended a module early, and its tests counted as code."""
    out, i, n = [], 0, len(line)
    while i < n:
        if state == "block":
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), state
            i, state = end + 2, None
        elif state is not None:
            i, state = close_string(line, i, state)
            if state is None:
                out.append('""')
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            state, i = "block", i + 2
        elif m := re.match(r'b?r(#*)"', line[i:]):
            i, state = close_string(line, i + len(m.group(0)), '"' + m.group(1))
            if state is None:
                out.append('""')
        elif line[i] == '"' or line.startswith('b"', i):
            i, state = close_string(line, i + (2 if line[i] == "b" else 1), '"')
            if state is None:
                out.append('""')
        elif m := re.match(r"b?'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", line[i:]):
            i += len(m.group(0))
        else:
            out.append(line[i])
            i += 1
    return "".join(out), state


def close_string(line, i, closer):
    """Where a string literal that closes with `closer` ends on this line
    (the index after it, None), or (the line's end, closer) if it goes on.
    Escapes count in ordinary strings only."""
    raw = closer != '"'
    j = i
    while j < len(line):
        if not raw and line[j] == "\\":
            j += 2
        elif line.startswith(closer, j):
            return j + len(closer), None
        else:
            j += 1
    return len(line), closer


def code_lines(path):
    """(line number, code without literals) of a file's non-test code."""
    lines = path.read_text(encoding="utf-8").splitlines()
    state, skip_depth, pending_test = None, None, False
    depth = 0
    for number, raw in enumerate(lines, 1):
        code, state = strip_literals(raw, state)
        if skip_depth is None and CFG_TEST.match(code):
            pending_test = True
            continue
        if pending_test and code.strip():
            pending_test = False
            if "{" in code:
                skip_depth = depth
            elif code.strip().endswith(";"):
                continue
        opened = code.count("{") - code.count("}")
        if skip_depth is not None:
            depth += opened
            if depth <= skip_depth:
                skip_depth = None
            continue
        depth += opened
        yield number, code


def is_test_file(path):
    return path.name == "tests.rs" or "tests" in path.parts[:-1]


def functions(path):
    """(length in lines, name, first line) of each function with a body."""
    found, stack, depth = [], [], 0
    for number, code in code_lines(path):
        m = FN.match(code)
        start = 0
        if m:
            # [name, first line, depth outside it, body opened]
            stack.append([m.group(1), number, depth, False])
            start = m.end()
        for ch in code[start:]:
            top = stack[-1] if stack else None
            if ch == ";" and top and not top[3] and depth == top[2]:
                stack.pop()  # a declaration without a body
            elif ch == "{":
                if top and not top[3] and depth == top[2]:
                    top[3] = True
                depth += 1
            elif ch == "}":
                depth -= 1
                if top and top[3] and depth == top[2]:
                    stack.pop()
                    found.append((number - top[1] + 1, top[0], top[1]))
    return found


def module_of(src, path):
    """The module path of a file: src/run/executor/mod.rs -> run::executor."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return "::".join(parts)


def expand_use(text):
    """Full paths of a `use` tree: `crate::a::{b, c::{d, e}}` -> crate::a::b, …"""
    text = re.sub(r"\s+", "", text)
    m = re.match(r"^(.*?)\{(.*)\}$", text)
    if not m:
        return [text]
    prefix, inner = m.groups()
    items, level, cur = [], 0, ""
    for ch in inner:
        if ch == "," and level == 0:
            items.append(cur)
            cur = ""
            continue
        level += ch == "{"
        level -= ch == "}"
        cur += ch
    items.append(cur)
    return [p for item in items if item for p in expand_use(prefix + item)]


def dependencies(src, path, modules):
    """The modules a file's code names, each as the longest known module
    prefix of a `crate::` (or `super::`) path."""
    here = module_of(src, path).split("::")
    is_dir_module = path.name == "mod.rs"
    text = "\n".join(code for _, code in code_lines(path))
    paths = []
    for use in re.findall(r"\buse\s+([^;]+);", text):
        paths.extend(expand_use(use))
    paths.extend(re.findall(r"\b(?:crate|super)(?:::\w+)+", text))
    found = set()
    for p in paths:
        segs = p.split("::")
        if segs[0] == "crate":
            segs = segs[1:]
        elif segs[0] == "super":
            base = here if is_dir_module else here[:-1]
            while segs and segs[0] == "super":
                segs = segs[1:]
                base = base[:-1] if segs and segs[0] == "super" else base
            segs = base + segs
        else:
            continue
        for k in range(len(segs), 0, -1):
            target = "::".join(segs[:k])
            if target in modules:
                found.add(target)
                break
    return found


def cycles(graph):
    """Strongly connected sets of two or more nodes (Tarjan)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def crates_of(src):
    """The crates of one source folder as {root file name: [files]}: each
    of lib.rs and main.rs with the files of the modules it declares
    (`mod x;`). A binary's `crate::` paths name its own modules, so its
    modules can form cycles of their own, apart from the library's."""
    files = sorted(p for p in src.rglob("*.rs") if not is_test_file(p.relative_to(src)))
    out = {}
    for root in ("lib.rs", "main.rs"):
        path = src / root
        if not path.is_file():
            continue
        text = "\n".join(code for _, code in code_lines(path))
        declared = set(re.findall(r"\bmod\s+(\w+)\s*;", text))
        out[root] = [path] + [
            p for p in files
            if p != path and p.relative_to(src).with_suffix("").parts[0] in declared
        ]
    return files, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src", nargs="*", help="source folders (default: src and crates/*/src)")
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    roots = [pathlib.Path(s) for s in args.src] or [pathlib.Path("src")] + sorted(
        pathlib.Path("crates").glob("*/src"))
    files, crates = [], []
    for src in roots:
        found, by_root = crates_of(src)
        files.extend(found)
        crates.extend((src, root, members) for root, members in by_root.items())

    sizes = sorted(((sum(1 for _ in code_lines(p)), p) for p in files), reverse=True)
    print(f"longest files (lines of non-test code, of {len(files)} files):")
    for n, p in sizes[: args.top]:
        print(f"{n:6}  {p}")

    fns = sorted(((n, name, p, line) for p in files for n, name, line in functions(p)), reverse=True)
    print(f"\nlongest functions (lines, of {len(fns)} functions):")
    for n, name, p, line in fns[: args.top]:
        print(f"{n:6}  {name}  {p}:{line}")

    top_cycles, file_cycles = [], []
    for src, root, members in crates:
        modules = {module_of(src, p): p for p in members}
        by_file = {m: dependencies(src, p, modules) - {m} for m, p in modules.items()}
        top = {}
        for m, deps in by_file.items():
            t = m.split("::")[0]
            top.setdefault(t, set()).update(d.split("::")[0] for d in deps if d.split("::")[0] != t)
        label = f"{src}/{root}: "
        top_cycles += [label + " <-> ".join(c) for c in cycles(top) if "" not in c]
        file_cycles += [label + " <-> ".join(c) for c in cycles(by_file)]
    print(f"\nmodule cycles among top-level modules: {len(top_cycles)}")
    for c in top_cycles:
        print("  " + c)
    print(f"module cycles among file modules: {len(file_cycles)}")
    for c in file_cycles:
        print("  " + c)


if __name__ == "__main__":
    main()
