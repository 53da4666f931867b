#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
"""Build RoCEv2 test vectors whose ICRC uroce did not compute.

Run with Debian's /usr/bin/python3 (python3-scapy); the pyenv python3 on PATH
has no scapy. Writes, next to this script:

  roce-scapy.pcap  classic pcap, Ethernet, one RoCEv2 frame per vector
  roce-scapy.txt   one line per frame: index, family, ICRC as the CRC value
                   (host order; the wire carries it little-endian), name

Where the ICRC comes from:
  * IPv4 frames: scapy.contrib.roce's BTH.compute_icrc() (scapy builds the
    masked pseudo packet itself and runs zlib.crc32 over it). Extension
    headers scapy has no layer for (RETH, DETH, ImmDt, AtomicETH, ...) are
    given as raw bytes after the BTH: scapy's ICRC covers them as payload,
    which is exactly what the IBA says.
  * "hw-cx4lx-cnp": a CNP captured on a Mellanox ConnectX-4 Lx, from scapy's
    own regression tests (test/contrib/roce.uts); the ICRC is the NIC's.
    The script checks that scapy recomputes the same value.
  * IPv6 frames: scapy 2.5.0 (Debian 12) does not compute the ICRC for IPv6
    (it warns and writes 0), so this script computes it with zlib.crc32 over
    a pseudo packet masked by byte offsets (IBA A17.4.1: traffic class, flow
    label and hop limit set to ones). That is a second implementation written
    from the spec in another language, not a third party's; later scapy
    versions mask the same fields.

The output is deterministic: re-running the script must not change the
committed files (the pcap timestamps are fixed).
"""

import os
import struct
import sys
import zlib

try:
    from scapy.all import Ether, Dot1Q, IP, IPv6, UDP, Raw, raw
    from scapy.layers.inet import IPOption_RR, IPOption_Router_Alert
    from scapy.contrib.roce import BTH, AETH, cnp
except ImportError as e:  # pragma: no cover
    sys.stderr.write("SKIP: scapy not importable (%s); use /usr/bin/python3\n" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))

MAC_A = "02:fc:00:00:00:01"
MAC_B = "02:fc:00:00:00:02"
IP_A = "198.18.0.1"
IP_B = "198.18.0.2"
IP6_A = "2001:2::1"     # RFC 5180 benchmarking range
IP6_B = "2001:2::2"

# Opcodes (IBA table 35)
RC, UC, UD = 0x00, 0x20, 0x60
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM = 0x00, 0x01, 0x02, 0x03
SEND_ONLY, SEND_ONLY_IMM = 0x04, 0x05
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM = 0x06, 0x07, 0x08, 0x09
WRITE_ONLY, WRITE_ONLY_IMM, READ_REQ = 0x0A, 0x0B, 0x0C
READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST, READ_RESP_ONLY = 0x0D, 0x0E, 0x0F, 0x10
ACK, ATOMIC_ACK, CMP_SWAP, FETCH_ADD = 0x11, 0x12, 0x13, 0x14
SEND_LAST_INV, SEND_ONLY_INV = 0x16, 0x17


def payload(n, seed):
    return bytes(((i * 131 + seed * 7 + 3) & 0xFF) for i in range(n))


def reth(va, rkey, length):
    return struct.pack("!QII", va, rkey, length)


def deth(qkey, src_qp):
    return struct.pack("!II", qkey, src_qp & 0xFFFFFF)


def atmeth(va, rkey, swap_add, compare):
    return struct.pack("!QIQQ", va, rkey, swap_add, compare)


def aeth(syndrome, msn):
    return struct.pack("!I", (syndrome << 24) | (msn & 0xFFFFFF))


def imm(v):
    return struct.pack("!I", v)


def pad(n):
    return (4 - (n & 3)) & 3


def ib_part(op, ext, plen, seed, **bth):
    """BTH layer plus the bytes after it (extension headers, payload, pad)."""
    p = pad(plen)
    return BTH(opcode=op, padcount=p, **bth) / Raw(ext + payload(plen, seed) + b"\0" * p)


