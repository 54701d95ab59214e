"""The build backend's decisions (python/build_backend/discount_build.py), without building:
where Kokkos comes from, which build needs are missing, and whether `pip install .` runs the
bootstrap (scripts/deps.sh) itself or stops with the command to run."""
import importlib.util
import os

import pytest

BACKEND = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "build_backend",
                       "discount_build.py")
spec = importlib.util.spec_from_file_location("discount_build_under_test", BACKEND)
backend = importlib.util.module_from_spec(spec)
spec.loader.exec_module(backend)

SRC = "/src/discount"
DEPS = f"{SRC}/deps/install/openmp"


def disk(*files):
    """exists() over a set of files and the folders above them."""
    present = set()
    for f in files:
        while f not in ("/", ""):
            present.add(f)
            f = os.path.dirname(f)
    return lambda path: os.path.normpath(path) in present


def kokkos_at(prefix, lib="lib"):
    return f"{prefix}/{lib}/cmake/Kokkos/KokkosConfig.cmake"


def test_cmake_definitions():
    assert backend.cmake_definitions(["-DKokkos_ROOT=/a", "-DCMAKE_PREFIX_PATH:PATH=/b;/c", "-G", "Ninja",
                                      "-D", "X=1"]) == {"Kokkos_ROOT": "/a", "CMAKE_PREFIX_PATH": "/b;/c", "X": "1"}


def test_nothing_found_bootstraps():
    assert backend.find_kokkos({}, [], SRC, disk()) == ("bootstrap", DEPS, None)


def test_bootstrap_install_used_once_complete():
    # deps.sh writes .stamp after both projects are installed: without it, bootstrap again.
    assert backend.find_kokkos({}, [], SRC, disk(kokkos_at(DEPS))) == ("bootstrap", DEPS, None)
    assert backend.find_kokkos({}, [], SRC, disk(kokkos_at(DEPS), f"{DEPS}/.stamp")) == ("use", DEPS, "bootstrap")


def test_kokkos_root_wins_and_must_hold_kokkos():
    exists = disk(kokkos_at("/opt/kokkos", "lib64"), kokkos_at(DEPS), f"{DEPS}/.stamp")
    assert backend.find_kokkos({"Kokkos_ROOT": "/opt/kokkos"}, [], SRC, exists) == ("use", "/opt/kokkos", "Kokkos_ROOT")
    with pytest.raises(backend.Stop, match=r"Kokkos_ROOT=/opt/nothing has no KokkosConfig.cmake"):
        backend.find_kokkos({"Kokkos_ROOT": "/opt/nothing"}, [], SRC, exists)
    # A -D argument (cmake-args) goes before the environment.
    assert backend.find_kokkos({"Kokkos_ROOT": "/opt/nothing"}, ["-DKokkos_ROOT=/opt/kokkos"], SRC, exists)[1] \
        == "/opt/kokkos"


def test_kokkos_dir_is_the_config_folder():
    folder = "/opt/k/lib/cmake/Kokkos"
    exists = disk(f"{folder}/KokkosConfig.cmake")
    assert backend.find_kokkos({"Kokkos_DIR": folder}, [], SRC, exists) == ("use", folder, "Kokkos_DIR")


def test_prefix_path_entries_without_kokkos_are_passed_over():
    lib = f"lib/{backend.MULTIARCH}" if backend.MULTIARCH else "lib"   # Debian's layout
    exists = disk(f"/spack/kokkos/{lib}/cmake/Kokkos/kokkos-config.cmake")
    env = {"CMAKE_PREFIX_PATH": os.pathsep.join(["/spack/hdf5", "/spack/kokkos"])}
    assert backend.find_kokkos(env, [], SRC, exists) == ("use", "/spack/kokkos", "CMAKE_PREFIX_PATH")
    assert backend.find_kokkos({"CMAKE_PREFIX_PATH": "/spack/hdf5"}, [], SRC, exists)[0] == "bootstrap"


