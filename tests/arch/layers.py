#!/usr/bin/python3
"""The include direction of lib/: every #include "x/..." of a lib/ file names a
folder of a lower layer (or its own folder), and no files include each other
in a loop. A folder is lib/<name>, or lib/io/<room> for io's seven rooms;
common's runtime library (discount_common_runtime in lib/common/CMakeLists.txt:
its sources and their headers) counts as the folder common/runtime. app/ and
python/ sit above everything. Exits 1, listing each violation, when an
include goes sideways or upward, names a folder missing from LAYERS, closes
a loop of files, or a file other than common/knobs.cpp calls getenv; run by
CTest (arch_layers) and by hand:

  /usr/bin/python3 tests/arch/layers.py [--source DIR] [--graph]

--graph prints the folder graph (who includes whom) and exits.
"""
import argparse
import os
import re
import sys

# Lower numbers first; a folder includes only folders of a lower number.
LAYERS = {
    "common": 0,  # text, errors, sizes, paths, threads: no Kokkos, no HDF5
    "codec": 0,  # HDF5 filter pipelines, no HDF5 library
    "config": 1,
    "ranks": 1,  # MPI behind one header
    "common/runtime": 2,  # start-up timing, the crash handler
    "backend": 2,  # the GPU runtime, Kokkos spaces, host pages, Kokkos threads
    "plan": 2,
    "io/posix": 2,  # positional I/O, atomic files, folders, the read set; no HDF5
    "kernels": 3,  # Kokkos
    "io/hdf5": 3,  # handles, attributes, names, types, filters, the read set's HDF5 side
    "io/input": 4,  # the input sources
    "io/lists": 5,  # input.file lists over the single-file input; open_input, which picks a job's input
    "io/records": 5,  # the output's spec, done-range record, run table, checksums, data files and parts
    "io/compress": 6,  # the parts' chunks encoded on every core and stored through HDF5's direct chunk write
    "io/output": 7,  # the sinks and the file output's lifecycle; they take the input's shape and box, sample an input
    "resolve": 8,
    "report": 8,
    "pipeline": 9,
    "probe": 10,
    "commands": 11,
    "embed": 12,
    "app": 13,
    "python": 13,
}

# Includes that go against LAYERS on purpose: (including file, included file): why.
ALLOWED = {}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
GETENV = re.compile(r"\bgetenv\s*\(")
ENVIRONMENT_FILE = "common/knobs.cpp"  # the one file that calls getenv


RUNTIME = set()  # stems of lib/common's runtime library, filled by main


def runtime_stems(root):
    with open(os.path.join(root, "lib", "common", "CMakeLists.txt")) as f:
        text = f.read()
    block = re.search(r"discount_library\(discount_common_runtime\s([^)]*)\)", text)
    return {os.path.splitext(name)[0] for name in block.group(1).split()} if block else set()


def folder_of(rel):
    """lib-relative path -> its folder ("io/input" for io's rooms)."""
    parts = rel.split("/")
    if parts[0] == "io" and len(parts) > 2:
        return "io/" + parts[1]
    if parts[0] == "common" and len(parts) == 2 and os.path.splitext(parts[1])[0] in RUNTIME:
        return "common/runtime"
    return parts[0]


def sources(root):
    """(lib-relative name, path) of every C++ file of lib/, app/ and python/."""
    for top in ("lib", "app", "python"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".hpp", ".cpp", ".h", ".cc")):
                    path = os.path.join(folder, name)
                    rel = os.path.relpath(path, os.path.join(root, "lib")) if top == "lib" else os.path.relpath(
                        path, root)
                    yield rel, path


def includes(root):
    """{file: [included lib file, ...]}, files named relative to lib/ (app/, python/ as they are)."""
    graph = {}
    for rel, path in sources(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        graph[rel] = [name for name in INCLUDE.findall(text) if os.path.isfile(os.path.join(root, "lib", name))]
    return graph


def loops(graph):
    """Strongly connected sets of more than one file (Tarjan), and files including themselves."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        # Iterative, so deep include chains cannot exhaust Python's recursion limit.
        work = [(v, iter(graph.get(v, ())))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, edges = work[-1]
            advanced = False
            for w in edges:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph.get(w, ()))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    parser.add_argument("--graph", action="store_true", help="print the folder graph and exit")
    args = parser.parse_args()
    RUNTIME.update(runtime_stems(args.source))
    graph = includes(args.source)
    if not graph:
        sys.exit(f"layers: no C++ files under {args.source}/lib")

    if args.graph:
        edges = {}
        for f, names in graph.items():
            for name in names:
                a, b = folder_of(f), folder_of(name)
                if a != b:
                    edges.setdefault(a, set()).add(b)
        for a in sorted(edges, key=lambda x: (LAYERS.get(x, 99), x)):
            print(f"{a} ({LAYERS.get(a, '?')}) -> {', '.join(sorted(edges[a]))}")
        return 0

    errors = []
    for f in sorted(graph):
        a = folder_of(f)
        if a not in LAYERS:
            errors.append(f"lib/{f}: folder '{a}' is not in tests/arch/layers.py's LAYERS")
            continue
        for name in graph[f]:
            b = folder_of(name)
            if b == a or (f, name) in ALLOWED:
                continue
            if b not in LAYERS:
                errors.append(f"{f} includes {name}: folder '{b}' is not in LAYERS")
            elif LAYERS[b] >= LAYERS[a]:
                way = "sideways" if LAYERS[b] == LAYERS[a] else "upward"
                errors.append(f"{f} includes {name}: {way}, {a} (layer {LAYERS[a]}) -> {b} (layer {LAYERS[b]})")
    for component in loops(graph):
        errors.append("files include each other in a loop: " + ", ".join(component))
    # The environment is read in one place (common/knobs: Knobs, environment_value).
    for rel, path in sources(args.source):
        if rel != ENVIRONMENT_FILE and GETENV.search(open(path, encoding="utf-8", errors="replace").read()):
            errors.append(f"{rel} calls getenv: read the environment through common/knobs.hpp")

    if errors:
        print(f"layers: {len(errors)} violation(s) of the include direction (docs/architecture.md):")
        for e in errors:
            print("  " + e)
        return 1
    print(f"layers: {len(graph)} files, {sum(len(v) for v in graph.values())} includes of lib/, "
          f"{len(LAYERS)} folders in order, no loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
