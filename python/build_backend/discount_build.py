"""The in-tree PEP 517 build backend of the discount_app Python package.

`pip install .` calls build_wheel() here (standard library only: nothing is
fetched, with or without build isolation). Before CMake runs it

  1. finds Kokkos: Kokkos_ROOT, Kokkos_DIR, a CMAKE_PREFIX_PATH entry (from
     the environment or the cmake-args setting), else the bootstrap's
     deps/install/openmp. With none of them it runs the bootstrap,
     scripts/deps.sh (as root: Debian packages, then Kokkos 3.4.01 built into
     deps/install/openmp; otherwise `--no-apt`: Kokkos only). Where it cannot
     (not root and build packages missing, or no apt-get and no deps/src) it
     stops with one line naming the command to run;
  2. checks the other build needs (CMake, a C++ compiler, Python's headers,
     pybind11, HDF5, yaml-cpp), stopping with one line naming what to install;

then CMake builds the module (python/CMakeLists.txt) in build/python-wheel,
and the package folder it lays out (discount_app/: the wrapper and the
compiled _core) is zipped into a wheel.

pip shows a backend's output only with -v (and on failure). Progress (the
bootstrap's steps, CMake's percentages) goes to the terminal (/dev/tty) when
there is one, else to stderr; everything, tools' output included, goes to
<build folder>/pip-build.log, which a failure names.

Settings (environment, or pip's --config-settings KEY=VALUE):
  Kokkos_ROOT                        a Kokkos install prefix (a site's Kokkos): no bootstrap
  DISCOUNT_CMAKE_ARGS / cmake-args   extra CMake arguments, e.g.
                                     "-DKokkos_ROOT=/opt/kokkos -DCMAKE_CXX_COMPILER=..."
  DISCOUNT_BUILD_DIR  / build-dir    the CMake build folder (default build/python-wheel); one
                                     configured already is only built (DISCOUNT_RECONFIGURE=1: configured again)
  DISCOUNT_NO_BOOTSTRAP=1            never run scripts/deps.sh: stop with the command instead
  DISCOUNT_SKIP_CHECKS=1             leave the build needs to CMake (a layout the checks do not know)
  DISCOUNT_PROGRESS_TTY=0            progress to stderr (pip -v shows it), not to the terminal
  CMAKE_BUILD_PARALLEL_LEVEL         parallel build jobs (default: the number of CPUs)
"""
import base64
import collections
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
import zipfile

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "discount_app"
BOOTSTRAP = os.path.join("scripts", "deps.sh")
DEPS_PREFIX = os.path.join("deps", "install", "openmp")   # what the bootstrap builds
LOG_NAME = "pip-build.log"
MULTIARCH = sysconfig.get_config_var("MULTIARCH") or ""
SYSTEM_PREFIXES = ["/usr/local", "/usr"]


class Stop(Exception):
    """A build need is missing: one line saying which, and the command that provides it."""


# ------------------------------------------------------------------ decisions
# Pure functions of the environment, the CMake arguments and what exists on
# disk (`exists`, `which` are passed in): tests/python/test_build_backend.py.

def cmake_definitions(cmake_args):
    """{NAME: value} of the -DNAME[:TYPE]=value arguments."""
    found = {}
    args = list(cmake_args)
    for i, arg in enumerate(args):
        if arg == "-D" and i + 1 < len(args):
            arg = "-D" + args[i + 1]
        m = re.match(r"^-D([A-Za-z0-9_.+-]+)(?::[A-Za-z]+)?=(.*)$", arg)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def config_dirs(prefix, package):
    """Where find_package(<package> CONFIG) looks below one prefix (the common layouts)."""
    dirs = [prefix]
    for lib in ["lib", "lib64"] + ([os.path.join("lib", MULTIARCH)] if MULTIARCH else []) + ["share"]:
        dirs.append(os.path.join(prefix, lib, "cmake", package))
    return dirs


def has_config(prefix, package, exists):
    names = (f"{package}Config.cmake", f"{package.lower()}-config.cmake")
    return any(exists(os.path.join(d, n)) for d in config_dirs(prefix, package) for n in names)


