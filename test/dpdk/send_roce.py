#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Send RoCEv2 frames built by scapy (scapy.contrib.roce computes the ICRC) on
# an interface: --good N valid RC SEND Only packets, --bad N copies with one
# payload byte flipped after the ICRC was computed. Used by the dpdk suite.
import argparse
import struct
import zlib

from scapy.all import Dot1Q, Ether, IP, IPv6, UDP, Raw, sendp, raw, conf
from scapy.contrib.roce import BTH, opcode

ap = argparse.ArgumentParser()
ap.add_argument("--iface", required=True)
ap.add_argument("--dmac", required=True)
ap.add_argument("--smac", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--dst", required=True)
ap.add_argument("--good", type=int, default=0)
ap.add_argument("--bad", type=int, default=0)
ap.add_argument("--vlan", type=int, default=0, help="802.1Q VLAN id (0: untagged)")
a = ap.parse_args()



def icrc_ipv6(frame):
    """ICRC of an Ethernet/IPv6/UDP/BTH frame whose last 4 bytes are the ICRC.
    scapy.contrib.roce computes it for IPv4 only, so for IPv6 this follows
    RoCEv2 annex A17.4.1 directly: 8 bytes of ones in place of the LRH, the
    IPv6 header with traffic class, flow label and hop limit set to ones, the
    UDP header with its checksum set to ones, the BTH with its reserved byte
    4 set to ones, then the rest up to the ICRC."""
    l3 = bytearray(frame[18 if frame[12:14] == b"\x81\x00" else 14:-4])
    l3[0] |= 0x0F
    l3[1:4] = b"\xff\xff\xff"
    l3[7] = 0xFF
    l3[46:48] = b"\xff\xff"
    l3[48 + 4] = 0xFF
    crc = zlib.crc32(b"\xff" * 8 + bytes(l3)) & 0xFFFFFFFF
    return struct.pack("<I", crc)


conf.verb = 0
ip = IPv6(src=a.src, dst=a.dst) if ":" in a.dst else IP(src=a.src, dst=a.dst, flags="DF")
frames = []
for i in range(a.good + a.bad):
    l2 = Ether(src=a.smac, dst=a.dmac)
    if a.vlan:
        l2 = l2 / Dot1Q(vlan=a.vlan)
    pkt = (l2 / ip / UDP(sport=0xC000 + i, dport=4791, chksum=0) /
           BTH(opcode=opcode("RC", "SEND_ONLY")[0], dqpn=0x11, psn=i, ackreq=1) /
           Raw(b"uroce-dpdk-test!" * 4))
    b = bytearray(raw(pkt))
    if ":" in a.dst:
        b[-4:] = icrc_ipv6(b)
    if i >= a.good:
        b[-10] ^= 0x01  # corrupt one payload byte: only the ICRC can tell
    frames.append(Ether(bytes(b)))
sendp(frames, iface=a.iface)
print(f"sent {a.good} good and {a.bad} corrupted RoCEv2 frames on {a.iface}")
