#!/usr/bin/env python3
"""Checks the Spack recipe of discount_app without Spack (Python 3 standard library only).

Part A: the recipe imported under a stand-in for Spack's directives; the repository layout, the
Kokkos patches (the files of cmake/patches), cmake_args() and setup_build_environment().
Part B (--spack-packages PATH, a checkout or bare git directory of spack/spack-packages, parsed,
never executed): every package, version range, variant, value and cuda_arch the recipe names.
Exit status: 0 all passed, 1 one failed, 2 usage error.
"""

import argparse
import ast
import contextlib
import filecmp
import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import types

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NAMESPACE = "discount"
REPO_DIR = os.path.join(ROOT, "packaging", "spack", "repos", "spack_repo", NAMESPACE)
PKG_DIR = os.path.join(REPO_DIR, "packages", "discount_app")
PATCH_DIR = os.path.join(ROOT, "cmake", "patches")
BUILTIN = "repos/spack_repo/builtin"

# Stand-in for CudaPackage.cuda_arch_values when no spack-packages checkout is given
# (part B replaces it with the tuple parsed from build_systems/cuda.py).
STAND_IN_CUDA_ARCHS = ("50", "60", "70", "75", "80", "86", "87", "89", "90", "90a",
                       "100", "100a", "103", "110", "120", "121")

failures = []
notes = []


def ok(msg):
    print(f"  ok    {msg}")


def fail(msg):
    failures.append(msg)
    print(f"  FAIL  {msg}")


def note(msg):
    if msg not in notes:
        notes.append(msg)
        print(f"  note  {msg}")


def check(cond, msg):
    (ok if cond else fail)(msg)
    return cond


def require(cond, msg):
    """check() that prints only a failure (the caller prints one line for what passed)."""
    return cond or fail(msg) or False


# ---------------------------------------------------------------- stand-in for Spack


class Recorder:
    def __init__(self):
        self.records = []  # (directive, args, kwargs) with kwargs["when"] merged from when()
        self.when_stack = []

    def merged_when(self, when):
        parts = list(self.when_stack) + ([when] if when else [])
        return " ".join(parts) if parts else None

    def directive(self, name):
        def call(*args, **kwargs):
            if name not in ("version", "license", "patch"):
                kwargs["when"] = self.merged_when(kwargs.get("when"))
            rec = (name, args, kwargs)
            if name != "patch":  # a patch is recorded with the depends_on that carries it
                self.records.append(rec)
            return rec
        return call

    def of(self, name):
        return [r for r in self.records if r[0] == name]


REC = Recorder()


@contextlib.contextmanager
def _when(cond):
    REC.when_stack.append(cond)
    try:
        yield
    finally:
        REC.when_stack.pop()


def _define(var, value):
    if isinstance(value, bool):
        return f"-D{var}:BOOL={'ON' if value else 'OFF'}"
    if isinstance(value, (list, tuple)):
        return f"-D{var}:STRING={';'.join(str(v) for v in value)}"
    return f"-D{var}:STRING={value}"


class _PackageBase:
    run_tests = False

    def define(self, var, value):
        return _define(var, value)

    def define_from_variant(self, var, variant):
        return _define(var, self.spec.variants[variant].value)

    def __getitem__(self, name):
        return self.spec[name].package


class FakeVariant:
    def __init__(self, value):
        self.value = value


class FakeSpec:
    """Just enough of a concrete Spec for cmake_args(): variants, satisfies('+v'/'~v'/'v=x'), deps."""

    def __init__(self, variants, deps=None, package=None):
        self.variants = {k: FakeVariant(v) for k, v in variants.items()}
        self.deps = deps or {}
        self.package = package

    def satisfies(self, text):
        for tok in text.split():
            name, want = (tok[1:], tok[0] == "+") if tok[0] in "+~" else tok.split("=", 1)
            value = self.variants[name].value if name in self.variants else None
            if isinstance(want, bool):
                if bool(value) != want:
                    return False
            elif want not in (value if isinstance(value, tuple) else (value,)):
                return False
        return True

    def __getitem__(self, name):
        return self.deps[name]