def prefix_path(env, definitions):
    """CMAKE_PREFIX_PATH's entries: the -D value (';'-separated) first, then the environment's (':')."""
    entries = [p for p in definitions.get("CMAKE_PREFIX_PATH", "").split(";") if p]
    entries += [p for p in env.get("CMAKE_PREFIX_PATH", "").split(os.pathsep) if p]
    return entries


def find_kokkos(env, cmake_args, source, exists):
    """Where Kokkos comes from: ("use", prefix, origin) or ("bootstrap", deps prefix, None).

    Kokkos_ROOT or Kokkos_DIR (a -D argument, else the environment) must hold a
    Kokkos (Stop otherwise); CMAKE_PREFIX_PATH entries are used when one does;
    then the bootstrap's install, once complete (its .stamp is written last)."""
    definitions = cmake_definitions(cmake_args)
    for var in ("Kokkos_ROOT", "Kokkos_DIR"):
        value = definitions.get(var) or env.get(var)
        if not value:
            continue
        if has_config(value, "Kokkos", exists):
            return ("use", value, var)
        where = "below it" if var == "Kokkos_ROOT" else "in it"
        raise Stop(f"{var}={value} has no KokkosConfig.cmake {where}: point {var} at a Kokkos install "
                   f"(the prefix given to its `cmake --install`), or unset it to build the project's Kokkos")
    for prefix in prefix_path(env, definitions):
        if has_config(prefix, "Kokkos", exists):
            return ("use", prefix, "CMAKE_PREFIX_PATH")
    deps = os.path.join(source, DEPS_PREFIX)
    if exists(os.path.join(deps, ".stamp")) and has_config(deps, "Kokkos", exists):
        return ("use", deps, "bootstrap")
    return ("bootstrap", deps, None)


# What CMake needs besides Kokkos: (what, Debian package, probe).
def missing_needs(env, cmake_args, exists, which, python_include):
    """[(what, Debian package)] of the build needs not found."""
    definitions = cmake_definitions(cmake_args)
    prefixes = prefix_path(env, definitions) + SYSTEM_PREFIXES

    def given(*names):
        return any(definitions.get(n) or env.get(n) for n in names)

    def config(package):
        return any(has_config(p, package, exists) for p in prefixes)

    def header(*relative):
        includes = [os.path.join(p, "include") for p in prefixes]
        return any(exists(os.path.join(i, r)) for i in includes for r in relative)

    compiler = definitions.get("CMAKE_CXX_COMPILER") or env.get("CXX") or ""
    compiler = shlex.split(compiler)[0] if compiler.strip() else ""
    checks = [
        ("CMake", "cmake", bool(which("cmake"))),
        ("a C++ compiler", "g++",
         (bool(which(compiler)) or exists(compiler)) if compiler else any(which(c) for c in ("c++", "g++", "clang++"))),
        ("Python's headers (Python.h)", "python3-dev",
         given("Python3_INCLUDE_DIR") or exists(os.path.join(python_include, "Python.h"))),
        ("pybind11", "pybind11-dev", given("pybind11_DIR", "pybind11_ROOT") or config("pybind11")),
        ("HDF5", "libhdf5-dev",
         given("HDF5_ROOT", "HDF5_DIR") or bool(which("h5cc") or which("h5pcc"))
         or header("hdf5.h", "hdf5/serial/hdf5.h")),
        ("yaml-cpp", "libyaml-cpp-dev", given("yaml-cpp_DIR", "yaml-cpp_ROOT") or config("yaml-cpp")),
    ]
    return [(what, package) for what, package, ok in checks if not ok]


def bootstrap_action(*, is_root, has_apt, has_sudo, has_sources, missing, bootstrap_cmd, pip_cmd):
    """The bootstrap to run, as argv after `bash`, or Stop with the command for the user.

    Root with apt-get: scripts/deps.sh (installs what is missing, builds Kokkos).
    Otherwise Kokkos only (--no-apt), which needs every build package installed,
    and apt-get (to fetch Kokkos's sources) or deps/src carried in."""
    if is_root and has_apt:
        return [bootstrap_cmd]
    packages = " ".join(p for _, p in missing)
    if missing and has_apt:
        how = f"`sudo {bootstrap_cmd}`" if has_sudo else f"`{bootstrap_cmd}` as root"
        raise Stop(f"Kokkos and Debian packages ({packages}) are missing and installing packages needs root: "
                   f"run {how}, then `{pip_cmd}`")
    if missing:
        raise Stop(f"Kokkos and {', '.join(w for w, _ in missing)} are missing (no apt-get here): install them, "
                   f"set Kokkos_ROOT to a Kokkos install prefix, then `{pip_cmd}`")
    if not has_apt and not has_sources:
        raise Stop(f"Kokkos not found, and neither apt-get nor deps/src is here to build it: "
                   f"set Kokkos_ROOT to a Kokkos install prefix, then `{pip_cmd}`")
    return [bootstrap_cmd, "--no-apt"]


