#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
"""Build the installed liburoce.a: the static libraries given are linked into
one relocatable object, every global symbol that the version script does not
export is made local (so a program linking liburoce.a statically cannot
collide with liburoce's internal names such as verbs_rpc), and the object is
archived. The same version script makes the shared library's exports."""

import argparse
import os
import re
import subprocess
import sys


def exported(map_path):
    text = re.sub(r"/\*.*?\*/", "", open(map_path).read(), flags=re.S)
    # Every version node's global list (each ends at its local: or its }).
    sections = re.findall(r"global:(.*?)(?:local:|\})", text, flags=re.S)
    if not sections:
        sys.exit(f"{map_path}: no 'global:' section")
    return [n for sec in sections for n in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*;", sec)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--map", required=True)
    ap.add_argument("--objcopy", required=True)
    ap.add_argument("--ar", required=True)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--cc", nargs="+", required=True)
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()

    obj = a.output + ".o"
    keep = a.output + ".syms"
    with open(keep, "w") as f:
        f.write("\n".join(exported(a.map)) + "\n")
    subprocess.run(a.cc + ["-r", "-nostdlib", "-o", obj, "-Wl,--whole-archive"] +
                   a.inputs + ["-Wl,--no-whole-archive"], check=True)
    subprocess.run([a.objcopy, "--keep-global-symbols=" + keep, obj], check=True)
    if os.path.exists(a.output):
        os.unlink(a.output)
    subprocess.run([a.ar, "rcs", a.output, obj], check=True)
    os.unlink(obj)
    os.unlink(keep)


if __name__ == "__main__":
    main()