def install_stand_in(cuda_arch_values):
    """Fake spack.package and spack_repo.builtin.build_systems.{cmake,cuda} modules."""
    pkg_mod = types.ModuleType("spack.package")
    names = ["version", "variant", "depends_on", "conflicts", "requires", "patch", "license",
             "maintainers", "provides", "resource", "extends"]
    for n in names:
        setattr(pkg_mod, n, REC.directive(n))
    pkg_mod.when = _when
    pkg_mod.Executable = lambda path: (lambda *a, **k: None)
    pkg_mod.working_dir = lambda path: contextlib.nullcontext()
    pkg_mod.PackageBase = _PackageBase
    pkg_mod.__all__ = names + ["when", "Executable", "working_dir", "PackageBase"]

    cmake_cls = type("CMakePackage", (_PackageBase,), {})
    cuda_cls = type("CudaPackage", (_PackageBase,), {"cuda_arch_values": tuple(cuda_arch_values)})
    for name in ["spack", "spack_repo", "spack_repo.builtin", "spack_repo.builtin.build_systems"]:
        sys.modules[name] = types.ModuleType(name)
    sys.modules["spack.package"] = pkg_mod
    for name, cls in (("cmake", cmake_cls), ("cuda", cuda_cls)):
        mod = types.ModuleType(f"spack_repo.builtin.build_systems.{name}")
        setattr(mod, cls.__name__, cls)
        sys.modules[mod.__name__] = mod
    return cmake_cls, cuda_cls


def load_recipe(cuda_arch_values):
    cmake_cls, cuda_cls = install_stand_in(cuda_arch_values)
    path = os.path.join(PKG_DIR, "package.py")
    modname = f"spack_repo.{NAMESPACE}.packages.discount_app.package"
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, cmake_cls, cuda_cls


# ---------------------------------------------------------------- spec strings and versions

TOKEN = re.compile(r"\s*(?:(\^)|(%[^\s^]+)|@([^\s+~^%]+)|([+~])(\w+)|(\w+)=([\w.,:-]+)|([A-Za-z_][\w.-]*))")


def parse_spec(text):
    """'kokkos@4: +cuda cuda_arch=90 ^cuda@13:' -> [{'name','versions','variants'}, ...]"""
    nodes = [{"name": None, "versions": None, "variants": {}}]
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot parse spec {text!r} at {text[pos:]!r}")
        pos = m.end()
        node = nodes[-1]
        if m.group(1):
            nodes.append({"name": None, "versions": None, "variants": {}})
        elif m.group(2):
            pass  # compiler constraints are not checked here
        elif m.group(3):
            node["versions"] = m.group(3)
        elif m.group(4):
            node["variants"][m.group(5)] = m.group(4) == "+"
        elif m.group(6):
            node["variants"][m.group(6)] = m.group(7)
        else:
            node["name"] = m.group(8)
        # "+a+b" is two variants: the regex takes them one at a time
    return [n for n in nodes if n["name"] or n["versions"] or n["variants"]]


def vtuple(text):
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.\-_]", text))


def is_release(text):
    return re.fullmatch(r"\d+(\.\d+)*", text) is not None


def in_range(version, rng):
    """Spack semantics: 'a:b' inclusive, b also matches b.*; 'x' matches x and x.*; ',' = union."""
    v = vtuple(version)
    for part in rng.split(","):
        part = part.lstrip("=")
        if ":" in part:
            lo, hi = part.split(":", 1)
            if lo and v < vtuple(lo):
                continue
            if hi:
                h = vtuple(hi)
                if not (v <= h or v[: len(h)] == h):
                    continue
            return True
        p = vtuple(part)
        if v[: len(p)] == p:
            return True
    return False


# ---------------------------------------------------------------- parsing spack-packages


class Source:
    """Files of a spack-packages checkout or bare git directory, at one commit."""

    def __init__(self, path, rev):
        self.path = os.path.abspath(path)
        self.git_dir = None
        if os.path.isdir(os.path.join(self.path, "objects")) and os.path.exists(
                os.path.join(self.path, "HEAD")):
            self.git_dir = self.path
        elif rev != "HEAD" or not os.path.isdir(os.path.join(self.path, BUILTIN)):
            self.git_dir = self._git("rev-parse", "--absolute-git-dir", git_dir=None).strip()
        self.rev = rev
        self.commit = self._git("rev-parse", rev, git_dir=self.git_dir or None).strip() \
            if self.git_dir or os.path.isdir(os.path.join(self.path, ".git")) else "unknown"
        self.date = self._git("log", "-1", "--format=%cI %s", rev, git_dir=self.git_dir).strip() \
            if self.commit != "unknown" else ""

    def _git(self, *args, git_dir):
        cmd = ["git", f"--git-dir={git_dir}"] if git_dir else ["git", "-C", self.path]
        return subprocess.run(cmd + list(args), check=True, capture_output=True, text=True).stdout

    def read(self, rel):
        if self.git_dir:
            try:
                return self._git("show", f"{self.rev}:{rel}", git_dir=self.git_dir)
            except subprocess.CalledProcessError:
                return None
        full = os.path.join(self.path, rel)
        return open(full, encoding="utf-8").read() if os.path.exists(full) else None