# ------------------------------------------------------------------ progress

class Progress:
    """Progress lines for the person at the terminal, and a log of everything.

    pip keeps a backend's stdout and stderr to itself unless -v is given (and
    shows them when the build fails), so lines go to /dev/tty when this process
    has a terminal, else to stderr. The log file gets every line."""

    PREFIX = "[discount_app] "

    def __init__(self, log_path):
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
        self.log_path = log_path
        self.log = open(log_path, "w", buffering=1, errors="replace")
        self.lock = threading.Lock()
        self.tty = None
        if os.environ.get("DISCOUNT_PROGRESS_TTY", "1") != "0":
            try:
                self.tty = open("/dev/tty", "w", buffering=1, errors="replace")
            except OSError:
                pass
        self.ansi = self.tty is not None and os.environ.get("TERM", "") not in ("", "dumb")
        self.started = False     # pip's "Building wheel ... " line is still open on the terminal
        if self.tty:
            # pip writes "Building wheel for ... " without flushing it, and flushes it as its
            # spinner turns, which a line of output makes it do: one line, and a moment for
            # pip to show it, so that the lines here follow pip's rather than precede it.
            print(f"discount_app: progress on the terminal, the whole output in {log_path}", flush=True)
            time.sleep(0.3)
        self.transient = False   # a status line is showing (ANSI terminal: rewritten in place)
        self.bucket = {}         # per status kind: the last 10% step printed (no ANSI)

    def _tty_write(self, text, end):
        lead = "\n" if not self.started else ("\r\x1b[K" if self.ansi and self.transient else "")
        self.started = True
        if not end:
            try:
                width = os.get_terminal_size(self.tty.fileno()).columns
            except OSError:
                width = 0
            text = text[:(width if width >= 40 else 120) - 1]
        self.tty.write(lead + text + end)
        self.tty.flush()
        self.transient = not end

    def note(self, text):
        """A lasting line: a step begins or ends."""
        with self.lock:
            self.log.write(self.PREFIX + text + "\n")
            if self.tty:
                self._tty_write(self.PREFIX + text, "\n")
            else:
                sys.stderr.write(self.PREFIX + text + "\n")
                sys.stderr.flush()

    def status(self, kind, percent, text):
        """A percentage line: rewritten in place on a terminal, else printed every 10%."""
        line = f"{self.PREFIX}{kind} {percent:3d}% {text}".rstrip()
        with self.lock:
            if self.tty and self.ansi:
                self._tty_write(line, "")
                return
            step = percent // 10
            if self.bucket.get(kind) == step:
                return
            self.bucket[kind] = step
            if self.tty:
                self._tty_write(line, "\n")
            else:
                sys.stderr.write(line + "\n")
                sys.stderr.flush()

    def output(self, line):
        with self.lock:
            self.log.write(line if line.endswith("\n") else line + "\n")

    def close(self):
        with self.lock:
            if self.tty:
                if self.transient and self.ansi:
                    self.tty.write("\r\x1b[K")
                self.tty.close()
                self.tty = None
            self.log.close()


PERCENT = re.compile(r"^\[\s*(\d+)%\]\s*(.*)$")
# Ninja prints "[ 45%] ..." like Make's lines (CMake's percentages) with this status format.
NINJA_STATUS = "[%p] "


def _user_path(path, env):
    """`path` as the person who ran pip would type it (relative to their folder when below it)."""
    here = env.get("PWD", "")
    if here and os.path.isabs(here):
        rel = os.path.relpath(path, here)
        if not rel.startswith(".."):
            return rel
    return path


def _pip_command(env):
    pip = "pip"
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):   # a virtual environment
        pip = os.path.join(_user_path(sys.prefix, env), "bin", "pip")
    target = _user_path(SOURCE, env)
    return f"{pip} install {target if target != '.' else '.'}"