def icrc_v6(frame_bytes, l3_off):
    """ICRC of an IPv6 RoCEv2 frame whose last 4 bytes are a placeholder."""
    l3 = bytearray(frame_bytes[l3_off:-4])
    l3[0] |= 0x0F                   # traffic class, high nibble
    l3[1:4] = b"\xff\xff\xff"       # traffic class low nibble, flow label
    l3[7] = 0xFF                    # hop limit
    l3[40 + 6:40 + 8] = b"\xff\xff"  # UDP checksum
    l3[48 + 4] = 0xFF               # BTH byte 4: FECN, BECN, reserved
    return zlib.crc32(b"\xff" * 8 + bytes(l3)) & 0xFFFFFFFF


vectors = []   # (name, family, scapy packet or bytes)


def add4(name, ib, tos=0, ttl=64, udp_chksum=0, vlan=None, options=None, ip_id=1):
    ipkw = dict(src=IP_A, dst=IP_B, tos=tos, ttl=ttl, flags="DF", id=ip_id)
    if options is not None:
        ipkw["options"] = options
    l2 = Ether(src=MAC_A, dst=MAC_B)
    if vlan is not None:
        l2 = l2 / Dot1Q(prio=vlan >> 13, vlan=vlan & 0xFFF)
    udp = UDP(sport=0xC000 | (len(vectors) * 97 & 0x3FFF), dport=4791)
    if udp_chksum is not None:
        udp.chksum = udp_chksum
    vectors.append((name, 4, l2 / IP(**ipkw) / udp / ib))


def add6(name, ib, tc=0, fl=0, hlim=64, udp_chksum=0, vlan=None):
    l2 = Ether(src=MAC_A, dst=MAC_B)
    if vlan is not None:
        l2 = l2 / Dot1Q(prio=vlan >> 13, vlan=vlan & 0xFFF)
    ib.icrc = 0                     # placeholder, replaced below
    udp = UDP(sport=0xC000 | (len(vectors) * 97 & 0x3FFF), dport=4791)
    if udp_chksum is not None:
        udp.chksum = udp_chksum
    pkt = l2 / IPv6(src=IP6_A, dst=IP6_B, tc=tc, fl=fl, hlim=hlim) / udp / ib
    b = raw(pkt)
    l3_off = 14 + (4 if vlan is not None else 0)
    crc = icrc_v6(b, l3_off)
    vectors.append((name, 6, b[:-4] + struct.pack("<I", crc)))


