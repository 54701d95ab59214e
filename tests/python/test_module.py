"""The compiled module as a shared object: what it exports to the process."""
import shutil
import subprocess
import sys

import pytest

import discount_app


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF symbol tables: Linux only")
@pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm (binutils)")
def test_the_module_exports_only_its_init_function():
    # Anything else it exported (Kokkos or standard-library code from the
    # static libraries it links) would take the place of a shared Kokkos's own
    # calls: Kokkos 5.2.2 as Debian ships it crashed in Kokkos::initialize so.
    core = discount_app._core.__file__
    out = subprocess.run(["nm", "-D", "--defined-only", core], capture_output=True, text=True, check=True).stdout
    names = sorted({line.split()[-1] for line in out.splitlines() if line.strip()})
    assert names == ["PyInit__core"], f"{core} exports {len(names)} symbols, e.g. {names[:5]}"
