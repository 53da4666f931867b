#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run one libFuzzer target for a bounded time.

    run_fuzz.py TARGET SEED_DIR SECONDS [FORMAT]

Seeds a fresh corpus, runs the target for SECONDS (-max_total_time), and fails
if it found a crash, a leak or a timeout. Crash inputs are kept in the build
tree (fuzz-artifacts/TARGET/). FORMAT says what a seed is for the target:

  frames     every 7th frame of the classic-pcap files in SEED_DIR, as is, and
             every .json file there, whole (fuzz_wire_parse, fuzz_loadgen_desc)
  transport  the input format of fuzz_transport.c: a header, then records;
             each seed is 8 consecutive frames of one rxe capture as "raw
             packet" records, plus hand-made sequences (in-order WRITE, READ,
             atomics, SEND with receives, multi-packet messages, responses)
  ctl        the input format of fuzz_daemon_ctl.c: HELLO, then well-formed
             requests whose handle words name earlier answers (0xFE marks)
  shm        the input format of fuzz_shm.c: each ring kind and size with
             client posts, daemon dequeues, index moves and doorbells
  cm         the input format of fuzz_cm.c: every CM MAD of the pcaps in
             SEED_DIR injected whole, and scripted connections (RC and UD:
             listen, resolve, connect, accept, establish, disconnect, time)