def build():
    # RC SEND ONLY over the payload lengths the interop test uses too.
    for n in (0, 1, 3, 4, 255, 256, 1024, 4096):
        add4("rc-send-only-%d" % n, ib_part(RC | SEND_ONLY, b"", n, n, dqpn=0x11, psn=n,
                                            ackreq=1, migreq=1))
    add4("rc-send-first-1024", ib_part(RC | SEND_FIRST, b"", 1024, 1, dqpn=0x12, psn=0xFFFFFF))
    add4("rc-send-middle-1024", ib_part(RC | SEND_MIDDLE, b"", 1024, 2, dqpn=0x12, psn=0))
    add4("rc-send-last-imm-7", ib_part(RC | SEND_LAST_IMM, imm(0xDEADBEEF), 7, 3, dqpn=0x12,
                                       psn=1, solicited=1))
    add4("rc-send-only-inv-20", ib_part(RC | SEND_ONLY_INV, imm(0x1234), 20, 4, dqpn=0x12, psn=2))
    add4("rc-write-first-4096", ib_part(RC | WRITE_FIRST, reth(0x7F0012345000, 0x241, 12288),
                                        4096, 5, dqpn=0x13, psn=10))
    add4("rc-write-last-2", ib_part(RC | WRITE_LAST, b"", 2, 6, dqpn=0x13, psn=12, ackreq=1))
    add4("rc-write-only-imm-64", ib_part(RC | WRITE_ONLY_IMM,
                                         reth(0x1000, 0x99, 64) + imm(7), 64, 7,
                                         dqpn=0x13, psn=13))
    add4("rc-read-request", ib_part(RC | READ_REQ, reth(0x56150DF89000, 0x241, 8192), 0, 0,
                                    dqpn=0x14, psn=0x7E6610))
    add4("rc-read-resp-first-1024", ib_part(RC | READ_RESP_FIRST, aeth(0x1F, 5), 1024, 8,
                                            dqpn=0x15, psn=0x7E6610))
    add4("rc-read-resp-middle-1024", ib_part(RC | READ_RESP_MIDDLE, b"", 1024, 9,
                                             dqpn=0x15, psn=0x7E6611))
    add4("rc-read-resp-last-5", ib_part(RC | READ_RESP_LAST, aeth(0x1F, 6), 5, 10,
                                        dqpn=0x15, psn=0x7E6612))
    # ACK with scapy's own AETH layer
    add4("rc-ack", BTH(opcode=RC | ACK, dqpn=0x16, psn=99) / AETH(syndrome=0x1F, msn=42))
    add4("rc-nak-psn-seq", BTH(opcode=RC | ACK, dqpn=0x16, psn=100) / AETH(syndrome=0x60, msn=43))
    add4("rc-rnr-nak", BTH(opcode=RC | ACK, dqpn=0x16, psn=101) / AETH(syndrome=0x2E, msn=43))
    add4("rc-atomic-ack", ib_part(RC | ATOMIC_ACK, aeth(0x1F, 44) + struct.pack("!Q", 1 << 40),
                                  0, 0, dqpn=0x16, psn=102))
    add4("rc-cmp-swap", ib_part(RC | CMP_SWAP, atmeth(0x2000, 0x77, 5, 4), 0, 0,
                                dqpn=0x17, psn=103))
    add4("rc-fetch-add", ib_part(RC | FETCH_ADD, atmeth(0x2008, 0x77, 1, 0), 0, 0,
                                 dqpn=0x17, psn=104, ackreq=1))
    add4("uc-send-only-imm-33", ib_part(UC | SEND_ONLY_IMM, imm(0xCAFE), 33, 11,
                                        dqpn=0x18, psn=0x800000))
    add4("uc-write-only-100", ib_part(UC | WRITE_ONLY, reth(0x3000, 0x55, 100), 100, 12,
                                      dqpn=0x18, psn=0x800001))
    add4("ud-send-only-256", ib_part(UD | SEND_ONLY, deth(0x11111111, 0x19), 256, 13,
                                     dqpn=0x1A, psn=1))
    add4("ud-send-only-imm-gsi", ib_part(UD | SEND_ONLY_IMM, deth(0x80010000, 1) + imm(1), 256,
                                         14, dqpn=1, psn=2))
    add4("cnp", cnp(dqpn=0xD2))
    # Variant fields set to values other than rxe's defaults: masked, so the
    # ICRC must be the same as if they were zero.
    add4("rc-send-only-ecn-ce-ttl1", ib_part(RC | SEND_ONLY, b"", 32, 15, dqpn=0x11, psn=3),
         tos=0x8B, ttl=1)
    add4("rc-send-only-udpcsum", ib_part(RC | SEND_ONLY, b"", 32, 16, dqpn=0x11, psn=4),
         udp_chksum=None)   # scapy computes a real UDP checksum
    add4("rc-send-only-fecn-becn", ib_part(RC | SEND_ONLY, b"", 32, 17, dqpn=0x11, psn=5,
                                           fecn=1, becn=1))
    # IPv4 header with options: the ICRC covers all IHL words.
    add4("rc-send-only-ipopt-rr", ib_part(RC | SEND_ONLY, b"", 16, 18, dqpn=0x11, psn=6),
         options=[IPOption_RR()])
    add4("rc-send-only-ipopt-ra", ib_part(RC | SEND_ONLY, b"", 16, 19, dqpn=0x11, psn=7),
         options=[IPOption_Router_Alert()])
    add4("rc-send-only-ipopt-max", ib_part(RC | SEND_ONLY, b"", 16, 20, dqpn=0x11, psn=8),
         options=[IPOption_RR(routers=["198.18.1.%d" % i for i in range(9)])])
    # 802.1Q
    add4("vlan-rc-write-only-128", ib_part(RC | WRITE_ONLY, reth(0x4000, 0x66, 128), 128, 21,
                                           dqpn=0x1B, psn=9), vlan=(5 << 13) | 100)
    add4("vlan-rc-ack", BTH(opcode=RC | ACK, dqpn=0x1B, psn=9) / AETH(syndrome=0x1F, msn=1),
         vlan=(3 << 13) | 4094)

    # Hardware-made CNP (ConnectX-4 Lx), from scapy's regression tests.
    hw = bytes.fromhex(
        "e41d2dab2bc27cfe90643b32080045c2"
        "003c718c400040119161 0a0011010a00"
        "12010000 12b70028 0000 8100 ffff 4000"
        "0118 0000 0000 0000 0000 0000 0000 0000"
        "0000 0000 0000 82fd002a".replace(" ", ""))
    again = Ether(hw)
    del again[BTH].icrc
    if raw(Ether(raw(again)))[-4:] != hw[-4:]:
        sys.exit("scapy does not reproduce the ConnectX-4 Lx CNP ICRC")
    vectors.append(("hw-cx4lx-cnp", 4, hw))

    # IPv6 (ICRC computed by icrc_v6() above; see the module docstring).
    for n in (0, 1, 3, 4, 255, 1024, 4096):
        add6("v6-rc-send-only-%d" % n, ib_part(RC | SEND_ONLY, b"", n, 30 + n, dqpn=0x21,
                                               psn=n))
    add6("v6-rc-write-first-1024", ib_part(RC | WRITE_FIRST, reth(0x5000, 0x88, 4096), 1024, 40,
                                           dqpn=0x21, psn=50))
    add6("v6-rc-read-request", ib_part(RC | READ_REQ, reth(0x5000, 0x88, 4096), 0, 0,
                                       dqpn=0x21, psn=51))
    add6("v6-rc-ack", BTH(opcode=RC | ACK, dqpn=0x21, psn=52) / AETH(syndrome=0x1F, msn=3))
    add6("v6-rc-fetch-add", ib_part(RC | FETCH_ADD, atmeth(0x2000, 0x77, 1, 0), 0, 0,
                                    dqpn=0x21, psn=53))
    add6("v6-ud-send-only-64", ib_part(UD | SEND_ONLY, deth(0x1234, 0x22), 64, 41,
                                       dqpn=0x23, psn=54))
    add6("v6-tc-fl-hlim-set", ib_part(RC | SEND_ONLY, b"", 40, 42, dqpn=0x21, psn=55),
         tc=0xB9, fl=0xABCDE, hlim=3, udp_chksum=None)
    add6("v6-vlan-rc-send-only-100", ib_part(RC | SEND_ONLY, b"", 100, 43, dqpn=0x21, psn=56),
         vlan=(7 << 13) | 1)
    add6("v6-cnp", cnp(dqpn=0x21))


