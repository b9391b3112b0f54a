#!/usr/bin/env python3
# Used for the memory notes of benches/PROFILE.md: python3 benches/resident.py PID BINARY
"""Which crates' code is resident in a process: pagemap present bits of the binary's
executable mapping, attributed to symbols (nm) and grouped by crate."""
import collections, os, re, struct, subprocess, sys

pid, binary = sys.argv[1], os.path.realpath(sys.argv[2])
PAGE = os.sysconf("SC_PAGE_SIZE")
maps = []
for line in open(f"/proc/{pid}/maps"):
    parts = line.split()
    if len(parts) >= 6 and os.path.realpath(parts[5]) == binary:
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        maps.append((lo, hi, parts[1], int(parts[2], 16)))
# file offset -> vaddr via program headers (readelf -lW)
phdrs = []
for l in subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout.splitlines():
    l = l.split()
    if l and l[0] == "LOAD":
        off, va, _, fsz = (int(x, 16) for x in l[1:5])
        phdrs.append((off, va, fsz))
def off2va(o):
    for off, va, fsz in phdrs:
        if off <= o < off + fsz:
            return va + o - off
    return None
resident = set()  # vaddr page starts in ELF terms
with open(f"/proc/{pid}/pagemap", "rb") as pm:
    for lo, hi, perm, foff in maps:
        if "x" not in perm:
            continue
        n = (hi - lo) // PAGE
        pm.seek(lo // PAGE * 8)
        data = pm.read(n * 8)
        for i in range(n):
            (e,) = struct.unpack_from("<Q", data, i * 8)
            if e >> 63 & 1:
                va = off2va(foff + i * PAGE)
                if va is not None:
                    resident.add(va // PAGE)
syms = []
out = subprocess.run(["nm", "-C", "--print-size", "-t", "d", binary], capture_output=True, text=True).stdout
for l in out.splitlines():
    m = re.match(r"\s*(\d+) (\d+) ([tTwW]) (.*)", l)
    if m:
        syms.append((int(m.group(1)), int(m.group(2)), m.group(4)))
def crate(name):
    n = name
    n = re.sub(r"^<", "", n)
    n = re.sub(r"^(impl |dyn )", "", n)
    n = n.lstrip("&*() ")
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)::", n)
    return m.group(1) if m else "?" + n[:20]
bytes_by = collections.Counter(); size_by = collections.Counter()
for a, s, n in syms:
    c = crate(n)
    size_by[c] += s
    # resident bytes of this symbol
    p0, p1 = a // PAGE, (a + s - 1) // PAGE if s else a // PAGE
    r = sum(1 for p in range(p0, p1 + 1) if p in resident)
    if r:
        bytes_by[c] += min(s, r * PAGE) if p1 > p0 else s
tot = len(resident) * PAGE
print(f"resident code pages: {len(resident)} ({tot/1024:.0f} KB) of the binary's executable mapping")
print(f"{'crate':30} {'resident KB (symbols)':>22} {'code KB':>10}")
for c, b in bytes_by.most_common(25):
    print(f"{c:30} {b/1024:22.0f} {size_by[c]/1024:10.0f}")
