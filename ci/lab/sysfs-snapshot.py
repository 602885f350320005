#!/usr/bin/env python3
"""Copy the sysfs attributes that CXL discovery reads into a directory tree, for checked-in
test fixtures (issue #18): /sys/bus/{cxl,nd,dax}/devices and the devices they resolve to, the
NUMA nodes' cpulist and memory blocks, the PCI functions of class 0x0502 (CXL memory) with
their link attributes, and /proc/iomem. Links are recorded as links (relative to the copy),
attribute files as their first 4 KiB. Runs inside lab guest a; usage: sysfs-snapshot.py DEST."""
import os
import sys

SKIP = {"uevent", "modalias", "config", "rescan", "remove", "reset", "CDAT", "label_storage",
        "resource0", "resource1", "resource2", "resource3", "resource4", "resource5",
        "resource0_wc", "resource2_wc", "resource4_wc", "rom", "firmware", "driver_override"}
SKIP_DIRS = {"power", "subsystem", "driver", "firmware_node", "msi_irqs", "iommu",
             "iommu_group", "consumer", "supplier", "wakeup"}


def copy_attr(src, dst):
    try:
        with open(src, "rb") as f:
            data = f.read(4096)
    except OSError:
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "wb") as f:
        f.write(data)


def walk(real, dest, root, depth=0):
    """Copies the attributes of the device directory `real` (resolved) below `dest`."""
    if depth > 6 or not os.path.isdir(real):
        return
    for name in sorted(os.listdir(real)):
        if name in SKIP or name in SKIP_DIRS:
            continue
        p = os.path.join(real, name)
        d = os.path.join(dest, name)
        if os.path.islink(p):
            target = os.path.realpath(p)
            if target.startswith("/sys/"):
                os.makedirs(dest, exist_ok=True)
                rel = os.path.relpath(os.path.join(root, target[1:]), dest)
                if not os.path.lexists(d):
                    os.symlink(rel, d)
        elif os.path.isdir(p):
            walk(p, d, root, depth + 1)
        elif os.path.isfile(p):
            copy_attr(p, d)


def device(path, root, seen):
    real = os.path.realpath(path)
    if real in seen or not real.startswith("/sys/"):
        return
    seen.add(real)
    walk(real, os.path.join(root, real[1:]), root)


def main():
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    seen = set()
    for bus in ("cxl", "nd", "dax"):
        base = f"/sys/bus/{bus}/devices"
        if not os.path.isdir(base):
            continue
        os.makedirs(os.path.join(root, base[1:]), exist_ok=True)
        for name in sorted(os.listdir(base)):
            p = os.path.join(base, name)
            link = os.path.join(root, base[1:], name)
            if not os.path.lexists(link):
                os.symlink(os.path.relpath(os.path.join(root, os.path.realpath(p)[1:]),
                                           os.path.dirname(link)), link)
            device(p, root, seen)
    for name in sorted(os.listdir("/sys/bus/pci/devices")):
        p = f"/sys/bus/pci/devices/{name}"
        try:
            cls = open(f"{p}/class").read().strip()
        except OSError:
            continue
        if cls.startswith("0x0502"):
            device(p, root, seen)
            device(os.path.dirname(os.path.realpath(p)), root, seen)
    nodes = "/sys/devices/system/node"
    for name in sorted(os.listdir(nodes)):
        if name.startswith("node") and name[4:].isdigit():
            for attr in ("cpulist", "meminfo"):
                copy_attr(f"{nodes}/{name}/{attr}", os.path.join(root, nodes[1:], name, attr))
    copy_attr("/sys/devices/system/memory/block_size_bytes",
              os.path.join(root, "sys/devices/system/memory/block_size_bytes"))
    copy_attr("/proc/iomem", os.path.join(root, "proc/iomem"))
    n = sum(len(f) for _, _, f in os.walk(root))
    print(f"sysfs snapshot: {n} files under {root}")


if __name__ == "__main__":
    main()
