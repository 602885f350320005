#!/usr/bin/env python3
"""Copy the sysfs attributes that CXL discovery reads into a directory tree, for checked-in
test fixtures (issue #18): /sys/bus/{cxl,nd,dax}/devices and the devices they resolve to (a
dax device's mapping*/, resource, target_node and its `driver` link: device_dax, or kmem
once it is system RAM), the NUMA nodes (cpulist, meminfo, distance, the firmware's
access coordinates and memory-side caches, their memoryNN links)
and those memory blocks (phys_index, state, valid_zones, ...), the PCI functions of class
0x0502 (CXL memory) with their link attributes, and /proc/iomem. Links are recorded as links
(relative to the copy; a `driver` link points at a driver directory that is not copied: its
name is the driver's), attribute files as their first 4 KiB. Runs inside lab guests a and c;
usage: sysfs-snapshot.py DEST.

Also the CPUs' topology and caches (cpu/online, cpuN/topology/{physical_package_id,
core_id,die_id,thread_siblings_list}, cpuN/cache/indexM/{level,type,size,
coherency_line_size,shared_cpu_list}) and the GPUs' PCI ids (vendor, class of every
display controller): what `cxlchar all --plan --sysfs DEST` plans from, on any machine
(run it there, copy DEST here)."""
import os
import sys

SKIP = {"uevent", "modalias", "config", "rescan", "remove", "reset", "CDAT", "label_storage",
        "resource0", "resource1", "resource2", "resource3", "resource4", "resource5",
        "resource0_wc", "resource2_wc", "resource4_wc", "rom", "firmware", "driver_override"}
SKIP_DIRS = {"power", "subsystem", "firmware_node", "msi_irqs", "iommu",
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


def firmware_tables(node, dest):
    """The node's access coordinates from ACPI HMAT (accessK/initiators: the figures and
    the initiator nodes' links, kept as links) and its memory-side caches."""
    for sub in sorted(os.listdir(node)):
        if sub.startswith("access") and sub[6:].isdigit():
            ini = f"{node}/{sub}/initiators"
            if not os.path.isdir(ini):
                continue
            for e in sorted(os.listdir(ini)):
                p = f"{ini}/{e}"
                d = os.path.join(dest, sub, "initiators", e)
                if os.path.islink(p):
                    os.makedirs(os.path.dirname(d), exist_ok=True)
                    if not os.path.lexists(d):
                        os.symlink(os.path.join("..", "..", "..", e), d)
                elif e.endswith(("_latency", "_bandwidth")):
                    copy_attr(p, d)
        elif sub == "memory_side_cache":
            for idx in sorted(os.listdir(f"{node}/{sub}")):
                if not idx.startswith("index"):
                    continue
                for attr in ("size", "line_size", "indexing", "write_policy"):
                    copy_attr(f"{node}/{sub}/{idx}/{attr}", os.path.join(dest, sub, idx, attr))


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
    memory = "/sys/devices/system/memory"
    for attr in ("possible", "online", "has_cpu", "has_memory", "has_normal_memory"):
        copy_attr(f"{nodes}/{attr}", os.path.join(root, nodes[1:], attr))
    for name in sorted(os.listdir(nodes)):
        if not (name.startswith("node") and name[4:].isdigit()):
            continue
        for attr in ("cpulist", "meminfo", "distance"):
            copy_attr(f"{nodes}/{name}/{attr}", os.path.join(root, nodes[1:], name, attr))
        firmware_tables(f"{nodes}/{name}", os.path.join(root, nodes[1:], name))
        # The node's memory blocks: nodeN/memoryNN -> ../../memory/memoryNN (a link), and
        # each block's attributes, with its own nodeN link back.
        for block in sorted(os.listdir(f"{nodes}/{name}")):
            if not (block.startswith("memory") and block[6:].isdigit()):
                continue
            link = os.path.join(root, nodes[1:], name, block)
            if not os.path.lexists(link):
                os.symlink(os.path.relpath(os.path.join(root, memory[1:], block),
                                           os.path.dirname(link)), link)
            for attr in ("phys_index", "phys_device", "state", "online", "valid_zones",
                         "removable"):
                copy_attr(f"{memory}/{block}/{attr}", os.path.join(root, memory[1:], block, attr))
            back = os.path.join(root, memory[1:], block, name)
            if not os.path.lexists(back):
                os.symlink(os.path.relpath(os.path.join(root, nodes[1:], name),
                                           os.path.dirname(back)), back)
    for attr in ("block_size_bytes", "auto_online_blocks"):
        copy_attr(f"{memory}/{attr}", os.path.join(root, memory[1:], attr))
    cpus = "/sys/devices/system/cpu"
    for attr in ("online", "possible", "present"):
        copy_attr(f"{cpus}/{attr}", os.path.join(root, cpus[1:], attr))
    for name in sorted(os.listdir(cpus)):
        if not (name.startswith("cpu") and name[3:].isdigit()):
            continue
        for attr in ("physical_package_id", "core_id", "die_id", "cluster_id",
                     "thread_siblings_list", "core_cpus_list", "package_cpus_list"):
            copy_attr(f"{cpus}/{name}/topology/{attr}",
                      os.path.join(root, cpus[1:], name, "topology", attr))
        cache = f"{cpus}/{name}/cache"
        if os.path.isdir(cache):
            for idx in sorted(os.listdir(cache)):
                if not idx.startswith("index"):
                    continue
                for attr in ("level", "type", "size", "coherency_line_size", "shared_cpu_list"):
                    copy_attr(f"{cache}/{idx}/{attr}",
                              os.path.join(root, cache[1:], idx, attr))
    for name in sorted(os.listdir("/sys/bus/pci/devices")):
        p = f"/sys/bus/pci/devices/{name}"
        try:
            cls = open(f"{p}/class").read().strip()
        except OSError:
            continue
        if cls.startswith("0x03"):
            for attr in ("vendor", "device", "class", "numa_node", "current_link_speed",
                         "current_link_width"):
                copy_attr(f"{p}/{attr}", os.path.join(root, "sys/bus/pci/devices", name, attr))
    copy_attr("/proc/iomem", os.path.join(root, "proc/iomem"))
    n = sum(len(f) for _, _, f in os.walk(root))
    print(f"sysfs snapshot: {n} files under {root}")


if __name__ == "__main__":
    main()
