# The pbitmap lit suite.  One behaviour per .test file; inputs are made in
# the test (split-file, yaml2obj, the C compiler), never checked in as
# binaries.
import os
import lit.formats

config.name = "pbitmap"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.excludes = ["Inputs", "tools"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.builddir, "test")

b = config.builddir
plugin = os.path.join(b, "ld-plugin", ".libs", "pbitmap.so")
runtime_dir = os.path.join(b, "runtime")

# Keep the environment the programs under test see predictable.
for var in ("PBITMAP", "PBITMAP_DEBUG", "LD_AUDIT"):
    config.environment.pop(var, None)
# No test reads or writes the user's bitmap store, or the system's:
# PBITMAP_STORE names a directory that does not exist unless a test makes
# it.
config.environment["PBITMAP_STORE"] = os.path.join(b, "test", "no-store")
config.environment["LC_ALL"] = "C"

subst = config.substitutions
# %plugin: the link flags a user writes, plus where the uninstalled runtime is.
subst.append(("%plugin_so", plugin))
subst.append(("%runtime_dir", runtime_dir))
subst.append(("%plugin",
              "-Wl,-plugin,%s -Wl,-plugin-opt=runtime-dir=%s" % (plugin, runtime_dir)))
subst.append(("%cc", config.cc))
subst.append(("%elfpatch", os.path.join(b, "elfpatch", "elfpatch")))
subst.append(("%audit", os.path.join(b, "audit", "pbitmap-audit.so")))
subst.append(("%evict", os.path.join(b, "test", "tools", "evict")))
subst.append(("%runstat", os.path.join(b, "test", "tools", "runstat")))
subst.append(("%ehframe_entries",
              os.path.join(b, "test", "tools", "ehframe-entries")))
subst.append(("%seccomp_exec", os.path.join(b, "test", "tools", "seccomp-exec")))
subst.append(("%replay_runtime_region",
              os.path.join(b, "fuzz", "replay-runtime-region")))
# %machine: VM in a virtual machine, METAL on hardware, the check prefix
# for what the readers' device classes say there (include/pbitmap-plan.h:
# in a virtual machine nvme and ssd are cloud).  The kernel's cpuinfo
# flag "hypervisor" is the CPUID bit the readers ask.
with open("/proc/cpuinfo") as cpuinfo:
    in_vm = any(line.startswith("flags") and "hypervisor" in line.split()
                for line in cpuinfo)
subst.append(("%machine", "VM" if in_vm else "METAL"))
# The source tree, for tests of its scripts (setup).
subst.append(("%srcdir", config.srcdir))
# The source and build trees as plain absolute paths (no "..", links
# resolved), for tests that no output names either: %srcdir of an
# out-of-tree build is a path such as BUILD/.., which no file contains.
subst.append(("%real_srcdir", os.path.realpath(config.srcdir)))
subst.append(("%real_builddir", os.path.realpath(b)))
# %inputs: the helpers tests of several directories share (test/Inputs).
subst.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# A private GCC prefix (specs, plugin/pbitmap.so) and the -specs / clang
# config files, all wired to this build's plugin and runtime.
subst.append(("%driver_test", os.path.join(b, "driver", "test")))
subst.append(("%clang", config.clang or "clang-not-found"))
# pbitmap-ld, and the flags that make gcc -fuse-ld=mold|lld run it (the
# build tree's ld.mold and ld.lld name it) with this build's runtime.
pbitmap_ld = os.path.join(b, "ld-plugin", "pbitmap-ld")
subst.append(("%pbitmap_ld", pbitmap_ld))
subst.append(("%ld_wrapper", "-B%s/ -Wl,--pbitmap-runtime-dir=%s"
              % (os.path.join(b, "ld-plugin", "test-bin"), runtime_dir)))

# Tool names used bare in RUN lines (FileCheck, not, yaml2obj, split-file,
# llvm-readelf) resolve to what configure found.
tool_dirs = []
for tool in (config.filecheck, config.not_, config.yaml2obj,
             config.split_file, config.llvm_readelf):
    d = os.path.dirname(tool)
    if d not in tool_dirs:
        tool_dirs.append(d)
config.environment["PATH"] = os.pathsep.join(
    tool_dirs + [config.environment.get("PATH", os.environ.get("PATH", ""))])

for feature, path in (("readelf", config.readelf),
                      ("eu-elflint", config.eu_elflint),
                      ("fincore", config.fincore),
                      ("clang", config.clang)):
    if path:
        config.available_features.add(feature)
# Post-link tools the test/postlink tests run; setup installs them.
import shutil
for tool in ("patchelf",):
    if shutil.which(tool):
        config.available_features.add(tool)
if config.cc_is_gcc:
    config.available_features.add("gcc")
