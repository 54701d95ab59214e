# Spack recipe for discount_app, in the layout of Spack v1 package repositories
# (package API v2): spack_repo/<namespace>/packages/<name>/package.py.
# See packaging/spack/README.md; tests/spack/check_recipe.py checks it.
from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage

from spack.package import *

# The project's Kokkos 3.4.01 patches, all against the kokkos source tree (CUDA 13,
# nvcc_wrapper's default architecture, HOPPER90, CUDA MDRange grid limits, CMake's
# CUDAToolkit, GCC 13). The files beside this recipe are symbolic links into
# cmake/patches/, the copy the bootstrap applies, so there is one source.
KOKKOS_3_4_01_PATCHES = (
    "0001-cuda13-half-type.patch",
    "0002-cuda13-mem-prefetch.patch",
    "0003-nvcc-wrapper-default-arch.patch",
    "0004-hopper90-arch.patch",
    "0005-cuda-mdrange-grid-limits.patch",
    "0006-cuda-toolkit-find-dependency.patch",
    "0007-gcc13-cstdint.patch",
)

# cuda_arch values forwarded to Kokkos, with the Kokkos versions that know each
# architecture (the conditions of the builtin kokkos recipe's spack_cuda_arch_map;
# cuda_arch=90 on 3.4.01 relies on patch 0004). Kokkos takes one architecture.
KOKKOS_CUDA_ARCHS = {
    "70": "",
    "75": "",
    "80": "",
    "86": "",
    "87": "@4.7.00:",
    "89": "@4.0.01:",
    "90": "",
    "100": "@4.7.00:",
    "103": "@5.1.0:",
    "120": "@4.7.00:",
    "121": "@5.1.0:",
}