Set FUZZ_CORPUS=DIR to keep and reuse a corpus (doc/fuzzing.md), and
FUZZ_JOBS / extra libFuzzer flags through FUZZ_ARGS for long runs.
"""
import os
import random
import shlex
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


def ib_part(frame):
    """BTH through ICRC of an Ethernet/[VLAN]/IPv4|IPv6/UDP 4791 frame, or None."""
    off = 12
    etype = struct.unpack(">H", frame[off:off + 2])[0]
    off += 2
    if etype == 0x8100:
        etype = struct.unpack(">H", frame[off + 2:off + 4])[0]
        off += 4
    if etype == 0x0800:
        ihl = (frame[off] & 0x0F) * 4
        if frame[off + 9] != 17:
            return None
        off += ihl
    elif etype == 0x86DD:
        if frame[off + 6] != 17:
            return None
        off += 40
    else:
        return None
    if len(frame) < off + 8 or struct.unpack(">H", frame[off + 2:off + 4])[0] != 4791:
        return None
    return frame[off + 8:]


# ---------------------------------------------------------------- frames ---

def seeds_frames(seed_dir):
    for name in sorted(os.listdir(seed_dir)):
        if name.endswith(".pcap"):
            for i, frame in enumerate(pcap_frames(os.path.join(seed_dir, name))):
                if i % 7 == 0:  # a sample is enough; many frames are alike
                    yield f"{name}-{i}", frame
        elif name.endswith(".json"):
            with open(os.path.join(seed_dir, name), "rb") as f:
                yield name, f.read()


# ------------------------------------------------------------- transport ---
# Record command bytes of fuzz_transport.c (value % 12).
T_REQ, T_MSG, T_RESP, T_RAW, T_TIME, T_POST, T_RECV, T_STATE = 0, 3, 4, 6, 7, 8, 9, 10


def t_header(mtu=3, psn_base=1, nrecv=4, pre=0, retry=0x3F):
    # cfg: mtu enum (1 + cfg % 5), PSN base index in bits 3-4
    return bytes([(mtu - 1) | psn_base << 3, nrecv, pre, retry])


def t_request(qp, op, psnmode=0, flags=0x08, paylen=0, key=0, vamode=0, va=0, lenmode=0,
              tamper=0):
    r = bytes([T_REQ, qp, op, flags, psnmode])
    r += struct.pack("<H", paylen)
    r += bytes([key]) + bytes([vamode]) + struct.pack("<H", va) + bytes([lenmode])
    r += struct.pack("<QQI", 5, 7, 0x11223344) + bytes([0]) + bytes([tamper])
    return r


def seeds_transport(seed_dir):
    n = 0
    for d in (seed_dir, os.path.join(os.path.dirname(seed_dir), "rxe-ipv6")):
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".pcap"):
                continue
            ibs = [p for p in (ib_part(f) for f in pcap_frames(os.path.join(d, name))) if p]
            for start in range(0, len(ibs), 40):
                seq = t_header(mtu=5, nrecv=7, pre=0xFF)
                for k, ib in enumerate(ibs[start:start + 8]):
                    seq += bytes([T_RAW]) + struct.pack("<H", len(ib)) + bytes([k % 5]) + ib
                n += 1
                yield f"{name}-{start}", seq
    # Hand-made sequences against QP 0 (RC), 2 (UC), 3 (UD), 4 (RC on SRQ).
    W_ONLY, R_REQ, CS, FA, S_ONLY, S_INV = 0x0A, 0x0C, 0x13, 0x14, 0x04, 0x17
    yield "write-in-order", t_header() + b"".join(
        t_request(0, W_ONLY, paylen=64 * i, key=0, vamode=0, va=8 * i) for i in range(1, 6))
    yield "read", t_header() + t_request(0, R_REQ, key=0, lenmode=1) + bytes([T_TIME, 0, 1, 0, 0])
    yield "atomics", t_header() + t_request(0, FA, key=0, vamode=6) + t_request(0, CS, key=0)
    yield "send-recv", t_header(nrecv=7) + b"".join(
        t_request(q, S_ONLY, paylen=100) for q in (0, 2, 4))
    yield "send-inv", t_header(nrecv=7) + t_request(0, S_INV, paylen=8, key=0)
    yield "ro-write", t_header() + t_request(0, W_ONLY, paylen=16, key=1)
    yield "noacc-read", t_header() + t_request(0, R_REQ, key=3, lenmode=4)
    yield "ud", t_header(nrecv=7) + t_request(3, 0x04, paylen=200)
    yield "messages", t_header(nrecv=7) + bytes([T_MSG, 0, 1, 0, 0, 0, 0, 0]) + \
        bytes([T_MSG, 2, 0, 0, 0, 0, 0, 0])
    yield "responses", t_header(pre=0xFF) + bytes([T_RESP, 1, 0, 0, 0]) + \
        bytes([T_RESP, 1, 4, 0, 1]) + bytes([T_RESP, 1, 5, 0, 2]) + bytes([T_TIME, 0, 0, 0x10, 0])
    yield "states", t_header() + bytes([T_STATE, 0, 0, T_STATE, 0, 1, T_STATE, 2, 3]) + \
        t_request(0, W_ONLY, paylen=4)
    yield "posts", t_header() + bytes([T_POST, 1, 0x0C, 0, 0, 0x10, 0, 0, 0, 0]) + \
        bytes([T_RECV, 0, 0, 0, 0, 0x40, 0])


# ------------------------------------------------------------------- ctl ---
HDR = 24
M_HELLO, M_SEG, M_PD, M_MR, M_CQ, M_QP, M_MODQP = 1, 2, 4, 6, 8, 10, 12
M_SRQ, M_AH, M_QDEV, M_QGID = 14, 18, 20, 22


def c_msg(mtype, body, fdkind=0):
    # record: selector (not 3 mod 4), mode 0, fd kind, type, body
    return bytes([0, 0, fdkind, mtype]) + body


def h(i):
    """A handle word: the i-th handle the daemon gave this client."""
    return struct.pack("<I", 0xFE000000 | i)


def seeds_ctl(_seed_dir):
    hello = bytes([1])  # automatic HELLO
    seg = c_msg(M_SEG, struct.pack("<QII", 65536, 0, 0), fdkind=1) + bytes([15])
    pd = c_msg(M_PD, b"")
    mr = c_msg(M_MR, h(1) + h(0) + struct.pack("<QQQII", 0, 4096, 0x7000000, 0xF, 0))
    cq = c_msg(M_CQ, struct.pack("<IIII", 16, 0, 0, 0))
    cqev = c_msg(M_CQ, struct.pack("<IIII", 16, 0, 1, 0), fdkind=2)
    qp = c_msg(M_QP, h(1) + h(3) + h(3) + struct.pack("<III", 0xFFFFFFFF, 2, 0) +
               struct.pack("<IIIIII", 4, 4, 1, 1, 0, 0))
    yield "hello-pd", hello + pd
    yield "seg-mr", hello + seg + pd + mr
    yield "cq-qp", hello + pd + cq + qp
    yield "full", hello + seg + pd + mr + cq + qp
    yield "cq-eventfd", hello + cqev
    yield "no-hello", bytes([0]) + pd
    yield "queries", hello + c_msg(M_QDEV, b"") + c_msg(M_QGID, struct.pack("<BBBBI", 1, 0, 0, 0, 1))
    # A QP whose send ring gets scribbled on, and a doorbell rung.
    yield "scribble", hello + pd + cq + qp + bytes([3, 0xC5, 1, 0, 0, 0, 0]) + bytes(6) + \
        bytes([3, 0x80, 0, 0, 0, 0, 0, 0, 0])
    yield "garbage", hello + bytes([0, 2, 0]) + struct.pack("<H", 40) + bytes(range(40))


# ------------------------------------------------------------------- shm ---
def seeds_shm(_seed_dir):
    rnd = random.Random(1)
    for kind in range(3):
        for size_log in (0, 2, 6):
            g = kind + 3 * size_log
            hdr = bytes([g, 0, 0xFD, 8]) + struct.pack("<H", 256)
            ops = b""
            for _ in range(16):
                op = rnd.choice([0, 1, 2, 4, 4, 5, 6, 7])
                ops += bytes([op]) + bytes(rnd.randrange(256) for _ in range(12))
            yield f"k{kind}-s{size_log}", hdr + ops


# -------------------------------------------------------------------- cm ---
CM_INJECT, CM_DELIVER, CM_TIME, CM_ID, CM_OP, CM_ANSWER, CM_PUMP, CM_RAW = range(8)
OP_CONNECT, OP_ACCEPT, OP_REJECT, OP_ESTABLISH, OP_DISCONNECT = range(5)


def cm_op(side, slot, what, arg=0x07010101):
    return bytes([CM_OP, side, slot, what]) + struct.pack("<I", arg)


def seeds_cm(seed_dir):
    for name in sorted(os.listdir(seed_dir)):
        if not name.endswith(".pcap"):
            continue
        mads = [ib[20:20 + 256] for ib in (ib_part(f) for f in
                                           pcap_frames(os.path.join(seed_dir, name))) if ib]
        for i, mad in enumerate(mads):
            yield f"{name}-{i}", bytes([CM_INJECT, i & 1]) + struct.pack("<H", len(mad)) + mad
    pump = bytes([CM_PUMP, 0])
    for ps, tag in ((0, "rc"), (1, "ud")):
        listen = bytes([CM_ID, 1, ps, 0x40])
        resolve = bytes([CM_ID, 0, ps, 0x00])
        conn = listen + resolve + cm_op(0, 0, OP_CONNECT) + pump
        yield f"connect-{tag}", conn + cm_op(1, 1, OP_ACCEPT) + pump + \
            cm_op(0, 0, OP_ESTABLISH) + pump + cm_op(0, 0, OP_DISCONNECT) + pump + \
            cm_op(1, 1, OP_DISCONNECT) + pump + bytes([CM_TIME, 0]) + struct.pack("<H", 200)
        yield f"reject-{tag}", conn + cm_op(1, 1, OP_REJECT) + pump
        yield f"timeout-{tag}", listen + resolve + cm_op(0, 0, OP_CONNECT) + \
            b"".join(bytes([CM_TIME, 0]) + struct.pack("<H", 300) for _ in range(6))
        yield f"lossy-{tag}", conn + cm_op(1, 1, OP_ACCEPT) + bytes([CM_DELIVER, 1, 0xFE, 0]) + \
            bytes([CM_TIME, 0]) + struct.pack("<H", 300) + pump + cm_op(0, 0, OP_ESTABLISH) + pump


GENERATORS = {"frames": seeds_frames, "transport": seeds_transport, "ctl": seeds_ctl,
              "shm": seeds_shm, "cm": seeds_cm}


def main():
    target, seed_dir, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
    fmt = sys.argv[4] if len(sys.argv) > 4 else "frames"
    keep = os.environ.get("FUZZ_CORPUS")
    corpus = keep or tempfile.mkdtemp(prefix="uroce-fuzz-")
    os.makedirs(corpus, exist_ok=True)
    n = 0
    for name, blob in GENERATORS[fmt](seed_dir):
        with open(os.path.join(corpus, "seed-" + name), "wb") as f:
            f.write(blob)
        n += 1
    print(f"seeded {n} inputs ({fmt}) from {seed_dir}", flush=True)
    artifacts = os.path.join(os.getcwd(), "fuzz-artifacts", os.path.basename(target))
    os.makedirs(artifacts, exist_ok=True)
    cmd = [target, corpus, f"-max_total_time={seconds}", "-timeout=25",
           "-rss_limit_mb=2048", "-print_final_stats=1",
           f"-artifact_prefix={artifacts}/"]
    cmd += shlex.split(os.environ.get("FUZZ_ARGS", ""))
    print(" ".join(cmd), flush=True)
    rc = subprocess.call(cmd)
    if not keep:
        subprocess.call(["rm", "-rf", corpus])
    if rc != 0:
        print(f"FAIL: {target} exited {rc}; inputs in {artifacts}")
        return 1
    print(f"PASS: {target} ran {seconds}s with no crash")
    return 0


if __name__ == "__main__":
    sys.exit(main())