def _const(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


class PackageInfo:
    """Versions, variants (with when and values), conflicts and literal class/module tables."""

    def __init__(self, name):
        self.name = name
        self.versions = set()
        self.variants = {}  # name -> list of (when or None, values tuple or None)
        self.conflicts = []  # (spec, when)
        self.tables = {}  # literal dicts/tuples assigned at module or class level
        self.bases = []


def parse_package(source, name, cache, cuda_info):
    if name in cache:
        return cache[name]
    text = source.read(f"{BUILTIN}/packages/{name.replace('-', '_')}/package.py")
    if text is None:
        cache[name] = None
        return None
    info = PackageInfo(name)
    cache[name] = info
    tree = ast.parse(text)
    imported = {}  # class name -> builtin package name, from 'spack_repo.builtin.packages.X.package'
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("spack_repo.builtin.packages."):
            for alias in node.names:
                imported[alias.asname or alias.name] = node.module.split(".")[3]
    body = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            info.bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
            body += node.body
    for node in body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            value = _const(node.value)
            if value is not None:
                info.tables[node.targets[0].id] = value

    def iterations(loop):
        """One binding dict per iteration of a for-loop over something literal, else None."""
        it = loop.iter
        pairs = False
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and \
                it.func.attr in ("items", "keys"):
            pairs = it.func.attr == "items"
            it = it.func.value
        items = None
        if isinstance(it, ast.Attribute) and it.attr == "versions" and \
                isinstance(it.value, ast.Name) and it.value.id in imported:
            other = parse_package(source, imported[it.value.id], cache, cuda_info)
            items = {v: None for v in (other.versions if other else ())}
        elif isinstance(it, ast.Attribute) and it.attr == "cuda_arch_values":
            items = {a: None for a in cuda_info["archs"]}
        elif isinstance(it, ast.Name) and it.id in info.tables:
            items = info.tables[it.id]
        if items is None:
            return None
        seq = list(items.items()) if isinstance(items, dict) else [(x, None) for x in items]
        out = []
        for key, value in seq:
            env = {}
            bind(loop.target, (key, value) if pairs else key, env)
            out.append(env)
        return out

    def bind(target, value, env):
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (tuple, list)) and \
                len(value) == len(target.elts):
            for t, v in zip(target.elts, value):
                bind(t, v, env)

    def value_of(node, env):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" \
                and node.args:
            node = node.args[0]
        if isinstance(node, ast.Name) and node.id in env:
            return env[node.id]
        if isinstance(node, ast.Attribute) and node.attr == "cuda_arch_values":
            return tuple(cuda_info["archs"])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = value_of(node.left, env), value_of(node.right, env)
            if isinstance(left, tuple) and isinstance(right, tuple):
                return left + right
        return _const(node)

    def kw(call, key, env):
        for k in call.keywords:
            if k.arg == key:
                return value_of(k.value, env)
        return None

    def walk(nodes, env, with_when):
        for node in nodes:
            if isinstance(node, ast.For):
                envs = iterations(node)
                for inner in (envs if envs is not None else [{}]):
                    walk(node.body, {**env, **inner}, with_when)
                continue
            if isinstance(node, ast.With):
                conds = []
                for item in node.items:
                    c = item.context_expr
                    if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and \
                            c.func.id == "when" and c.args:
                        conds.append(value_of(c.args[0], env) or "")
                walk(node.body, env, with_when + conds)
                continue
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                continue
            for call in [n for n in ast.walk(node) if isinstance(n, ast.Call)]:
                if not (isinstance(call.func, ast.Name) and call.args):
                    continue
                fname = call.func.id
                first = value_of(call.args[0], env)
                if not isinstance(first, (str, int)):
                    continue
                first = str(first)
                own_when = kw(call, "when", env)
                when = " ".join([w for w in with_when if w] + ([own_when] if isinstance(own_when, str) else []))
                if fname == "version":
                    if is_release(first):
                        info.versions.add(first)
                elif fname == "variant":
                    values = kw(call, "values", env)
                    if values is None and isinstance(kw(call, "default", env), bool):
                        values = (True, False)
                    info.variants.setdefault(first, []).append(
                        (when or None, tuple(values) if isinstance(values, (tuple, list)) else None))
                elif fname == "conflicts":
                    info.conflicts.append((first, when or None))

    walk(tree.body, {}, [])
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            walk(node.body, {}, [])
    if "CudaPackage" in info.bases:
        for vname, decls in cuda_info["variants"].items():
            info.variants.setdefault(vname, decls)
    return info


