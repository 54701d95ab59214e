#!/usr/bin/python3
"""How often following a run from run_command crosses between lib/ folders.

The app is built in build/crossings with GCC's -finstrument-functions on the
project's own code and linked with tests/arch/tracer.cpp, which records each
distinct (caller, callee) pair while run_command (and apart, plan_command)
runs, on every thread. A small generate + run job is traced; addresses are
named with addr2line; a crossing is a pair whose functions lie in different
folders. Also counted: as a reader meets them (template arguments and
overloads folded, constructors and callbacks left out), without common/, and
only calls taking the configuration (CONFIG_TYPES). Layers follow the link
graph of lib/*/CMakeLists.txt (LAYER); an upward edge from a template or
lambda the lower folder was handed is a callback. Exits 1 on any edge from
io/, plan/ or kernels/ into report/ or commands/. docs/architecture.md has the
figures.

Usage: /usr/bin/python3 tests/arch/crossings.py [--source DIR] [--build-dir DIR]
       [--skip-build] [--edges] (--edges lists every crossing by name)
An earlier commit: git archive it into /tmp/base, link deps/ there, --source /tmp/base.
Needs g++, cmake, ninja, addr2line and nm; the build takes a few minutes.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYER = {"common": 0, "config": 1, "plan": 1, "ranks": 1, "io": 2, "resolve": 2, "kernels": 2, "report": 3,
         "pipeline": 4, "probe": 5, "commands": 6, "embed": 7, "app": 8}
LOW = {"io", "plan", "kernels"}
HIGH = {"report", "commands"}


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build(bdir, source):
    os.makedirs(bdir, exist_ok=True)
    tracer = os.path.join(bdir, "tracer.o")
    sh(["g++", "-std=c++17", "-O2", "-c", os.path.join(ROOT, "tests/arch/tracer.cpp"), "-o", tracer])
    # DWARF 4: with this toolchain addr2line names the including .cpp, not the
    # header, for an inline function of a DWARF 5 build.
    flags = "-g1 -gdwarf-4 -finstrument-functions -finstrument-functions-exclude-file-list=deps/,/usr/"
    sh(["cmake", "-S", source, "-B", bdir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
        "-DCMAKE_PREFIX_PATH=" + os.path.join(ROOT, "deps/install/openmp"), "-DDISCOUNT_ENABLE_TESTS=OFF",
        "-DDISCOUNT_BUILD_BENCH=OFF", "-DCMAKE_CXX_FLAGS=" + flags, "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG",
        "-DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF", "-DCMAKE_EXE_LINKER_FLAGS=-no-pie",
        # linked into C++ executables only (the C compiler check would fail on it)
        "-DCMAKE_CXX_STANDARD_LIBRARIES=" + tracer],
       stdout=subprocess.DEVNULL)
    app = os.path.join(bdir, "app", "discount_app")
    if os.path.exists(app):
        os.remove(app)  # the tracer object is linked as a library flag: not a dependency ninja tracks
    sh(["cmake", "--build", bdir, "--target", "discount_app", "-j2"], stdout=subprocess.DEVNULL)


def symbol_address(binary, name):
    """The address of discount::<name>(...) itself (not a lambda inside it)."""
    mangled = f"_ZN8discount{len(name)}{name}E"
    for line in sh(["nm", binary], capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "T" and parts[2].startswith(mangled):
            return parts[0].lstrip("0")
    sys.exit(f"crossings: discount::{name} not found in {binary}")


def trace(binary, work, args, root, tag):
    out = os.path.join(work, f"edges_{tag}.txt")
    env = dict(os.environ, CROSSINGS_ROOTS=root, CROSSINGS_OUT=out, OMP_NUM_THREADS="2", OMP_PROC_BIND="false")
    sh([binary] + args, cwd=work, env=env, stdout=subprocess.DEVNULL)
    if not os.path.exists(out):
        sys.exit(f"crossings: the traced `{' '.join(args)}` wrote no edges")
    with open(out) as f:
        return {tuple(int(x, 16) for x in line.split()) for line in f if line.strip()}


def symbolize(binary, addresses):
    addresses = sorted(a for a in addresses if a)
    text = "\n".join(hex(a) for a in addresses) + "\n"
    out = sh(["addr2line", "-f", "-C", "-e", binary], input=text, capture_output=True, text=True).stdout.splitlines()
    names = {}
    for i, a in enumerate(addresses):
        fn, where = out[2 * i], os.path.normpath(out[2 * i + 1].split(":")[0])
        m = re.search(r"/lib/([a-z_]+)/", where)
        folder = m.group(1) if m else ("app" if "/app/" in where else None)
        names[a] = (fn, folder)
    # An inline member defined in io/input/input.hpp must be named as io's, whichever
    # .cpp the linker took its copy from (see the DWARF note in build()).
    for fn, folder in names.values():
        if fn.startswith("discount::InputSource::") and folder != "io":
            sys.exit(f"crossings: addr2line puts {fn} in {folder}, not io: the debug line tables are misread")
    return names


def special(fn):
    """A constructor, destructor or assignment (often compiler-generated)."""
    head = fn.split("(")[0]
    parts = head.split("::")
    return "::~" in head or head.endswith("operator=") or (len(parts) >= 2 and parts[-1] == parts[-2].split("<")[0])


def callback(caller, callee):
    """An edge the lower folder makes only because the higher one handed it
    code: the caller is a template instantiated with the higher folder's
    lambda or type (ranks::collectively, host_parallel, run_on_threads), or
    the callee belongs to a lambda."""
    name = caller[caller.find("discount::"):] if "discount::" in caller else caller  # past a return type
    return "<" in name.split("(")[0] or "{lambda" in callee


def plain_name(fn):
    """A function as a reader names it: no return type, template arguments or parameters,
    so a template's instances and an overload set are one name."""
    fn = fn[fn.find("discount::"):] if "discount::" in fn else fn
    fn = fn.replace("(anonymous namespace)::", "")  # not a parameter list
    out, depth = [], 0
    for ch in fn:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            if ch == "(":
                break
            out.append(ch)
    return "".join(out).strip()


