#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
"""Recompute the ICRC of every RoCEv2 (IPv4) RC FLUSH frame of a classic pcap
two ways and say which one the frame carries:

  standard  IBA 17.3 / RoCEv2 A17.4.1: CRC-32 over 8 bytes of 0xFF (the LRH),
            the IPv4 header with TOS, TTL and checksum set to ones, the UDP
            header with its checksum set to ones, the BTH with its FECN/BECN/
            reserved byte set to ones, then the rest up to the ICRC;
  rxe-6.12  what Linux rxe computes for RC FLUSH: its opcode table gives
            RC_FLUSH no payload offset, so after the headers it runs the CRC
            over BTH+FETH+RETH (unmasked) once more as "payload".

usage: flush_icrc.py FILE.pcap
Prints one line per FLUSH frame; exit 0 when there is at least one and every
one carries the standard ICRC and not rxe's, else 1.
"""
import struct
import sys
import zlib

FLUSH = 0x1C
BTH, FETH, RETH = 12, 4, 16


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + "I", data[off + 8:off + 12])[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def icrcs(frame):
    """(carried, standard, rxe) for an Ethernet/IPv4/UDP 4791 frame, or None."""
    if len(frame) < 14 + 20 or frame[12:14] != b"\x08\x00":
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0x0F) * 4
    if ip[9] != 17:
        return None
    tot = struct.unpack(">H", ip[2:4])[0]
    ip = ip[:tot]
    udp = ip[ihl:ihl + 8]
    if struct.unpack(">H", udp[2:4])[0] != 4791:
        return None
    roce = ip[ihl + 8:]
    if roce[0] != FLUSH or len(roce) < BTH + FETH + RETH + 4:
        return None
    iph = bytearray(ip[:ihl])
    iph[1] = 0xFF                  # TOS (DSCP, ECN)
    iph[8] = 0xFF                  # TTL
    iph[10:12] = b"\xff\xff"       # header checksum
    udph = bytearray(udp)
    udph[6:8] = b"\xff\xff"        # UDP checksum
    bth = bytearray(roce[:BTH])
    bth[4] = 0xFF                  # FECN, BECN, reserved
    body = roce[BTH:-4]            # FETH, RETH (a FLUSH has no payload)
    head = b"\xff" * 8 + bytes(iph) + bytes(udph) + bytes(bth) + body
    carried = struct.unpack("<I", roce[-4:])[0]
    standard = zlib.crc32(head)
    rxe = zlib.crc32(head + roce[:BTH + FETH + RETH])
    return carried, standard, rxe


def main():
    n = bad = 0
    for i, fr in enumerate(frames(sys.argv[1]), 1):
        r = icrcs(fr)
        if r is None:
            continue
        n += 1
        carried, standard, rxe = r
        ok = carried == standard and carried != rxe
        bad += not ok
        print("frame %d: ICRC 0x%08x, standard 0x%08x (%s), rxe-6.12 0x%08x (%s)" % (
            i, carried, standard, "matches" if carried == standard else "differs",
            rxe, "matches" if carried == rxe else "differs"))
    return 0 if n and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
