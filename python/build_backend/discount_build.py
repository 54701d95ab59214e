"""The in-tree PEP 517 build backend of the discount_app Python package.

`pip install --no-build-isolation .` calls build_wheel() here: CMake builds
the module (python/CMakeLists.txt) in build/python-wheel, and the package
folder it lays out (discount_app/: the wrapper and the compiled _core) is
zipped into a wheel. Nothing is downloaded: CMake, a compiler, pybind11,
HDF5, yaml-cpp and Kokkos must already be there (Debian packages and
scripts/deps.sh's Kokkos under deps/install/openmp, or a site's Kokkos).

Settings (environment, or pip's --config-settings KEY=VALUE):
  DISCOUNT_CMAKE_ARGS / cmake-args   extra CMake arguments, e.g.
                                     "-DKokkos_ROOT=/opt/kokkos -DCMAKE_CXX_COMPILER=..."
  DISCOUNT_BUILD_DIR  / build-dir    the CMake build folder (default build/python-wheel); one
                                     configured already is only built (DISCOUNT_RECONFIGURE=1: configured again)
  CMAKE_BUILD_PARALLEL_LEVEL         parallel build jobs (CMake's own variable)
Without a Kokkos_ROOT or CMAKE_PREFIX_PATH, deps/install/openmp is used when present.
"""
import base64
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "discount_app"


def _project():
    text = open(os.path.join(SOURCE, "pyproject.toml")).read()
    version = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)
    summary = re.search(r'^description\s*=\s*"([^"]+)"', text, re.M).group(1)
    requires = re.findall(r'"([A-Za-z0-9_.\-<>=]+)"', re.search(r"^dependencies\s*=\s*\[([^\]]*)\]", text, re.M).group(1))
    return version, summary, requires


def _setting(config_settings, key, env):
    if config_settings and key in config_settings:
        return config_settings[key]
    return os.environ.get(env, "")


def _tag():
    impl = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{platform}"


def _build(config_settings):
    build = _setting(config_settings, "build-dir", "DISCOUNT_BUILD_DIR") or os.path.join(SOURCE, "build", "python-wheel")
    args = ["cmake", "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DDISCOUNT_ENABLE_PYTHON=ON",
            "-DDISCOUNT_ENABLE_TESTS=OFF", "-DDISCOUNT_BUILD_BENCH=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
    if shutil.which("ninja") and not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        args += ["-G", "Ninja"]
    deps = os.path.join(SOURCE, "deps", "install", "openmp")
    if not os.environ.get("Kokkos_ROOT") and not os.environ.get("CMAKE_PREFIX_PATH") and os.path.isdir(deps):
        args.append(f"-DCMAKE_PREFIX_PATH={deps}")
    args += shlex.split(_setting(config_settings, "cmake-args", "DISCOUNT_CMAKE_ARGS"))
    # A build folder configured already (.ci/run passes the OpenMP build's) is
    # built as it is: configuring it again would change its settings.
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")) or os.environ.get("DISCOUNT_RECONFIGURE"):
        subprocess.run(args, check=True, stdout=sys.stderr)
    subprocess.run(["cmake", "--build", build, "--target", "discount_python_core"], check=True, stdout=sys.stderr)
    return os.path.join(build, "python", NAME)


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


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
    package = _build(config_settings)
    info = f"{NAME}-{version}.dist-info"
    wheel_name = f"{NAME}-{version}-{_tag()}.whl"
    files = {}
    for entry in sorted(os.listdir(package)):
        if entry.endswith((".py", ".typed")) or (entry.startswith("_core") and entry.endswith(".so")):
            with open(os.path.join(package, entry), "rb") as f:
                files[f"{NAME}/{entry}"] = f.read()
    if not any(name.endswith(".so") for name in files):
        raise RuntimeError(f"no compiled module in {package}: did the CMake build make discount_python_core?")
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
    return wheel_name