# The configuration and what is made from it, stage by stage (config/ ->
# resolve/ -> plan/ -> commands/'s Job -> io/'s OutputSpec, pipeline/'s job).
CONFIG_TYPES = ("Config", "InputConfig", "OutputConfig", "ComputeConfig", "MemoryConfig", "LimitsConfig",
                "RunOptions", "PlanOptions", "JobSpec", "PipelineSpec", "ReportSpec", "Plan", "PlanRequest", "Job",
                "OutputSpec", "PipelineJob", "Slicing")
CONFIG_RE = re.compile(r"\bdiscount::(?:" + "|".join(CONFIG_TYPES) + r")\b(?!::\w*\()")


def carries_config(fn):
    """The function takes the configuration or something made from it: a parameter
    of one of CONFIG_TYPES, or it is a member of one (its object is the configuration)."""
    name = fn[fn.find("discount::"):] if "discount::" in fn else fn
    head, _, params = name.partition("(")
    owner = head.split("::")[-2] if head.count("::") >= 2 else ""
    return bool(CONFIG_RE.search("(" + params)) or owner in CONFIG_TYPES


def report(edges, names, title, show_edges):
    crossings = []
    for caller, callee in edges:
        if not caller:
            continue
        (cf, cfo), (tf, tfo) = names[caller], names[callee]
        if cfo and tfo and cfo != tfo:
            crossings.append((cfo, tfo, cf, tf))
    pairs = collections.Counter((a, b) for a, b, _, _ in crossings)
    up = [c for c in crossings if LAYER[c[1]] > LAYER[c[0]]]
    side = [c for c in crossings if LAYER[c[1]] == LAYER[c[0]]]
    bad = [c for c in crossings if c[0] in LOW and c[1] in HIGH]
    direct_up = [c for c in up if not callback(c[2], c[3])]
    plain = [c for c in crossings if not special(c[3])]
    into = collections.Counter(b for _, b, _, _ in crossings)
    print(f"== {title}")
    print(f"crossings: {len(crossings)} (upward {len(up)}, sideways {len(side)}, "
          f"downward {len(crossings) - len(up) - len(side)}); functions traced: "
          f"{len({a for e in edges for a in e if a})}")
    print(f"upward other than callbacks: {len(direct_up)}; crossings into functions other than constructors, "
          f"destructors and assignments: {len(plain)} (upward {len([c for c in plain if c in up])})")
    # Where a reader following the calls changes folder: one pair per named caller
    # and callee, leaving out constructors, destructors, assignments and callbacks
    # (the lambda a lower folder runs is read where it is written).
    readable = [c for c in crossings if not special(c[3]) and not callback(c[2], c[3])]
    read = {(a, b, plain_name(cf), plain_name(tf)) for a, b, cf, tf in readable}
    print(f"as a reader meets them (a template's instances and an overload set as one name; no constructors, "
          f"destructors, assignments or callbacks): {len(read)}")
    # The same without the calls into common/, the shared vocabulary (sizes,
    # axes, paths, time and host text) that every folder takes from it.
    print(f"as a reader meets them, without the calls into common/: {len([c for c in read if c[1] != 'common'])}")
    # Following the configuration: only the calls that hand the callee the
    # configuration or a value made from it (see carries_config).
    follow = {(a, b, plain_name(cf), plain_name(tf)) for a, b, cf, tf in readable if carries_config(tf)}
    follow_up = [c for c in follow if LAYER[c[1]] > LAYER[c[0]]]
    follow_into = collections.Counter(b for _, b, _, _ in follow)
    print(f"following the configuration (those whose callee takes the configuration or a value made from it): "
          f"{len(follow)} (upward {len(follow_up)}); entries: "
          + ", ".join(f"{k} {v}" for k, v in follow_into.most_common()))
    print("entries per folder: " + ", ".join(f"{k} {v}" for k, v in into.most_common()))
    print(f"per folder pair ({len(pairs)} pairs; from -> to: count, U = upward, S = sideways):")
    for (a, b), n in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0])):
        mark = " U" if LAYER[b] > LAYER[a] else " S" if LAYER[b] == LAYER[a] else ""
        print(f"  {a:>8} -> {b:<8} {n:3d}{mark}")
    for label, group in (("upward", up), ("upward other than callbacks", direct_up),
                         ("io/plan/kernels -> report/commands", bad)):
        if group or show_edges:
            print(f"{label} edges:" + ("" if group else " none"))
            for a, b, cf, tf in sorted(group):
                print(f"  {a} -> {b}: {cf[:110]}  ->  {tf[:110]}")
    if show_edges:
        print("following the configuration, by name:")
        for a, b, cf, tf in sorted(follow):
            print(f"  {a} -> {b}: {cf}  ->  {tf}")
        print("as a reader meets them, by name:")
        for a, b, cf, tf in sorted(read):
            print(f"  {a} -> {b}: {cf}  ->  {tf}")
        print("all crossings:")
        for a, b, cf, tf in sorted(crossings):
            print(f"  {a} -> {b}: {cf[:110]}  ->  {tf[:110]}")
    print(f"hard check (no io/plan/kernels -> report/commands edge): {'ok' if not bad else 'FAILED'}")
    return not bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default=ROOT, help="the tree to measure (an earlier commit: git archive it there)")
    ap.add_argument("--build-dir", help="default: <source>/build/crossings")
    ap.add_argument("--skip-build", action="store_true", help="reuse the instrumented build as it is")
    ap.add_argument("--edges", action="store_true", help="list every crossing by function name")
    a = ap.parse_args()
    a.source = os.path.abspath(a.source)
    a.build_dir = a.build_dir or os.path.join(a.source, "build/crossings")
    if not a.skip_build:
        build(a.build_dir, a.source)
    binary = os.path.join(a.build_dir, "app", "discount_app")
    run_root = symbol_address(binary, "run_command")
    plan_root = symbol_address(binary, "plan_command")
    with tempfile.TemporaryDirectory(prefix="crossings.") as work:
        sh([binary, "generate", "--dates", "37", "--ids", "211", "--nums", "5", "--out", "in.h5", "--seed", "7"],
           cwd=work, stdout=subprocess.DEVNULL)
        with open(os.path.join(work, "job.yaml"), "w") as f:
            f.write("input: {file: in.h5}\noutput: {file: out.h5}\n")
        run_edges = trace(binary, work, ["run", "job.yaml", "-q"], run_root, "run")
        plan_edges = trace(binary, work, ["plan", "job.yaml"], plan_root, "plan")
    names = symbolize(binary, {x for e in run_edges | plan_edges for x in e})
    ok = report(run_edges, names, "run (from run_command; the figure docs/architecture.md records)", a.edges)
    ok = report(plan_edges, names, "plan (from plan_command)", False) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
