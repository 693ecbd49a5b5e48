#!/usr/bin/env python3
"""Module cycles in a crate: which of its modules refer to each other, directly or around a loop.

Reads every `src/**/*.rs` of the library crates named (default: the workspace's own crates) and
takes each reference from one module to another of the same crate: `crate::a::b`, `super::x` and
`self::x` paths, and bare paths `x::y` where `x` is a child module of the one they are written in
(`exp::paper::run` in lib.rs), in `use` lines (nested groups expanded) and in code. A name that a
module re-exports (`pub use vocab::Vocab;` in lib.rs) counts as the module that defines it, so
`crate::Vocab` refers to `vocab`, not to the crate root. Every reference counts, a parent's use
of its children included; `mod x;` declarations do not. `#[cfg(test)] mod` blocks are left out:
a test may reach anywhere without making the library's modules depend on each other.
`src/main.rs` and `src/bin/` are other crates (binaries over the library) and are not read.

Prints the strongly connected components of more than one module and exits 1 when there is one.

    python3 scripts/module_cycles.py [crate_dir ...]
    python3 scripts/module_cycles.py --self-test     # planted crates with and without cycles
"""
import os
import re
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# Every crate of the workspace (Cargo.toml's members), so a new crate is never left out.
def workspace_members():
    import pathlib, tomllib
    root = pathlib.Path(__file__).resolve().parent.parent
    return tomllib.loads((root / "Cargo.toml").read_text())["workspace"]["members"]


DEFAULT = workspace_members()


def modules(src):
    """{module path tuple: file} for the library's .rs files under src."""
    out = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[0] == "bin" or parts == ["main"]:
                continue
            if parts == ["lib"]:
                parts = []
            elif parts[-1] == "mod":
                parts = parts[:-1]
            out[tuple(parts)] = os.path.join(dirpath, f)
    return out