# The other linkers, by the names the compiler drivers look for; a machine
# without one skips its tests.
import shutil
for feature, prog in (("gold", "ld.gold"), ("mold", "ld.mold"),
                      ("lld", "ld.lld"), ("lld-16", "ld.lld-16")):
    if shutil.which(prog, path=config.environment["PATH"]):
        config.available_features.add(feature)
if os.geteuid() == 0:
    config.available_features.add("root")
# Scratch block devices for the --device=auto tests (root): loopdev when
# a loop device can be attached and ext4 made, loop-partitions when sfdisk
# and partx can partition one, btrfs when mkfs.btrfs and the kernel's
# btrfs are there, device-mapper when dmsetup reaches the kernel's driver.
if os.geteuid() == 0 and shutil.which("losetup") and shutil.which("mkfs.ext4"):
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile() as img:
        img.truncate(1 << 20)
        r = subprocess.run(["losetup", "-f", "--show", img.name],
                           capture_output=True, text=True)
        if r.returncode == 0:
            subprocess.run(["losetup", "-d", r.stdout.strip()])
            config.available_features.add("loopdev")
    if "loopdev" in config.available_features:
        if shutil.which("sfdisk") and shutil.which("partx"):
            config.available_features.add("loop-partitions")
        if shutil.which("mkfs.btrfs") and " btrfs\n" in open(
                "/proc/filesystems").read().replace("\t", " "):
            config.available_features.add("btrfs")
        if shutil.which("dmsetup") and subprocess.run(
                ["dmsetup", "version"], capture_output=True).returncode == 0:
            config.available_features.add("device-mapper")
# overlayfs, for --device=auto on a file in an overlay (root, which
# mounts one in a private mount namespace).
if os.geteuid() == 0 and shutil.which("unshare") and " overlay\n" in open(
        "/proc/filesystems").read().replace("\t", " "):
    config.available_features.add("overlayfs")
# The cgroup v1 memory controller, for tests that fill a memory cgroup.
if os.path.exists("/sys/fs/cgroup/memory/memory.limit_in_bytes"):
    config.available_features.add("memcg-v1")
# The cgroup v1 blkio throttle, for the bench's emulated devices.
if os.path.exists("/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device"):
    config.available_features.add("blkio-v1")
# strace, for the tests that list the system calls the runtime makes.
if shutil.which("strace"):
    config.available_features.add("strace")
# valgrind, for the test that the runtime gives it nothing to report.
if shutil.which("valgrind"):
    config.available_features.add("valgrind")
# gnuplot, which bench/report draws its plot with (test/bench).
if shutil.which("gnuplot"):
    config.available_features.add("gnuplot")
# FUSE, which bench/fuse-device.c mounts (root, /dev/fuse, fusermount3
# and libfuse3 to build it with).
if os.geteuid() == 0 and os.path.exists("/dev/fuse") and shutil.which(
        "fusermount3") and shutil.which("pkg-config"):
    import subprocess
    if subprocess.run(["pkg-config", "--exists", "fuse3"]).returncode == 0:
        config.available_features.add("fuse")

# A --enable-sanitizers build: a sanitizer report must fail the test, also
# under `not`, which only a crash does; leaks are reported too.  The
# plugin is built with ASan, whose runtime must be the first library of
# the process: the linkers are run through scripts, first on PATH (gcc and
# clang find ld there), that preload it.  ld's own leaks are not ours.
if getattr(config, "sanitizers", False):
    import shutil
    import subprocess
    config.available_features.add("sanitizers")
    config.environment["ASAN_OPTIONS"] = "abort_on_error=1:detect_leaks=1"
    config.environment["UBSAN_OPTIONS"] = "abort_on_error=1:print_stacktrace=1"
    asan = subprocess.run([config.cc, "-print-file-name=libasan.so"],
                          capture_output=True, text=True).stdout.strip()
    wrap_dir = os.path.join(config.test_exec_root, "asan-ld")
    os.makedirs(wrap_dir, exist_ok=True)
    for name in ("ld", "ld.bfd", "ld.gold"):
        real = shutil.which(name, path=os.environ.get("PATH", ""))
        if real is None:
            continue
        script = os.path.join(wrap_dir, name)
        with open(script, "w") as f:
            f.write("#!/bin/sh\nLD_PRELOAD=%s ASAN_OPTIONS=abort_on_error=1:"
                    "detect_leaks=0 exec %s \"$@\"\n" % (asan, real))
        os.chmod(script, 0o755)
    config.environment["PATH"] = os.pathsep.join(
        [wrap_dir, config.environment["PATH"]])
    # clang -fuse-ld=bfd looks in binutils' own directory before PATH, but
    # first in COMPILER_PATH (gcc too).
    config.environment["COMPILER_PATH"] = wrap_dir
