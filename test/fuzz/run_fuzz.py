#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run one libFuzzer target for a bounded time.

Seeds the corpus with every frame of the classic-pcap files in SEED_DIR (read
with the standard library only) and with every .json file there, whole, runs
the target for SECONDS, and fails if it found a crash, a leak or a timeout.
Crash inputs are kept in the build tree.
"""
import os
import struct
import subprocess
import sys
import tempfile


def pcap_frames(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        yield data[off:off + incl]
        off += incl


def main():
    target, seed_dir, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
    corpus = tempfile.mkdtemp(prefix="uroce-fuzz-")
    n = 0
    for name in sorted(os.listdir(seed_dir)):
        if name.endswith(".pcap"):
            for i, frame in enumerate(pcap_frames(os.path.join(seed_dir, name))):
                if i % 7 == 0:  # a sample is enough; many frames are alike
                    with open(os.path.join(corpus, f"{name}-{i}"), "wb") as f:
                        f.write(frame)
                    n += 1
        elif name.endswith(".json"):
            with open(os.path.join(seed_dir, name), "rb") as src, \
                    open(os.path.join(corpus, name), "wb") as dst:
                dst.write(src.read())
            n += 1
    print(f"seeded {n} inputs from {seed_dir}", flush=True)
    artifacts = os.path.join(os.getcwd(), "fuzz-artifacts", os.path.basename(target))
    os.makedirs(artifacts, exist_ok=True)
    cmd = [target, corpus, f"-max_total_time={seconds}", "-timeout=10",
           "-rss_limit_mb=2048", "-print_final_stats=1",
           f"-artifact_prefix={artifacts}/"]
    print(" ".join(cmd), flush=True)
    rc = subprocess.call(cmd)
    subprocess.call(["rm", "-rf", corpus])
    if rc != 0:
        print(f"FAIL: {target} exited {rc}; inputs in {artifacts}")
        return 1
    print(f"PASS: {target} ran {seconds}s with no crash")
    return 0


if __name__ == "__main__":
    sys.exit(main())