def parse_cuda_build_system(source):
    text = source.read(f"{BUILTIN}/build_systems/cuda.py")
    tree = ast.parse(text)
    archs = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "cuda_arch_values" for t in node.targets):
            archs = _const(node.value)
    variants = {"cuda": [(None, (True, False))], "cuda_arch": [("+cuda", ("none",) + tuple(archs))]}
    return {"archs": tuple(archs), "variants": variants}


# ---------------------------------------------------------------- part A


def part_a(module, cmake_cls, cuda_cls):
    print("Part A: the recipe under a stand-in for Spack's directives")
    repo_yaml = open(os.path.join(REPO_DIR, "repo.yaml"), encoding="utf-8").read()
    ns = re.search(r"^\s+namespace:\s*(\S+)", repo_yaml, re.M)
    api = re.search(r"^\s+api:\s*(\S+)", repo_yaml, re.M)
    check(ns and ns.group(1) == NAMESPACE and os.path.basename(REPO_DIR) == NAMESPACE,
          f"repo.yaml namespace '{ns.group(1) if ns else None}' is the folder name spack_repo/{NAMESPACE}")
    check(api and re.fullmatch(r"v2\.\d+", api.group(1)),
          f"repo.yaml api {api.group(1) if api else None} (package API v2.x)")
    # The recipe's earlier places: scripts/spack, and repo.yaml at the top of its folder.
    stale = [p for p in ("scripts/spack/README.md", "scripts/spack/repos/spack_repo/discount/repo.yaml",
                         "packaging/spack/repo.yaml", "packaging/spack/packages")
             if os.path.exists(os.path.join(ROOT, p))]
    check(not stale, f"no old-layout leftovers ({', '.join(stale) or 'none'})")

    cls = getattr(module, "DiscountApp", None)
    check(cls is not None and issubclass(cls, cmake_cls) and issubclass(cls, cuda_cls),
          "class DiscountApp(CMakePackage, CudaPackage) imported from spack_repo.builtin.build_systems")
    counts = {}
    for name, _, _ in REC.records:
        counts[name] = counts.get(name, 0) + 1
    print("        recorded: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    check([r[1] for r in REC.of("license")] == [("Apache-2.0",)], 'license("Apache-2.0")')
    check(os.path.isfile(os.path.join(ROOT, "LICENSE")) and
          "Apache License" in open(os.path.join(ROOT, "LICENSE"), encoding="utf-8").read(2000),
          "LICENSE holds the Apache License 2.0")
    variants = {r[1][0]: r[2] for r in REC.of("variant")}
    for v in ("openmp", "mpi", "blas"):
        check(v in variants and variants[v].get("default") in (True, False), f"variant {v} (boolean)")

    deps = REC.of("depends_on")
    kokkos_any = [r for r in deps if r[1][0].startswith("kokkos@") and not r[2].get("when")]
    check(any(parse_spec(r[1][0])[0]["versions"].startswith("3.4.01:") for r in kokkos_any),
          "unconditional depends_on kokkos@3.4.01:... ("
          + ", ".join(r[1][0] for r in kokkos_any) + ")")

    # Patches: only for kokkos 3.4.01 / its nvcc_wrapper, one source with cmake/patches.
    patched = [r for r in deps if r[2].get("patches")]
    wanted = sorted(f for f in os.listdir(PATCH_DIR) if f.endswith(".patch"))
    for name, args, kwargs in patched:
        files = [p[1][0] for p in kwargs["patches"]]
        target = parse_spec(args[0])[0]["name"]
        check(f"^{target}@3.4.01" in (kwargs["when"] or "").split(),
              f"{len(files)} patch(es) on {target} only when ^{target}@3.4.01 (when={kwargs['when']!r})")
    kokkos_files = [p[1][0] for r in patched if r[1][0] == "kokkos" for p in r[2]["patches"]]
    check(kokkos_files == wanted, f"kokkos gets every cmake/patches/*.patch, in order ({len(wanted)})")
    for f in sorted({p[1][0] for r in patched for p in r[2]["patches"]}):
        path = os.path.join(PKG_DIR, f)
        real = os.path.realpath(path)
        check(os.path.islink(path) and not os.path.isabs(os.readlink(path)) and
              real == os.path.join(os.path.realpath(PATCH_DIR), f) and
              filecmp.cmp(real, os.path.join(PATCH_DIR, f), shallow=False),
              f"{f}: relative symlink to cmake/patches/{f}")
    digests = {hashlib.sha256(open(os.path.join(PATCH_DIR, f), "rb").read()).hexdigest(): f for f in wanted}
    copies = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "packaging")):
        for f in files:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p) and hashlib.sha256(open(p, "rb").read()).hexdigest() in digests:
                copies.append(os.path.relpath(p, ROOT))
    check(not copies, f"no byte-for-byte copy of cmake/patches under packaging/ ({', '.join(copies) or 'none'})")

    # CUDA: nvcc_wrapper, the CUDA 13 bound, one forwarded cuda_arch per value.
    reqs = REC.of("requires")
    check(any(r[1][0] == "^kokkos +cuda +wrapper" and "+cuda" in (r[2]["when"] or "") for r in reqs),
          'requires("^kokkos +cuda +wrapper", when="+cuda")')
    cuda13 = [r for r in REC.of("conflicts") if r[1][0] == "^cuda@13:"]
    check(any("^kokkos@3.4.02:4.7.0" in (r[2]["when"] or "") for r in cuda13),
          "conflicts ^cuda@13: with ^kokkos@3.4.02:4.7.0 (builtin kokkos: @:4.7.0; patched 3.4.01 exempt)")
    forwarded = {r[2]["when"].split("cuda_arch=")[1] for r in deps
                 if r[1][0].startswith("kokkos") and "cuda_arch=" in r[1][0] and "+blas" not in r[2]["when"]}
    check(forwarded == set(module.KOKKOS_CUDA_ARCHS),
          f"cuda_arch forwarded to kokkos: {', '.join(sorted(forwarded, key=vtuple))}")
    refused = {r[1][0].split("=")[1] for r in REC.of("conflicts") if r[1][0].startswith("cuda_arch=")}
    check(refused == (set(cuda_cls.cuda_arch_values) - forwarded) | {"none"},
          f"every other cuda_arch of CudaPackage refused ({len(refused)} conflicts, none included)")
    kk = [r for r in deps if r[1][0].startswith("kokkos-kernels")]
    check(kk and all("+blas" in (r[2]["when"] or "") for r in kk),
          f"kokkos-kernels only with +blas ({len(kk)} depends_on)")
    hdf5 = {r[2]["when"]: r[1][0] for r in deps if r[1][0].startswith("hdf5")}
    check(hdf5.get("~mpi", "").endswith("~mpi") and hdf5.get("+mpi", "").endswith("+mpi"),
          f"hdf5 follows mpi ({hdf5})")
    tests = sorted(r[1][0] for r in deps if r[2].get("type") == "test")
    check("googletest" in tests, f"test-only dependencies: {', '.join(tests)}")

    # cmake_args / setup_build_environment on stand-in concrete specs.
    def run(cxxstd, mpi, blas, cuda):
        pkg = cls.__new__(cls)
        kokkos_pkg = types.SimpleNamespace(kokkos_cxx="/k/bin/nvcc_wrapper" if cuda else "/spack/c++")
        variants = {"mpi": mpi, "blas": blas, "openmp": True, "cuda": cuda}
        if cuda:
            variants["cuda_arch"] = ("90",)
        pkg.spec = FakeSpec(variants, {"kokkos": FakeSpec({"cxxstd": cxxstd}, package=kokkos_pkg)})
        pkg.run_tests = False
        args = pkg.cmake_args()
        env = {}
        pkg.setup_build_environment(types.SimpleNamespace(set=lambda k, v: env.__setitem__(k, v)))
        return args, env

    for on, spec, extra, want_env in ((True, "cxxstd=20 +mpi +blas +cuda cuda_arch=90",
                                       ["-DCMAKE_CXX_COMPILER:STRING=/k/bin/nvcc_wrapper",
                                        "-DDISCOUNT_ENABLE_TESTS:BOOL=OFF"], {"NVCC_WRAPPER_DEFAULT_ARCH": "sm_90"}),
                                      (False, "cxxstd=17 ~mpi ~blas ~cuda", [], {})):
        args, env = run("20" if on else "17", on, on, on)
        flag = "ON" if on else "OFF"
        want = [f"-DCMAKE_CXX_STANDARD:STRING={'20' if on else '17'}", f"-DDISCOUNT_ENABLE_MPI:BOOL={flag}",
                f"-DDISCOUNT_ENABLE_KOKKOS_KERNELS:BOOL={flag}"] + extra
        check(all(w in args for w in want) and env == want_env,
              f"kokkos {spec} -> " + " ".join(args) + (f"; env {env}" if env else ""))