def _fail(progress, what, tail, advice):
    """Stops the build: the tool's lines that say why, then one line naming the log."""
    if tail:
        sys.stderr.write("".join(l if l.endswith("\n") else l + "\n" for l in tail))
    log = _user_path(progress.log_path, os.environ)
    progress.output(f"{what} failed")
    progress.close()
    raise SystemExit(f"discount_app: {what} failed (full log: {log}); {advice}")


def _run(progress, cmd, what, advice, env=None, on_line=None, kind="build", first_error_on=True):
    """Runs cmd with its output in the log; percentage lines as progress. On failure the
    lines from the first error on (CMake, a compiler, ninja) are shown, else the last ones
    (scripts/deps.sh shows the end of the failed step's log itself)."""
    progress.output("$ " + " ".join(shlex.quote(c) for c in cmd))
    kept = collections.deque(maxlen=400)
    first_error = []
    proc = subprocess.Popen(cmd, cwd=SOURCE, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1)
    for line in proc.stdout:
        progress.output(line)
        kept.append(line)
        if first_error_on and not first_error and re.search(r"CMake Error|^FAILED:|error:|^\[deps\] ERROR", line):
            first_error.extend(list(kept)[-3:])
        elif first_error and len(first_error) < 30:
            first_error.append(line)
        m = PERCENT.match(line)
        if m:
            progress.status(kind, int(m.group(1)), m.group(2))
        elif on_line:
            on_line(line)
    if proc.wait() != 0:
        _fail(progress, what, first_error or list(kept)[-25:], advice)


def _jobs():
    level = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "")
    return level if level.isdigit() else str(os.cpu_count() or 2)


def _bootstrap(progress, options, env):
    """scripts/deps.sh with its steps ([deps] lines) and its builds' percentages as progress."""
    run_env = dict(os.environ, NINJA_STATUS=NINJA_STATUS)
    if env.get("CMAKE_BUILD_PARALLEL_LEVEL", "").isdigit():
        options = options + ["--jobs", env["CMAKE_BUILD_PARALLEL_LEVEL"]]
    shown = " ".join([_user_path(os.path.join(SOURCE, BOOTSTRAP), env)] + options)
    progress.note(f"Kokkos not found: bootstrapping it with `{shown}` "
                  f"(or set Kokkos_ROOT to an installed Kokkos)")
    logs = os.path.join(SOURCE, "deps", "logs")
    started = time.time()
    done = threading.Event()

    def watch():   # deps.sh keeps its builds' output in deps/logs/openmp-<project>-build.log
        last = None
        while not done.wait(1.0):
            try:
                paths = [os.path.join(logs, n) for n in os.listdir(logs)
                         if n.startswith("openmp-") and n.endswith("-build.log")]
                path = max(paths, key=os.path.getmtime, default=None)   # the build under way
                if not path or os.path.getmtime(path) < started:
                    continue
                with open(path, "rb") as f:
                    f.seek(max(0, os.path.getsize(path) - 4096))
                    tail = f.read().decode(errors="replace").splitlines()
            except OSError:
                continue
            for line in reversed(tail):
                m = PERCENT.match(line)
                if m:
                    if line != last:
                        last = line
                        project = os.path.basename(path)[len("openmp-"):-len("-build.log")]
                        progress.status(f"deps: {project}", int(m.group(1)), m.group(2))
                    break

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()

    def on_line(line):
        if line.startswith("[deps] "):
            progress.note("deps: " + line[len("[deps] "):].rstrip())

    try:
        _run(progress, ["bash", os.path.join(SOURCE, BOOTSTRAP)] + options, BOOTSTRAP,
             f"see the lines above and deps/logs/, then run `{_pip_command(os.environ)}` again",
             env=run_env, on_line=on_line, kind="deps", first_error_on=False)
    finally:
        done.set()
        watcher.join()
    progress.note(f"deps: done in {time.time() - started:.0f} s")


def _setting(config_settings, key, env):
    if config_settings and key in config_settings:
        return config_settings[key]
    return os.environ.get(env, "")


def _tag():
    impl = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{platform}"