class DiscountApp(CMakePackage, CudaPackage):
    """Applies cumulative-vesting discount factors to HDF5 arrays larger than
    memory, streamed in slabs on an NVIDIA GPU (Kokkos CUDA) or on CPU cores
    (Kokkos OpenMP), optionally split over MPI ranks."""

    # There is no public release: Spack clones your own checkout. Point `git` at
    # your clone (any URL git accepts), or build your working tree with
    # `spack develop` (see packaging/spack/README.md).
    git = "file:///path/to/your/clone/of/discount_app"

    license("Apache-2.0")

    version("main", branch="main")

    variant("openmp", default=True, description="Kokkos OpenMP backend (the host cores)")
    variant("mpi", default=False, description="MPI build: slabs split over ranks, one GPU per rank")
    variant(
        "blas", default=False, description="Kokkos Kernels, for compute.kernel: blas (KokkosBlas)"
    )
    # cuda and cuda_arch come from CudaPackage.

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.21:", type="build")

    # Kokkos 3.4.01 (with the project's patches) through Kokkos 5.
    depends_on("kokkos@3.4.01:5")
    # The builtin kokkos recipe starts at 3.7.02; a kokkos@3.4.01 from your own
    # package repository gets the patches. Its nvcc_wrapper is a separate package
    # (kokkos-nvcc-wrapper): 0003 lets it take NVCC_WRAPPER_DEFAULT_ARCH.
    depends_on(
        "kokkos",
        when="^kokkos@3.4.01",
        patches=[patch(p) for p in KOKKOS_3_4_01_PATCHES],
    )
    depends_on(
        "kokkos-nvcc-wrapper",
        when="+cuda ^kokkos-nvcc-wrapper@3.4.01",
        patches=[patch("0003-nvcc-wrapper-default-arch.patch")],
    )
    # The app is C++17; compiled with the standard Kokkos was built with (cmake_args).
    conflicts("^kokkos cxxstd=14", msg="discount-app needs C++17 or later")

    requires("^kokkos +openmp", when="+openmp")
    requires("^kokkos ~cuda", when="~cuda")

    # Kokkos Kernels follows Kokkos' version (the kokkos-kernels recipe pins it).
    with when("+blas"):
        depends_on("kokkos-kernels@3.4.01:5")
        # Kokkos Kernels 3.4 predates the cuSPARSE API of CUDA 12+: no vendor TPLs.
        depends_on("kokkos-kernels ~cublas ~cusparse", when="^kokkos-kernels@:3.4.01")

    with when("+cuda"):
        requires("^kokkos +cuda +wrapper", msg="discount-app+cuda compiles with nvcc_wrapper")
        # Kokkos 3 needs it for KOKKOS_LAMBDA on the device; Kokkos 4 always has it.
        requires("^kokkos +cuda_lambda", when="^kokkos@:3")
        conflicts("cuda_arch=none", msg="discount-app+cuda needs one cuda_arch, e.g. 90")
        for _arch, _versions in KOKKOS_CUDA_ARCHS.items():
            depends_on(f"kokkos{_versions} cuda_arch={_arch}", when=f"cuda_arch={_arch}")
            depends_on(
                f"kokkos-kernels +cuda cuda_arch={_arch}", when=f"+blas cuda_arch={_arch}"
            )
        for _arch in CudaPackage.cuda_arch_values:
            if _arch not in KOKKOS_CUDA_ARCHS:
                conflicts(
                    f"cuda_arch={_arch}",
                    msg="discount-app forwards only these cuda_arch values to Kokkos: "
                    + ", ".join(KOKKOS_CUDA_ARCHS),
                )
        # As Spack's kokkos recipe (^cuda@13: conflicts with kokkos@:4.7.0): CUDA 13
        # needs Kokkos 4.7.01 or later, or 3.4.01 with the patches above (0001,
        # 0002, 0003); the same holds for the separate nvcc_wrapper.
        conflicts(
            "^cuda@13:",
            when="^kokkos@3.4.02:4.7.0",
            msg="CUDA 13 needs kokkos@4.7.01: (or the patched 3.4.01)",
        )
        conflicts(
            "^cuda@13:",
            when="^kokkos-nvcc-wrapper@3.4.02:4.7.0",
            msg="CUDA 13 needs kokkos-nvcc-wrapper@4.7.01: (or the patched 3.4.01)",
        )

    depends_on("hdf5@1.10: ~mpi", when="~mpi")
    depends_on("hdf5@1.10: +mpi", when="+mpi")
    depends_on("mpi", when="+mpi")
    depends_on("yaml-cpp@0.7:")
    depends_on("cli11@2:")
    depends_on("nlohmann-json@3:")

    # `spack install --test=root`: GoogleTest, and Python with h5py and NumPy for
    # the end-to-end tests' independent reader.
    depends_on("googletest", type="test")
    depends_on("python@3:", type="test")
    depends_on("py-h5py", type="test")
    depends_on("py-numpy", type="test")

    def setup_build_environment(self, env):
        if self.spec.satisfies("+cuda"):
            # CMake's compiler check calls nvcc_wrapper without -arch.
            arch = self.spec.variants["cuda_arch"].value[0]
            env.set("NVCC_WRAPPER_DEFAULT_ARCH", f"sm_{arch}")

    def cmake_args(self):
        kokkos = self.spec["kokkos"]
        args = [
            # Kokkos' C++ standard: 17 by default for Kokkos 3 and 4, 20 for Kokkos 5.
            self.define("CMAKE_CXX_STANDARD", kokkos.variants["cxxstd"].value),
            # nvcc_wrapper with +cuda, Spack's compiler wrapper otherwise.
            self.define("CMAKE_CXX_COMPILER", self["kokkos"].kokkos_cxx),
            self.define_from_variant("DISCOUNT_ENABLE_MPI", "mpi"),
            self.define_from_variant("DISCOUNT_ENABLE_KOKKOS_KERNELS", "blas"),
            self.define("DISCOUNT_BUILD_BENCH", False),
            # The test suite needs GoogleTest and Python, present only with --test.
            self.define("DISCOUNT_ENABLE_TESTS", self.run_tests),
        ]
        if self.run_tests:
            args.append(self.define("DISCOUNT_PYTHON", self.spec["python"].command.path))
        return args

    def check(self):
        """Unit tests only (ctest -L unit); with +cuda they need a GPU."""
        ctest = Executable(self.spec["cmake"].prefix.bin.ctest)
        with working_dir(self.build_directory):
            ctest("-L", "unit", "--output-on-failure")