DEBIAN = disk("/usr/include/python3.11/Python.h", "/usr/lib/cmake/pybind11/pybind11Config.cmake",
              "/usr/include/hdf5/serial/hdf5.h", "/usr/share/cmake/yaml-cpp/yaml-cpp-config.cmake")


def which_of(*tools):
    return lambda name: f"/usr/bin/{name}" if name in tools else None


def test_build_needs_all_there():
    assert backend.missing_needs({}, [], DEBIAN, which_of("cmake", "g++"), "/usr/include/python3.11") == []


def test_build_needs_missing_named_with_their_packages():
    missing = backend.missing_needs({}, [], disk("/usr/include/python3.11/Python.h"), which_of("c++"),
                                    "/usr/include/python3.11")
    assert missing == [("CMake", "cmake"), ("pybind11", "pybind11-dev"), ("HDF5", "libhdf5-dev"),
                       ("yaml-cpp", "libyaml-cpp-dev")]
    # CXX names the compiler; HDF5_ROOT and a prefix path count as given.
    env = {"CXX": "clang++-16 -stdlib=libc++", "HDF5_ROOT": "/opt/hdf5", "CMAKE_PREFIX_PATH": "/opt/site"}
    exists = disk("/usr/include/python3.11/Python.h", "/opt/site/lib/cmake/pybind11/pybind11Config.cmake",
                  "/opt/site/lib64/cmake/yaml-cpp/yaml-cppConfig.cmake")
    assert backend.missing_needs(env, [], exists, which_of("cmake", "g++"), "/usr/include/python3.11") \
        == [("a C++ compiler", "g++")]


def action(**kw):
    args = dict(is_root=False, has_apt=True, has_sudo=True, has_sources=False, missing=[],
                bootstrap_cmd="scripts/deps.sh", pip_cmd="venv/bin/pip install .")
    args.update(kw)
    return backend.bootstrap_action(**args)


def test_root_with_apt_runs_the_whole_bootstrap():
    assert action(is_root=True, missing=[("HDF5", "libhdf5-dev")]) == ["scripts/deps.sh"]


def test_user_with_packages_installed_builds_kokkos_only():
    assert action() == ["scripts/deps.sh", "--no-apt"]
    assert action(has_apt=False, has_sources=True) == ["scripts/deps.sh", "--no-apt"]


def test_user_with_packages_missing_is_told_the_command():
    with pytest.raises(backend.Stop) as stop:
        action(missing=[("CMake", "cmake"), ("HDF5", "libhdf5-dev")])
    assert str(stop.value) == ("Kokkos and Debian packages (cmake libhdf5-dev) are missing and installing packages "
                               "needs root: run `sudo scripts/deps.sh`, then `venv/bin/pip install .`")
    with pytest.raises(backend.Stop, match=r"run `scripts/deps.sh` as root, then"):
        action(has_sudo=False, missing=[("CMake", "cmake")])


def test_no_apt_and_no_sources_asks_for_kokkos_root():
    with pytest.raises(backend.Stop, match=r"set Kokkos_ROOT to a Kokkos install prefix, then `venv/bin/pip install .`"):
        action(has_apt=False)
    with pytest.raises(backend.Stop, match=r"Kokkos and CMake are missing \(no apt-get here\)"):
        action(is_root=True, has_apt=False, has_sources=True, missing=[("CMake", "cmake")])


def test_bootstrap_prefix_goes_first_in_a_given_prefix_path():
    assert backend.with_prefix(["-G", "Ninja"], DEPS) == [f"-DCMAKE_PREFIX_PATH={DEPS}", "-G", "Ninja"]
    assert backend.with_prefix(["-DCMAKE_PREFIX_PATH:PATH=/opt/site"], DEPS) \
        == [f"-DCMAKE_PREFIX_PATH:PATH={DEPS};/opt/site"]