# ---------------------------------------------------------------- part B


def part_b(source, module):
    print(f"Part B: against spack/spack-packages {source.commit} ({source.date})")
    cuda_info = parse_cuda_build_system(source)
    cache = {}
    own_variants = {r[1][0] for r in REC.of("variant")} | {"cuda", "cuda_arch"}

    def info(name):
        return parse_package(source, name, cache, cuda_info)

    # The version range a package is held to everywhere: its unconditional depends_on or, for a
    # package present only under one of this recipe's variants (kokkos-kernels with +blas), the
    # first depends_on that brings it in.
    base = {}
    for unconditional in (True, False):
        for _, args, kwargs in REC.of("depends_on"):
            when_nodes = parse_spec(kwargs.get("when") or "")
            if (not when_nodes) != unconditional or any(w["name"] for w in when_nodes):
                continue
            for n in parse_spec(args[0]):
                if n["name"] and n["versions"]:
                    base.setdefault(n["name"], n["versions"])

    def versions_for(name, *ranges):
        pi = info(name)
        return sorted((v for v in pi.versions if all(in_range(v, r) for r in ranges if r)), key=vtuple)

    def check_node(n, context, when_nodes, dead_ok, passed):
        """Checks one node of a spec; appends what passed to `passed`; False if it can never match."""
        name = n["name"]
        if name is None:
            for var, val in n["variants"].items():
                if not require(var in own_variants, f"{context}: own variant {var}"):
                    continue
                if var == "cuda_arch" and val != "none":
                    if require(val in cuda_info["archs"], f"{context}: cuda_arch={val} is a CudaPackage value"):
                        passed.append(f"own cuda_arch={val} (a CudaPackage value)")
                else:
                    passed.append(f"own {'+' + var if val is True else '~' + var if val is False else var + '=' + val}")
            return True
        pi = info(name)
        if pi is None or pi.tables.get("virtual") is True:
            passed.append(f"{name}: virtual, not checked")
            return True
        ranges = [base.get(name), n["versions"]] + [w["versions"] for w in when_nodes if w["name"] == name]
        vs = versions_for(name, *ranges)
        shown = " & ".join(dict.fromkeys(r for r in ranges if r)) or "any"
        live = bool(vs)
        if live:
            passed.append(f"{name}@{shown}: {len(vs)} versions ({vs[0]}..{vs[-1]})")
        else:
            (note if dead_ok else fail)(f"{context}: {name}@{shown} matches no version of builtin {name}"
                                        + (" (never applies with this repository)" if dead_ok else ""))
            # Still check the variants, against the versions the recipe allows at all.
            vs = versions_for(name, base.get(name), n["versions"] if dead_ok else None)
            if not vs:
                return False
        for var, val in n["variants"].items():
            decls = pi.variants.get(var)
            if not require(decls is not None, f"{context}: {name} has variant {var}"):
                continue
            usable = []
            for vwhen, values in decls:
                m = re.search(r"@([^\s+~^%]+)", vwhen.split("^")[0]) if vwhen else None
                if not m or any(in_range(v, m.group(1)) for v in vs):
                    usable.append((vwhen, values))
            if not require(usable, f"{context}: {name} variant {var} exists for some of those versions"):
                continue
            whens = ", ".join(sorted({w for w, _ in usable if w})) or "always"
            if isinstance(val, bool):
                passed.append(f"{name} {'+' if val else '~'}{var} (variant when {whens})")
            elif any(values is None for _, values in usable):
                passed.append(f"{name} {var}={val} (free-form values)")
            else:
                allowed = {str(x) for _, values in usable for x in values}
                if require(val in allowed, f"{context}: {name} {var}={val} is one of {sorted(allowed, key=str)}"):
                    passed.append(f"{name} {var}={val} (one of {len(allowed)} values, when {whens})")
        return live

    grouped = {}
    for directive, args, kwargs in REC.records:
        if directive not in ("depends_on", "requires", "conflicts"):
            continue
        when = kwargs.get("when") or ""
        context = f"{directive}({args[0]!r}{', when=' + repr(when) if when else ''})"
        when_nodes = parse_spec(when) if when else []
        passed = []
        live = all([check_node(w, context, when_nodes, True, passed) for w in when_nodes])
        for n in parse_spec(args[0]):
            check_node(n, context, when_nodes, not live, passed)
        if passed:
            # Directives that differ only in their cuda_arch value print as one line.
            arch = re.search(r"cuda_arch=(\w+)", context)
            key = (re.sub(r"cuda_arch=\w+", "cuda_arch=*", context),
                   re.sub(r"cuda_arch=\w+", "cuda_arch=*", "; ".join(dict.fromkeys(passed))))
            grouped.setdefault(key, []).append(arch.group(1) if arch else None)
    for (context, text), archs in grouped.items():
        label = f" [{len(archs)}x, cuda_arch = {', '.join(archs)}]" if archs[0] else ""
        ok(f"{context}{label}: {text}")

    # cuda_arch: each forwarded value exists in kokkos' map with the same version condition.
    kokkos = info("kokkos")
    kmap = kokkos.tables.get("spack_cuda_arch_map", {})
    for arch, cond in module.KOKKOS_CUDA_ARCHS.items():
        entry = kmap.get(arch)
        theirs = (entry[1] if isinstance(entry, tuple) else None) if entry else "absent"
        check(entry is not None and (theirs or "") == cond,
              f"cuda_arch={arch}: kokkos maps it to {entry[0] if isinstance(entry, tuple) else entry}"
              f" when {theirs or 'any version'}; recipe says {cond or 'any version'}")
    # The CUDA 13 bound the recipe mirrors.
    theirs = [c for c in kokkos.conflicts if c[0].startswith("^cuda@13")]
    check(theirs, f"builtin kokkos sets {', '.join(f'conflicts({s!r}, when={w!r})' for s, w in theirs)}")
    for s, w in theirs:
        hi = w.lstrip("@").split(":")[-1]
        check(any(f"^kokkos@3.4.02:{hi}" in (r[2]["when"] or "") for r in REC.of("conflicts")
                  if r[1][0] == s),
              f"the recipe's CUDA 13 conflict ends at the same Kokkos ({hi})")
    for name in ("kokkos", "kokkos-kernels", "kokkos-nvcc-wrapper"):
        vs = sorted(info(name).versions, key=vtuple)
        print(f"        builtin {name}: {len(vs)} versions, {vs[0]} .. {vs[-1]}; 3.4.01 "
              + ("present" if "3.4.01" in vs else "absent"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spack-packages", metavar="PATH",
                    help="checkout or bare git directory of spack/spack-packages (part B)")
    ap.add_argument("--rev", default="HEAD", help="commit of spack-packages to check against")
    opts = ap.parse_args()
    source = None
    archs = STAND_IN_CUDA_ARCHS
    if opts.spack_packages:
        try:
            source = Source(opts.spack_packages, opts.rev)
        except (subprocess.CalledProcessError, OSError) as err:
            print(f"check_recipe: cannot read {opts.spack_packages} at {opts.rev}: {err}", file=sys.stderr)
            return 2
        if source.read(f"{BUILTIN}/repo.yaml") is None:
            print(f"check_recipe: {opts.spack_packages} has no {BUILTIN}/repo.yaml", file=sys.stderr)
            return 2
        archs = parse_cuda_build_system(source)["archs"]
    module, cmake_cls, cuda_cls = load_recipe(archs)
    part_a(module, cmake_cls, cuda_cls)
    if source:
        part_b(source, module)
    print(f"check_recipe: {len(failures)} failed, {len(notes)} notes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
