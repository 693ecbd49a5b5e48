#!/usr/bin/env python3
"""Module cycles in a crate: which of its modules refer to each other, directly or around a loop.

Reads every `src/**/*.rs` of the crates named (default: the workspace's own crates), takes each
reference to another module of the same crate (`crate::a::b`, `super::x`, `self::x` paths, in
`use` lines and in code), and prints the strongly connected components of more than one module.
Exit status 1 when there is one. A module's own children (`mod x;` inside it) do not count as
references to them: a parent may use its children. A child that refers to its parent's items is a
reference child -> parent.

    python3 scripts/module_cycles.py [crate_dir ...]
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DEFAULT = ["crates/corpus", "crates/word2vec", "crates/transformer", "crates/analysis", "experiments"]


def modules(src):
    """{module path tuple: file} for every .rs file under src."""
    out = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("lib", "main") and len(parts) == 1:
                parts = []
            elif parts[-1] == "mod":
                parts = parts[:-1]
            if "bin" in parts[:1]:
                continue
            out[tuple(parts)] = os.path.join(dirpath, f)
    return out


def strip_comments(text):
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def without_tests(text):
    """Drop `#[cfg(test)] mod tests { ... }` blocks: tests may reach anywhere."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def expand_use_groups(text):
    """`use crate::{a, b::c}` -> `crate::a crate::b::c` (one level of braces is enough here)."""
    def repl(m):
        prefix = m.group(1)
        items = [x.strip() for x in m.group(2).split(",") if x.strip()]
        return " ".join(prefix + x for x in items)
    for _ in range(3):
        text = re.sub(r"((?:crate|super|self)(?:::\w+)*::)\{([^{}]*)\}", repl, text)
    return text


def resolve(module, path, known):
    """The known module a path like crate::a::b::Item or super::x::y refers to (longest prefix)."""
    parts = path.split("::")
    if parts[0] == "crate":
        base, rest = [], parts[1:]
    else:
        base = list(module)
        rest = parts
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    full = base + rest
    for n in range(len(full), -1, -1):
        if tuple(full[:n]) in known:
            return tuple(full[:n])
    return None


def graph(src):
    mods = modules(src)
    edges = {m: set() for m in mods}
    for m, f in mods.items():
        text = expand_use_groups(without_tests(strip_comments(open(f).read())))
        for path in re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", text):
            t = resolve(m, path, mods)
            if t is None or t == m:
                continue
            # A parent using its own descendants is structure, not a cycle.
            if t[: len(m)] == m:
                continue
            edges[m].add(t)
    # A module refers to its descendants through `mod` declarations; a child referring to an
    # ancestor (the crate root's items, say) is an edge child -> ancestor only.
    return edges


def sccs(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
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
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            strong(v)
    return out


def main():
    crates = sys.argv[1:] or DEFAULT
    bad = 0
    for c in crates:
        src = os.path.join(ROOT, c, "src")
        edges = graph(src)
        name = lambda m: "::".join(m) or "(root)"
        for comp in sccs(edges):
            if len(comp) > 1:
                bad += 1
                print(f"{c}: cycle among {', '.join(sorted(name(m) for m in comp))}")
                for m in sorted(comp):
                    inside = sorted(name(t) for t in edges[m] if t in comp)
                    print(f"    {name(m)} -> {', '.join(inside)}")
        if not any(len(x) > 1 for x in sccs(edges)):
            print(f"{c}: {len(edges)} modules, no cycle")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