def _prepare(progress, cmake_args):
    """Kokkos (found, or bootstrapped) and the other build needs; the CMake arguments for Kokkos."""
    env = os.environ
    skip_checks = env.get("DISCOUNT_SKIP_CHECKS", "") not in ("", "0")
    action, prefix, origin = find_kokkos(env, cmake_args, SOURCE, os.path.exists)
    python_include = sysconfig.get_paths()["include"]
    if action == "bootstrap":
        missing = [] if skip_checks else missing_needs(env, cmake_args, os.path.exists, shutil.which, python_include)
        argv = bootstrap_action(
            is_root=os.geteuid() == 0, has_apt=bool(shutil.which("apt-get")), has_sudo=bool(shutil.which("sudo")),
            has_sources=os.path.exists(os.path.join(SOURCE, "deps", "src", "kokkos", "CMakeLists.txt")),
            missing=missing, bootstrap_cmd=_user_path(os.path.join(SOURCE, BOOTSTRAP), env),
            pip_cmd=_pip_command(env))
        if env.get("DISCOUNT_NO_BOOTSTRAP", "") not in ("", "0"):
            raise Stop(f"Kokkos not found (DISCOUNT_NO_BOOTSTRAP is set): run `{' '.join(argv)}`, "
                       f"or set Kokkos_ROOT to a Kokkos install prefix, then `{_pip_command(env)}`")
        _bootstrap(progress, argv[1:], env)
        action, prefix, origin = find_kokkos(env, cmake_args, SOURCE, os.path.exists)
        if action != "use":
            raise Stop(f"{BOOTSTRAP} finished but {DEPS_PREFIX} holds no complete Kokkos install; "
                       f"run `{_user_path(os.path.join(SOURCE, BOOTSTRAP), env)}` by hand to see why")
    progress.note(f"Kokkos: {_user_path(prefix, env)} "
                  f"({'from ' + origin if origin != 'bootstrap' else 'built by ' + BOOTSTRAP})")
    if not skip_checks:
        missing = missing_needs(env, cmake_args, os.path.exists, shutil.which, python_include)
        if missing:
            packages = " ".join(p for _, p in missing)
            what = ", ".join(w for w, _ in missing)
            if shutil.which("apt-get"):
                sudo = "" if os.geteuid() == 0 else "sudo "
                raise Stop(f"missing {what}: run `{sudo}apt-get install {packages}`, then `{_pip_command(env)}`")
            raise Stop(f"missing {what}: install them (or point CMAKE_PREFIX_PATH at them), "
                       f"then `{_pip_command(env)}` (DISCOUNT_SKIP_CHECKS=1 leaves this to CMake)")
    return prefix if origin == "bootstrap" else None


def with_prefix(cmake_args, prefix):
    """cmake_args with `prefix` first in CMAKE_PREFIX_PATH (merged into a -DCMAKE_PREFIX_PATH given)."""
    out, merged = [], False
    for arg in cmake_args:
        m = re.match(r"^-DCMAKE_PREFIX_PATH(:[A-Za-z]+)?=(.*)$", arg)
        if m and not merged:
            arg = f"-DCMAKE_PREFIX_PATH{m.group(1) or ''}={prefix};{m.group(2)}" if m.group(2) else \
                  f"-DCMAKE_PREFIX_PATH={prefix}"
            merged = True
        out.append(arg)
    return out if merged else [f"-DCMAKE_PREFIX_PATH={prefix}"] + out


def _check_configured_kokkos(build, cmake_args):
    """A configured build folder keeps the Kokkos it found: one given now elsewhere stops the build."""
    cached = ""
    with open(os.path.join(build, "CMakeCache.txt"), errors="replace") as f:
        for line in f:
            if line.startswith("Kokkos_DIR:"):
                cached = line.split("=", 1)[1].strip()
    definitions = cmake_definitions(cmake_args)
    for var in ("Kokkos_ROOT", "Kokkos_DIR"):
        given = definitions.get(var) or os.environ.get(var)
        if given and cached and not os.path.realpath(cached).startswith(os.path.realpath(given).rstrip("/") + "/") \
                and os.path.realpath(cached) != os.path.realpath(given):
            build_dir = _user_path(build, os.environ)
            raise Stop(f"{build_dir} was configured with the Kokkos in {cached}, not {var}={given}: "
                       f"remove {build_dir}, then `{_pip_command(os.environ)}`")


