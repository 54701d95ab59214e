# Spack recipe for discount_app (see scripts/spack/README.md). Written for the
# package-repository layout of Spack releases that still carry kokkos@3.4.01
# (repo.yaml + packages/<name>/package.py, `from spack.package import *`).
# Not run here: Spack is not installed on the development machine.
from spack.package import *

# The project's Kokkos 3.4.01 patches (copies of cmake/patches/, all against
# the kokkos source tree): CUDA 13, the HOPPER90 architecture, CUDA MDRange
# grid limits, CMake's CUDAToolkit, GCC 13. Keep them in step with
# cmake/patches/.
KOKKOS_PATCHES = [
    "0001-cuda13-half-type.patch",
    "0002-cuda13-mem-prefetch.patch",
    "0003-nvcc-wrapper-default-arch.patch",
    "0004-hopper90-arch.patch",
    "0005-cuda-mdrange-grid-limits.patch",
    "0006-cuda-toolkit-find-dependency.patch",
    "0007-gcc13-cstdint.patch",
]


class DiscountApp(CMakePackage, CudaPackage):
    """Applies cumulative-vesting discount factors to HDF5 arrays larger than
    memory, streamed in slabs on an NVIDIA GPU (Kokkos CUDA) or on CPU cores
    (Kokkos OpenMP), optionally split over MPI ranks."""

    # There is no public release: Spack clones your own checkout. EDIT the
    # path to your clone (any URL git accepts), or skip the fetch with
    # `spack develop` (see scripts/spack/README.md).
    git = "file:///path/to/your/clone/of/discount_app"

    version("main", branch="main")

    variant("openmp", default=True, description="Kokkos OpenMP backend (the host cores)")
    variant(
        "mpi", default=False, description="MPI build: slabs split over ranks, one GPU per rank"
    )
    # cuda and cuda_arch come from CudaPackage.

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.18:", type="build")

    # Kokkos 3.4.01 exactly: the project's patches are made for it.
    depends_on("kokkos@3.4.01 +serial", patches=[patch(p) for p in KOKKOS_PATCHES])
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos~cuda", when="~cuda")
    # Kokkos takes one architecture, forwarded from ours. Spack's kokkos
    # recipe turns cuda_arch=90 into Kokkos_ARCH_HOPPER90, an option Kokkos
    # 3.4.01 only has with the project's patch 0004.
    for arch in CudaPackage.cuda_arch_values:
        depends_on(
            f"kokkos+cuda+wrapper+cuda_lambda cuda_arch={arch}",
            when=f"+cuda cuda_arch={arch}",
        )
    conflicts(
        "cuda_arch=none", when="+cuda", msg="discount-app+cuda needs one cuda_arch, e.g. 90"
    )
    # kokkos+wrapper compiles with the separate kokkos-nvcc-wrapper package,
    # whose nvcc_wrapper defaults to sm_35, which CUDA 12+ rejects; patch 0003
    # makes it read NVCC_WRAPPER_DEFAULT_ARCH instead (set below for this
    # build; for the kokkos build see the README).
    depends_on(
        "kokkos-nvcc-wrapper@3.4.01",
        when="+cuda",
        patches=[patch("0003-nvcc-wrapper-default-arch.patch")],
    )
    # No vendor BLAS/sparse TPLs: Kokkos Kernels 3.4 predates the cuSPARSE API
    # of CUDA 12+ (as in scripts/deps.sh).
    depends_on("kokkos-kernels@3.4.01 ~cublas ~cusparse")

    depends_on("hdf5@1.10:")
    depends_on("hdf5+mpi", when="+mpi")
    depends_on("mpi", when="+mpi")
    depends_on("yaml-cpp@0.6:")
    depends_on("cli11")
    depends_on("nlohmann-json")

    # `spack install --test=root`: GoogleTest, and Python with h5py and NumPy
    # for the end-to-end tests' independent reader.
    depends_on("googletest", type="test")
    depends_on("python@3:", type="test")
    depends_on("py-h5py", type="test")
    depends_on("py-numpy", type="test")

    def _kokkos_cxx(self):
        kokkos = self.spec["kokkos"]
        # Kokkos' setup_dependent_package sets spec.kokkos_cxx in the Spack
        # releases that carry 3.4.01; later recipes make it a package property.
        cxx = getattr(kokkos, "kokkos_cxx", None)
        return cxx or kokkos.package.kokkos_cxx

    def setup_build_environment(self, env):
        if self.spec.satisfies("+cuda"):
            # CMake's compiler check calls nvcc_wrapper with no -arch.
            arch = self.spec.variants["cuda_arch"].value[0]
            env.set("NVCC_WRAPPER_DEFAULT_ARCH", "sm_" + arch)

    def cmake_args(self):
        args = [
            self.define_from_variant("DISCOUNT_ENABLE_MPI", "mpi"),
            self.define("DISCOUNT_BUILD_BENCH", False),
            # The test suite needs GoogleTest and Python, present only with --test.
            self.define("DISCOUNT_ENABLE_TESTS", self.run_tests),
        ]
        if self.spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CXX_COMPILER", self._kokkos_cxx()))
        if self.run_tests:
            args.append(self.define("DISCOUNT_PYTHON", self.spec["python"].command.path))
        return args

    def check(self):
        """Unit tests only (ctest -L unit); with +cuda they need a GPU."""
        # Spack's builder objects hold the build directory in later releases.
        builder = getattr(self, "builder", self)
        build_dir = builder.build_directory
        ctest = Executable(self.spec["cmake"].prefix.bin.ctest)
        with working_dir(build_dir):
            ctest("-L", "unit", "--output-on-failure")
