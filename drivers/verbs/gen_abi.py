#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
"""Generate the ABI of a drop-in library (libibverbs.so.1, librdmacm.so.1) from the
installed one.

The drop-in must export every default-version symbol of the system's
libibverbs.so.1 under the same version node, with the same node chain
(IBVERBS_1.0 <- 1.1 <- ... and the stand-alone IBVERBS_PRIVATE_<n> that
libmlx5 and libefa import with BIND_NOW). Reading them from the installed
library at build time keeps the drop-in right when the distribution moves
rdma-core. Only names are taken from it.

Outputs:
  --map    the linker version script (every node, `local: *` in the first)
  --stubs  C definitions for every exported name the drop-in's sources do not
           define: functions that fail with EOPNOTSUPP (NULL for pointer
           returns, nothing for void ones), zero-filled data objects of the
           right size. A public (verbs.h) name among them is reported, so a
           new rdma-core entry point does not go unnoticed.
"""

import argparse
import re
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def version_nodes(lib):
    """[(node, parent or None)] in definition order, from readelf -V."""
    nodes = []
    in_defs = False
    for line in run("readelf", "-V", "--wide", lib).splitlines():
        if "Version definition section" in line:
            in_defs = True
            continue
        if "Version needs section" in line:
            in_defs = False
        if not in_defs:
            continue
        m = re.search(r"Flags: (\S+).*Name: (\S+)", line)
        if m:
            if m.group(1) != "BASE":
                nodes.append([m.group(2), None])
            continue
        m = re.search(r"Parent 1: (\S+)", line)
        if m and nodes:
            nodes[-1][1] = m.group(1)
    return nodes


def default_symbols(lib):
    """{name: (node, nm type, size)} of every default-version (@@) definition."""
    syms = {}
    out = run("nm", "-D", "-S", "--with-symbol-versions", "--defined-only", lib)
    for line in out.splitlines():
        f = line.split()
        if not f or "@@" not in f[-1]:
            continue
        name, node = f[-1].split("@@", 1)
        kind = f[-2]
        size = int(f[1], 16) if len(f) == 4 else 0
        if kind == "A":  # the version node itself
            continue
        syms[name] = (node, kind, size)
    return syms


def defined_in_sources(paths):
    """Names defined at column 0 (DPDK style: `name(` on its own line)."""
    names = set()
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                m = re.match(r"^([A-Za-z_]\w*)\(", line)
                if m:
                    names.add(m.group(1))
    return names


# Return kinds of rdma-core's private entry points (driver.h is not
# installed); every other private one returns int.
PRIVATE_KINDS = {
    "_verbs_init_and_alloc_context": "ptr",
    "verbs_open_device": "ptr",
    "verbs_set_ops": "void",
    "verbs_uninit_context": "void",
    "verbs_init_cq": "void",
    "__ioctl_final_num_attrs": "int",
}


def return_kind(name, header_text):
    """'ptr', 'void' or 'int', from the declaration in the public header."""
    if name in PRIVATE_KINDS:
        return PRIVATE_KINDS[name], False
    m = re.search(r"(?:^|[;}\n])\s*([A-Za-z_][\w \t\*]*?)\b" + re.escape(name) + r"\s*\(",
                  header_text)
    if not m:
        return "int", False
    prefix = m.group(1).strip()
    if prefix.endswith("*"):
        return "ptr", True
    words = [w for w in prefix.split() if w not in ("extern", "static", "inline", "const")]
    if words == ["void"]:
        return "void", True
    return "int", True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True, help="the installed library (libibverbs.so.1 ...)")
    ap.add_argument("--header", required=True, action="append",
                    help="a public header declaring the entry points (repeatable)")
    ap.add_argument("--private-prefix", default="IBVERBS_PRIVATE",
                    help="version nodes whose stubs are not worth a warning")
    ap.add_argument("--map", required=True)
    ap.add_argument("--stubs", required=True)
    ap.add_argument("sources", nargs="+", help="the drop-in's C sources")
    a = ap.parse_args()

    nodes = version_nodes(a.lib)
    syms = default_symbols(a.lib)
    if not nodes or not syms:
        sys.exit(f"gen_abi: no version nodes or symbols in {a.lib}")
    header = ""
    for h in a.header:
        with open(h, encoding="utf-8") as fh:
            header += fh.read() + "\n"

    ours = defined_in_sources(a.sources)

    by_node = {n: [] for n, _ in nodes}
    for name, (node, _, _) in sorted(syms.items()):
        if node not in by_node:
            sys.exit(f"gen_abi: {name}@@{node}: node not defined by readelf -V")
        by_node[node].append(name)
    with open(a.map, "w", encoding="utf-8") as fh:
        fh.write(f"/* Generated by gen_abi.py from {a.lib}: do not edit. */\n")
        for i, (node, parent) in enumerate(nodes):
            fh.write(f"{node} {{\n\tglobal:\n")
            for name in by_node[node]:
                fh.write(f"\t\t{name};\n")
            if i == 0:
                fh.write("\tlocal:\n\t\t*;\n")
            fh.write("}" + (f" {parent}" if parent else "") + ";\n")

    public_stubs = []
    with open(a.stubs, "w", encoding="utf-8") as fh:
        fh.write("/* SPDX-License-Identifier: BSD-3-Clause */\n")
        fh.write(f"/* Generated by gen_abi.py from {a.lib}: do not edit.\n")
        fh.write(" * Exported names the drop-in does not implement. */\n")
        fh.write("#include <errno.h>\n#include <stddef.h>\n\n")
        fh.write('#define STUB __attribute__((visibility("default")))\n\n')
        for name, (node, kind, size) in sorted(syms.items()):
            if name in ours:
                continue
            if kind in ("B", "b", "D", "d", "V", "v", "G", "g", "R", "r", "S", "s"):
                fh.write(f"STUB unsigned char {name}[{max(size, 1)}];\n")
                continue
            rk, public = return_kind(name, header)
            if public and not node.startswith(a.private_prefix):
                public_stubs.append(name)
            if rk == "ptr":
                fh.write(f"STUB void *{name}(void);\n"
                         f"STUB void *\n{name}(void)\n{{\n\terrno = EOPNOTSUPP;\n"
                         "\treturn NULL;\n}\n\n")
            elif rk == "void":
                fh.write(f"STUB void {name}(void);\n"
                         f"STUB void\n{name}(void)\n{{\n}}\n\n")
            else:
                fh.write(f"STUB int {name}(void);\n"
                         f"STUB int\n{name}(void)\n{{\n\terrno = EOPNOTSUPP;\n"
                         "\treturn EOPNOTSUPP;\n}\n\n")
    total = len(syms)
    print(f"gen_abi: {total} default-version symbols in {len(nodes)} nodes; "
          f"{total - len([s for s in syms if s not in ours])} implemented")
    if public_stubs:
        print("gen_abi: WARNING: public entry points without an implementation "
              "(EOPNOTSUPP stubs): " + ", ".join(public_stubs))


if __name__ == "__main__":
    main()