def _build(config_settings, progress):
    build = _setting(config_settings, "build-dir", "DISCOUNT_BUILD_DIR") or os.path.join(SOURCE, "build", "python-wheel")
    cache = os.path.exists(os.path.join(build, "CMakeCache.txt"))
    # A configure that failed leaves a cache but no build files: configured again.
    configured = cache and any(os.path.exists(os.path.join(build, f)) for f in ("build.ninja", "Makefile"))
    extra = shlex.split(_setting(config_settings, "cmake-args", "DISCOUNT_CMAKE_ARGS"))
    env = dict(os.environ, NINJA_STATUS=NINJA_STATUS)
    pip_cmd = _pip_command(os.environ)
    started = time.time()
    progress.note(f"building the Python module in {_user_path(build, os.environ)} "
                  f"(log: {_user_path(progress.log_path, os.environ)})")
    # A build folder configured already (.ci/run may pass the OpenMP build's) is
    # built as it is: configuring it again would change its settings.
    if configured:
        _check_configured_kokkos(build, extra)
    if not configured or os.environ.get("DISCOUNT_RECONFIGURE"):
        args = ["cmake", "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DDISCOUNT_ENABLE_PYTHON=ON",
                "-DDISCOUNT_ENABLE_TESTS=OFF", "-DDISCOUNT_BUILD_BENCH=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja") and not cache:
            args += ["-G", "Ninja"]
        prefix = _prepare(progress, extra)
        args += with_prefix(extra, prefix) if prefix else extra
        progress.note("configuring (CMake)")
        _run(progress, args, "CMake configure", f"fix what it names, then `{pip_cmd}`", env=env,
             on_line=lambda line: line.startswith("-- discount_app:") and progress.note(line[3:].rstrip()))
    _run(progress, ["cmake", "--build", build, "--target", "discount_python_core", "--parallel", _jobs()],
         "CMake build", f"fix what it names, then `{pip_cmd}`", env=env)
    progress.note(f"module built in {time.time() - started:.0f} s")
    return os.path.join(build, "python", NAME)


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _project():
    text = open(os.path.join(SOURCE, "pyproject.toml")).read()
    version = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)
    summary = re.search(r'^description\s*=\s*"([^"]+)"', text, re.M).group(1)
    requires = re.findall(r'"([A-Za-z0-9_.\-<>=]+)"', re.search(r"^dependencies\s*=\s*\[([^\]]*)\]", text, re.M).group(1))
    return version, summary, requires


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _metadata(version, summary, requires):
    lines = ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {version}", f"Summary: {summary}",
             "Requires-Python: >=3.8", "License: see LICENSE"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n"


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version, summary, requires = _project()
    info = f"{NAME}-{version}.dist-info"
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w") as f:
        f.write(_metadata(version, summary, requires))
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version, summary, requires = _project()
    build = _setting(config_settings, "build-dir", "DISCOUNT_BUILD_DIR") or os.path.join(SOURCE, "build", "python-wheel")
    progress = Progress(os.path.join(build, LOG_NAME))
    try:
        package = _build(config_settings, progress)
    except Stop as stop:
        progress.output(f"stopped: {stop}")
        progress.close()
        raise SystemExit(f"discount_app: {stop}") from None
    info = f"{NAME}-{version}.dist-info"
    wheel_name = f"{NAME}-{version}-{_tag()}.whl"
    files = {}
    for entry in sorted(os.listdir(package)):
        if entry.endswith((".py", ".typed")) or (entry.startswith("_core") and entry.endswith(".so")):
            with open(os.path.join(package, entry), "rb") as f:
                files[f"{NAME}/{entry}"] = f.read()
    if not any(name.endswith(".so") for name in files):
        progress.close()
        raise SystemExit(f"discount_app: no compiled module in {package}: the CMake build did not make "
                         f"discount_python_core (log: {progress.log_path})")
    files[f"{info}/METADATA"] = _metadata(version, summary, requires).encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: discount_build\nRoot-Is-Purelib: false\n"
                              f"Tag: {_tag()}\n").encode()
    record = "".join(f"{name},{_digest(data)},{len(data)}\n" for name, data in files.items())
    record += f"{info}/RECORD,,\n"
    files[f"{info}/RECORD"] = record.encode()
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
    progress.note(f"wheel {wheel_name} made")
    progress.close()
    return wheel_name