def render():
    """The pcap and text file contents, as bytes."""
    build()
    frames = []
    lines = ["# index family icrc name  (generated by make_vectors.py; icrc is the CRC value,"
             " sent little-endian)"]
    for i, (name, fam, pkt) in enumerate(vectors):
        b = pkt if isinstance(pkt, bytes) else raw(pkt)
        e = Ether(b)
        # What scapy's dissector reads as the ICRC field (big-endian of the
        # wire bytes), turned back into the CRC value.
        crc = struct.unpack("<I", struct.pack("!I", e[BTH].icrc))[0]
        if struct.pack("<I", crc) != b[-4:]:
            sys.exit("%s: dissected ICRC does not match the frame's last 4 bytes" % name)
        if fam == 4 and crc == 0:
            sys.exit("%s: scapy did not compute an ICRC" % name)
        frames.append((1700000000 + i, b))
        lines.append("%d %d %08x %s" % (i, fam, crc, name))
    # Classic pcap (little-endian, microseconds, Ethernet), written here so
    # that the bytes do not depend on scapy's writer.
    pcap = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for ts, b in frames:
        pcap += struct.pack("<IIII", ts, 0, len(b), len(b)) + b
    return pcap, ("\n".join(lines) + "\n").encode()


def main():
    """Write the vectors, or with --check compare them with the committed ones
    (exit 1 if they differ, e.g. because a new scapy computes otherwise)."""
    pcap, txt = render()
    paths = [os.path.join(HERE, "roce-scapy.pcap"), os.path.join(HERE, "roce-scapy.txt")]
    if sys.argv[1:] == ["--check"]:
        for path, want in zip(paths, (pcap, txt)):
            with open(path, "rb") as fh:
                if fh.read() != want:
                    sys.exit("%s differs from what make_vectors.py makes now" % path)
        print("scapy vectors reproduced byte for byte (%d frames)" % (len(txt.splitlines()) - 1))
        return
    if sys.argv[1:]:
        sys.exit("usage: make_vectors.py [--check]")
    for path, data in zip(paths, (pcap, txt)):
        with open(path, "wb") as fh:
            fh.write(data)
    print("wrote %d vectors" % (len(txt.splitlines()) - 1))


if __name__ == "__main__":
    main()
