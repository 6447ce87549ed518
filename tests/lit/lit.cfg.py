# lit configuration for shardc's compiler tests (Shardy style: RUN lines,
# FileCheck, --verify-diagnostics).
import os
import shutil
import subprocess
import sys

import lit.formats

config.name = "shardc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".shd", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.join(config.shardc_src_root, "tests/lit")
config.test_exec_root = os.path.join(config.shardc_obj_root, "tests/lit")

# FileCheck, not, count live in /usr/lib/llvm-14/bin (on PATH only with a
# -14 suffix); put them and the built tools first.
config.environment["PATH"] = os.pathsep.join(
    [config.shardc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["NO_COLOR"] = "1"
# The kernel cache of the executables the tests build: one in the build tree
# (never the user's ~/.cache), shared by the tests, so reruns take kernels
# from it and the executables still have to match the interpreter.
config.environment["SHARDC_CACHE_DIR"] = os.path.join(config.shardc_obj_root, "tests/kernel-cache")
# scripts/test.sh sets this for the sanitizer build (hwloc's PCI plugin leaks
# at MPI_Init); lit passes only the variables it is told to.
if "HWLOC_COMPONENTS" in os.environ:
    config.environment["HWLOC_COMPONENTS"] = os.environ["HWLOC_COMPONENTS"]


# This machine's hwloc topology, written once per lit run into the build tree
# and read by every MPI rank of the tests (HWLOC_XMLFILE), instead of
# discovered again at each MPI_Init: discovery reads every PCI device's config
# space, which on a VM traps to the hypervisor, and took a fifth of an 8-rank
# launch of a small program here (0.95 -> 0.79 s; the suite launches a few
# hundred). Without lstopo (Debian's hwloc-nox, which MPICH depends on) the
# ranks discover it as they would for a user.
def write_topology(path):
    lstopo = shutil.which("lstopo-no-graphics")
    if not lstopo:
        return False
    tmp = "%s.%d" % (path, os.getpid())
    with open(tmp, "w") as out:
        ok = subprocess.run([lstopo, "--no-io", "--of", "xml"], stdout=out,
                            stderr=subprocess.DEVNULL).returncode == 0
    if ok:
        os.replace(tmp, path)
    else:
        os.remove(tmp)
    return ok


if os.environ.get("HWLOC_XMLFILE"):  # scripts/test.sh writes one for all of ctest
    config.environment["HWLOC_XMLFILE"] = os.environ["HWLOC_XMLFILE"]
else:
    os.makedirs(config.test_exec_root, exist_ok=True)
    topology = os.path.join(config.test_exec_root, "hwloc-topology.xml")
    if write_topology(topology):
        config.environment["HWLOC_XMLFILE"] = topology
config.substitutions.append(("%shardc", os.path.join(config.shardc_tools_dir, "shardc")))
config.substitutions.append(
    ("%lsp", os.path.join(config.shardc_obj_root, "tools", "shardc-lsp", "shardc-lsp")))
config.substitutions.append(("%examples", os.path.join(config.shardc_src_root, "examples")))
config.substitutions.append(("%seeds", os.path.join(config.shardc_src_root, "tests/lit/seeds")))
config.substitutions.append(
    ("%npy-compare", os.path.join(config.shardc_obj_root, "tools/shardc-npy-compare/shardc-npy-compare")))
config.substitutions.append(
    ("%difftest", os.path.join(config.shardc_obj_root, "tests/diff/shardc-difftest")))
# The build tree's runtime: libshardrt.a beside libshardrt-{mpich,openmpi}.so.
config.substitutions.append(("%runtime-dir", os.path.join(config.shardc_obj_root, "runtime")))
# The sanitizer build runs the compiler and the interpreter several times
# slower: there the whole-suite tests (exec/every_program,
# simulate/every_lit_program) take a fixed sixth of their programs, the
# optimized build all of them. (With a third, these two and random_programs
# were 450 of the sanitizer lit's 1771 serial seconds.)
whole_suite_every = 6 if config.sanitize else 1
if config.sanitize:
    config.available_features.add("sanitize")
config.substitutions.append(("%whole-suite-every", str(whole_suite_every)))
# exec/random_programs: 20 seeds in the optimized build (each is an MPI job;
# the difftest tests run more seeds, in process and as executables; seeds
# 0..19 already span 1, 2, 3, 4, 6 and 8 ranks and sub-axes), 6 under the
# sanitizers.
config.substitutions.append(("%random-program-count", "6" if config.sanitize else "20"))
# OpenBLAS's single-threaded build, which the compiler and its executables
# load when the build found it (the top-level CMakeLists.txt).
if config.openblas_serial_dir:
    config.available_features.add("openblas-serial")
# Executables run under MPICH's launcher (pinned: Open MPI may be installed too).
config.substitutions.append(("%mpiexec", config.mpiexec))
# And under Open MPI's (feature "openmpi"; the executable loads
# libshardrt-openmpi.so): 8 ranks on a 2-core machine need --oversubscribe,
# and root needs these two variables, set here for the tests only.
if config.mpirun_openmpi:
    config.available_features.add("openmpi")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # Open MPI 4.1 leaks at MPI_Init in plugins it unloads before
    # LeakSanitizer can name them: its processes in the sanitizer build check
    # all but leaks (%openmpi-env; the MPICH runs, every other exec test,
    # check leaks too).
    openmpi_env = "env"
    if config.sanitize:
        asan = os.environ.get("ASAN_OPTIONS", "")
        openmpi_env += " ASAN_OPTIONS=%sdetect_leaks=0" % (asan + ":" if asan else "")
    config.substitutions.append(("%openmpi-env", openmpi_env))
    config.substitutions.append(
        ("%mpirun-openmpi", openmpi_env + " " + config.mpirun_openmpi + " --oversubscribe"))

# A Python with numpy (feature "numpy", %python-numpy) for the tests that
# compare results with numpy's: the one running lit, else the system's
# (Debian's python3-numpy is for /usr/bin/python3, while `python3` on PATH
# may be another installation).
def find_python_with_numpy():
    for candidate in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if candidate and os.path.exists(candidate) and subprocess.run(
                [candidate, "-c", "import numpy"], capture_output=True).returncode == 0:
            return candidate
    return None


python_numpy = find_python_with_numpy()
if python_numpy:
    config.available_features.add("numpy")
    config.substitutions.append(("%python-numpy", python_numpy))
