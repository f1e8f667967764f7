"""The machine facts that change benchmark results, printed by every Python benchmark (the C++
programs print the same lines from bench/bench_util.hpp): cores, CPU, kernel, load, transparent
huge pages, memory, whether freed memory is reported to a host (virtio balloon free page
reporting: first touches of memory then cost much more, docs/benchmarks.md), and the file
system of the folder the benchmark writes to."""
import glob
import os
import platform

FS_MAGIC = {"ext4": "ext4", "xfs": "xfs", "tmpfs": "tmpfs", "btrfs": "btrfs",
            "overlay": "overlayfs", "nfs": "nfs", "nfs4": "nfs", "zfs": "zfs"}


def _first_line(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().strip()
    except OSError:
        return "?"


def _meminfo_gib(field):
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return "?"


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def free_page_reporting():
    for features in glob.glob("/sys/bus/virtio/drivers/virtio_balloon/*/features"):
        bits = _first_line(features)
        if len(bits) > 5 and bits[5] == "1":
            return True
    return False


def fs_type(path):
    """The file system type of the mount holding `path` (the longest mount point above it)."""
    path = os.path.realpath(path)
    best, kind = "", "?"
    try:
        with open("/proc/self/mounts", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                mnt, typ = parts[1], parts[2]
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                    best, kind = mnt, FS_MAGIC.get(typ, typ)
    except OSError:
        pass
    return kind


def lines(folder):
    """The facts as 'machine: ...' lines."""
    load = " ".join(_first_line("/proc/loadavg").split()[:3])
    return [
        f"machine: {os.cpu_count()} cores ({_cpu_model()}), kernel {platform.release()}, load {load}",
        "machine: transparent huge pages "
        f"{_first_line('/sys/kernel/mm/transparent_hugepage/enabled')}, defrag "
        f"{_first_line('/sys/kernel/mm/transparent_hugepage/defrag')}",
        f"machine: memory {_meminfo_gib('MemTotal')} total, {_meminfo_gib('MemAvailable')} available; free page "
        f"reporting {'on (virtio balloon)' if free_page_reporting() else 'off'}; {folder} is {fs_type(folder)}",
    ]


def print_facts(folder):
    for line in lines(folder):
        print(line, flush=True)