def strip_comments(text):
    # String literals first (they may hold `//` or anything that looks like a path), then
    # comments; a `"` inside a comment is rare enough not to matter here.
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)
    # Character literals ('}', '"'), which would unbalance a block or a string; lifetimes
    # ('a) have no closing quote and stay.
    text = re.sub(r"'(?:[^'\\\n]|\\.)'", "' '", text)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def without_tests(text):
    """Drop `#[cfg(test)] mod name { ... }` blocks."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", text):
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


def inline_modules(text):
    """Inside an inline `mod name { ... }`, `super::` is the file's own module: rewritten as
    `self::`, so the block counts as the file's code."""
    out, i = [], 0
    for m in re.finditer(r"\bmod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.append(text[i:m.end()])
        out.append(re.sub(r"\bsuper::", "self::", text[m.end():j]))
        i = j
    out.append(text[i:])
    return "".join(out)


def inherent_impls(text):
    """Type names with an inherent `impl Name {` (not `impl Trait for Name`) in this text."""
    return set(re.findall(r"\bimpl(?:<[^>{]*>)?\s+(?:\w+::)*(\w+)(?:<[^>{]*>)?\s*\{", text))


def definitions(text):
    return set(re.findall(r"\b(?:struct|enum|union|trait|type)\s+(\w+)", text))


def expand_groups(text):
    """`a::{b, c::{d, e}}` -> `a::b, a::c::d, a::c::e`, innermost groups first."""
    group = re.compile(r"(\w+(?:::\w+)*)::\{([^{}]*)\}")

    def repl(m):
        items = [x.strip().split(" as ")[0].strip() for x in m.group(2).split(",") if x.strip()]
        return ", ".join(m.group(1) if x == "self" else f"{m.group(1)}::{x}" for x in items)

    while True:
        new = group.sub(repl, text)
        if new == text:
            return text
        text = new


def reexports(mods, texts):
    """{module: {name: path of the `pub use` it re-exports}}."""
    out = {}
    for m in mods:
        names = {}
        for body in re.findall(r"pub\s+use\s+([^;]+);", texts[m]):
            for path in (p.strip() for p in body.split(",")):
                path = path.split(" as ")[0].strip()
                if "::" in path:
                    names[path.split("::")[-1]] = path
        out[m] = names
    return out


def resolve(module, path, mods, exported, depth=0):
    """The module of this crate a path written in `module` refers to, or None (another crate,
    a local item)."""
    parts = path.split("::")
    if parts[-1] == "self":
        parts = parts[:-1]
    if parts[0] == "crate":
        base, rest = [], parts[1:]
    elif parts[0] in ("super", "self"):
        base, rest = list(module), parts
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    elif tuple(module) + (parts[0],) in mods:
        base, rest = list(module), parts
    else:
        return None
    full = base + rest
    for n in range(len(full), -1, -1):
        target = tuple(full[:n])
        if target not in mods:
            continue
        # `crate::Name` where the crate root re-exports Name: the module that defines it.
        if n < len(full) and depth < 8:
            via = exported.get(target, {}).get(full[n])
            if via:
                found = resolve(target, via, mods, exported, depth + 1)
                if found is not None:
                    return found
        return target
    return None


def graph(src):
    mods = modules(src)
    texts = {
        m: expand_groups(inline_modules(without_tests(strip_comments(open(f, encoding="utf-8").read()))))
        for m, f in mods.items()
    }
    exported = reexports(mods, texts)
    edges = {m: set() for m in mods}
    for m, text in texts.items():
        # `use super::*;`, `pub use x::*;`: the module the glob is taken from.
        for path in re.findall(r"(?<![\w:])(\w+(?:::\w+)*)::\*", text):
            t = resolve(m, path, mods, exported)
            if t is not None and t != m:
                edges[m].add(t)
        for path in re.findall(r"(?<![\w:])(\w+(?:::\w+)+)", text):
            t = resolve(m, path, mods, exported)
            if t is not None and t != m:
                edges[m].add(t)
    return edges


def split_impls(src):
    """Types whose inherent impl blocks sit in another module than the type: a method called
    through such a block is a dependency on that module, which paths cannot show."""
    mods = modules(src)
    texts = {m: without_tests(strip_comments(open(f, encoding="utf-8").read())) for m, f in mods.items()}
    defined = {}
    for m, text in texts.items():
        for name_ in definitions(text):
            defined.setdefault(name_, set()).add(m)
    out = []
    for m, text in texts.items():
        for t in sorted(inherent_impls(text)):
            homes = defined.get(t, set())
            if homes and m not in homes:
                out.append((t, sorted(homes), m))
    return out


def sccs(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
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
    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def name(m):
    return "::".join(m) or "(crate root)"


def cycles(src):
    edges = graph(src)
    return edges, [sorted(c) for c in sccs(edges) if len(c) > 1]


def check(crates):
    bad = 0
    for c in crates:
        edges, found = cycles(os.path.join(ROOT, c, "src"))
        for comp in found:
            bad += 1
            print(f"{c}: cycle among {', '.join(name(m) for m in comp)}")
            for m in comp:
                inside = sorted(name(t) for t in edges[m] if t in comp)
                print(f"    {name(m)} -> {', '.join(inside)}")
        for t, homes, m in split_impls(os.path.join(ROOT, c, "src")):
            bad += 1
            print(f"{c}: {t} (defined in {', '.join(name(h) for h in homes)}) has methods in {name(m)}: calls to them are dependencies this check cannot see; keep a type's methods in its module")
        if not found:
            print(f"{c}: {len(edges)} modules, no cycle")
    return bad


def self_test():
    """Planted crates: each known cycle is found, each acyclic layout passes."""
    cases = [
        # (files, the cycle expected, as sorted module names; None: no cycle)
        ({"lib.rs": "pub mod a; pub mod b;", "a.rs": "use crate::b::f;", "b.rs": "use super::a::g;"},
         ["a", "b"]),
        # The root dispatching to a child that uses an item defined in the root itself.
        ({"lib.rs": "pub mod a; pub struct Args; pub fn run() { a::go() }", "a.rs": "use crate::Args;"},
         ["(crate root)", "a"]),
        # The same with the item in a leaf and re-exported by the root: no cycle.
        ({"lib.rs": "pub mod a; pub mod cli; pub use cli::Args; pub fn run() { a::go() }",
          "cli.rs": "pub struct Args;", "a.rs": "use crate::Args;"}, None),
        # Nested groups and `self`.
        ({"lib.rs": "pub mod x;", "x/mod.rs": "pub mod p; pub mod q;",
          "x/p.rs": "use crate::{x::{q::{self, h}}};", "x/q.rs": "use crate::x::p::k;"},
         ["x::p", "x::q"]),
        # A test module reaching back is not a dependency; main.rs is another crate.
        ({"lib.rs": "pub mod a; pub mod b;", "a.rs": "use crate::b::f;",
          "b.rs": "#[cfg(test)]\nmod tests { use crate::a::g; }", "main.rs": "use crate::a; use crate::b;"},
         None),
        # A glob import of the parent is a reference to it.
        ({"lib.rs": "pub mod a; pub fn f() { a::g() }", "a.rs": "use super::*;"},
         ["(crate root)", "a"]),
        # A glob re-export counts as the root using that module.
        ({"lib.rs": "pub mod a; pub mod b; pub use b::*;", "a.rs": "use crate::b::f;",
          "b.rs": "pub fn f() {} pub fn g() { crate::a::h() }"}, ["a", "b"]),
        # `super::` inside an inline module is the file's own module, not its parent.
        ({"lib.rs": "pub mod a; pub fn f() { a::g() }",
          "a.rs": "mod inner { impl super::T {} } pub struct T;"}, None),
        # A '}' character literal does not close a test module early.
        ({"lib.rs": "pub mod a; pub mod b;", "a.rs": "use crate::b::f;",
          "b.rs": "#[cfg(test)]\nmod tests { const C: char = '}'; use crate::a::g; }"}, None),
        # `//` inside a string does not swallow the path after it.
        ({"lib.rs": "pub mod a; pub mod b;", "a.rs": "const U: &str = \"http://x\"; use crate::b::f;",
          "b.rs": "use crate::a::g;"}, ["a", "b"]),
        # A path inside a comment or a string is not a reference.
        ({"lib.rs": "pub mod a; pub mod b;", "a.rs": "use crate::b::f;",
          "b.rs": "// crate::a::g\nconst S: &str = \"crate::a::g\";"}, None),
    ]
    failed = 0
    for files, expected in cases:
        with tempfile.TemporaryDirectory() as d:
            for f, text in files.items():
                path = os.path.join(d, "src", f)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "w", encoding="utf-8").write(text)
            _, found = cycles(os.path.join(d, "src"))
            got = [name(m) for m in found[0]] if found else None
            if got != expected:
                failed += 1
                print(f"self-test: {sorted(files)}: expected {expected}, found {got}")
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "src"))
        for f, text in {"lib.rs": "pub mod a; pub mod b;", "a.rs": "pub struct S;",
                        "b.rs": "impl crate::a::S { fn m(&self) {} } impl Clone for crate::a::S {}"}.items():
            open(os.path.join(d, "src", f), "w", encoding="utf-8").write(text)
        got = split_impls(os.path.join(d, "src"))
        if got != [("S", [("a",)], ("b",))]:
            failed += 1
            print(f"self-test: a type's methods in another module: found {got}")
    print(f"self-test: {len(cases) + 1 - failed} of {len(cases) + 1} planted crates read right")
    return failed


def main():
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(1 if self_test() else 0)
    sys.exit(1 if check(sys.argv[1:] or DEFAULT) else 0)


if __name__ == "__main__":
    main()
