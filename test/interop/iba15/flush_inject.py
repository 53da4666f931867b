#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
"""Show which ICRC rxe 6.12 accepts on an RC FLUSH (see flush_icrc.py).

usage: flush_inject.py SNIFF SEND TRIGGER DONE
Watches SNIFF (AF_PACKET, root: the bridge port of uroced's veth, where
both directions pass) for the first RC FLUSH that 198.18.0.2 sends
(uroce's, with the standard ICRC). Once the file TRIGGER exists (uroce's
FLUSH has failed, so its QP no longer takes responses), sends that frame
again on SEND (uroced's end of the veth, so it crosses the bridge to the
VM) twice, from MAC 02:00:c6:12:00:99: with its own standard ICRC, then with the ICRC rxe computes,
and after each looks for rxe's answer at the same PSN (an empty RDMA READ
Response Only 0x10, or any ACK) for 3 s. Prints one line per try, creates
DONE, and exits 0 when rxe ignored the standard ICRC and answered the rxe one.
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flush_icrc  # noqa: E402

ETH_P_ALL = 0x0003
UROCE_IP = socket.inet_aton("198.18.0.2")
# Replays leave from this MAC (covered by neither the ICRC nor the IP
# checksum), so the test's capture can leave them out.
REPLAY_MAC = bytes.fromhex("0200c6120099")
RXE_IP = socket.inet_aton("198.18.0.1")


def roce(frame):
    """(src ip, BTH opcode, PSN, roce offset) of an IPv4 UDP 4791 frame."""
    if len(frame) < 14 + 20 + 8 + 12 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return None
    ihl = (frame[14] & 0x0F) * 4
    u = 14 + ihl
    if struct.unpack(">H", frame[u + 2:u + 4])[0] != 4791:
        return None
    r = u + 8
    psn = struct.unpack(">I", frame[r + 8:r + 12])[0] & 0xFFFFFF
    return frame[26:30], frame[r], psn, r


def answered(s, psn, secs):
    end = time.time() + secs
    while time.time() < end:
        s.settimeout(max(0.05, end - time.time()))
        try:
            fr = s.recv(2048)
        except socket.timeout:
            break
        x = roce(fr)
        if x and x[0] == RXE_IP and x[2] == psn and x[1] in (0x10, 0x11):
            return x[1]
    return None


def main():
    sniff, send, trigger, done = sys.argv[1:5]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((sniff, 0))
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    tx.bind((send, 0))
    flush = None
    rc = 1
    try:
        end = time.time() + 300
        while flush is None and time.time() < end:
            s.settimeout(1.0)
            try:
                fr = s.recv(2048)
            except socket.timeout:
                continue
            x = roce(fr)
            if x and x[0] == UROCE_IP and x[1] == flush_icrc.FLUSH:
                flush = fr
        if flush is None:
            print("flush_inject: no FLUSH from uroce seen", flush=True)
            return 1
        while not os.path.exists(trigger) and time.time() < end:
            time.sleep(0.1)
        carried, standard, rxe = flush_icrc.icrcs(flush)
        psn = roce(flush)[2]
        res = {}
        for name, icrc in (("standard", standard), ("rxe-6.12", rxe)):
            fr = flush[:6] + REPLAY_MAC + flush[12:-4] + struct.pack("<I", icrc)
            tx.send(fr)
            res[name] = answered(s, psn, 3.0)
            print("flush_inject: FLUSH PSN %d with the %s ICRC 0x%08x: %s" % (
                psn, name, icrc,
                "rxe answered, opcode 0x%02x" % res[name] if res[name] else "no answer from rxe"),
                flush=True)
        rc = 0 if res["standard"] is None and res["rxe-6.12"] is not None else 1
    finally:
        open(done, "w").close()
    return rc


if __name__ == "__main__":
    sys.exit(main())
