#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
"""uroce's packets checked by implementations uroce did not write.

gen_frames (a C program linked with lib/wire) writes a pcap of every opcode
in uroce_opcode_table at several payload lengths over IPv4, IPv6 and
802.1Q-tagged IPv4, plus a manifest of the fields it put in each frame. Then:

  (a) tshark (Wireshark's InfiniBand dissector, on UDP 4791 by default, no
      "decode as") must decode every frame as InfiniBand with the manifest's
      opcode, PSN, QP and other header fields, the ICRC uroce wrote, and no
      malformed-packet or other error expert info;
  (b) scapy must compute the same ICRC: for IPv4 with scapy.contrib.roce's
      own BTH.compute_icrc(); for IPv6 (which scapy 2.5 does not support)
      by masking scapy's dissected IPv6/UDP/BTH fields and running
      zlib.crc32 over them;
  (c) scapy's BTH (and AETH) dissection must give the manifest's fields,
      and the bytes after the BTH must be the extension headers packed here
      from the manifest with struct, followed by payload and pad.

Run with /usr/bin/python3 (Debian's python3-scapy). If tshark or scapy is
missing the test prints why and exits 77, which meson counts as skipped.

Usage: test_wire_interop.py --gen PATH/gen_frames [--workdir DIR] [unittest args]
"""

import argparse
import csv
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib


def skip(why):
    sys.stderr.write("\n*** SKIP test_wire_interop: %s ***\n\n" % why)
    sys.exit(77)


try:
    from scapy.all import Ether, Dot1Q, IP, IPv6, UDP, raw, rdpcap, conf  # noqa: E402
    from scapy.contrib.roce import BTH, AETH  # noqa: E402
except ImportError as e:
    skip("scapy is not importable by %s (%s); install python3-scapy and run with "
         "/usr/bin/python3" % (sys.executable, e))

TSHARK = shutil.which("tshark")
if TSHARK is None:
    skip("tshark not found on PATH (Debian package tshark)")

conf.verb = 0

# Payload heuristic sub-dissectors of the InfiniBand dissector. They guess an
# upper protocol (RPC-over-RDMA, SMB Direct, EoIB, ...) from the first bytes
# of the payload; on the synthetic payload here some guess wrong and then
# report the payload as malformed. They are not what is tested, so they are
# off: the BTH, extension headers and ICRC are still dissected by the
# InfiniBand dissector itself, and the payload shows up as "data".
PAYLOAD_HEURISTICS = [
    "rpcrdma_infiniband", "smb_direct_infiniband", "smcr_infiniband", "nvme_rdma",
    "lnet_ib", "iser_infiniband", "eth_over_ib", "mellanox_eoib", "sdp_infiniband",
    "fc_infiniband",
]

# The expert infos that may appear, and why:
#   UDP over IPv6 with a zero checksum: RoCEv2 senders (uroce, rxe, NICs) put
#   0 in the UDP checksum; Wireshark flags that for IPv6 (RFC 8200 wants a
#   checksum, RFC 6935/6936 allow 0 for tunnels). Not an InfiniBand problem.
ALLOWED_EXPERT = {
    "ipv6": {"Illegal checksum value (0)"},
}

# IBA table 35 (plus the RoCEv2 CNP and IBA 1.5's FLUSH and ATOMIC WRITE):
# the opcodes a complete table holds. XRC (IBA 1.2, prefix 0xA0) has every
# RC operation.
RC_OPCODES = set(range(0x00, 0x15)) | {0x16, 0x17, 0x1C, 0x1D}
XRC_OPCODES = {0xA0 | op for op in RC_OPCODES}
EXPECTED_OPCODES = (RC_OPCODES | set(range(0x20, 0x2C)) | {0x64, 0x65, 0x81} | XRC_OPCODES)
# Opcodes that Debian 12's tshark (4.0) does not decode: IBA 1.5 A19's, and
# XRC over RoCEv2 (it names the XRC opcode, then shows an "Unknown" header
# sequence with the ICRC inside). Only the BTH is compared with tshark;
# scapy's byte-level check covers the rest.
TSHARK_UNKNOWN = {0x1C, 0x1D} | XRC_OPCODES

HDR_DETH, HDR_RETH, HDR_AETH, HDR_ATMETH = 1 << 0, 1 << 1, 1 << 2, 1 << 3
HDR_ATMACK, HDR_IMMDT, HDR_IETH, HDR_CNPRSVD = 1 << 4, 1 << 5, 1 << 6, 1 << 7
F_PAYLOAD, F_FULL_PMTU = 1 << 8, 1 << 9
HDR_FETH, F_ATOMIC_WRITE, HDR_XRCETH = 1 << 20, 1 << 22, 1 << 23

TSHARK_FIELDS = [
    "frame.number", "frame.protocols", "infiniband.bth.opcode", "infiniband.bth.se",
    "infiniband.bth.m", "infiniband.bth.padcnt", "infiniband.bth.tver",
    "infiniband.bth.p_key", "infiniband.bth.destqp", "infiniband.bth.a",
    "infiniband.bth.psn", "infiniband.reth.va", "infiniband.reth.r_key",
    "infiniband.reth.dmalen", "infiniband.aeth.syndrome", "infiniband.aeth.msn",
    "infiniband.deth.q_key", "infiniband.deth.srcqp", "infiniband.atomiceth.swapdt",
    "infiniband.atomiceth.cmpdt", "infiniband.atomicacketh.origremdt", "infiniband.immdt",
    "infiniband.ieth", "infiniband.invariant.crc", "data.len", "_ws.malformed",
    "_ws.expert.message", "_ws.expert.severity",
]
SEV_WARN = 0x00600000   # Wireshark PI_WARN; PI_ERROR is 0x00800000


def num(text):
    """A tshark field value: hex with 0x, else decimal (tshark prints 64-bit
    fields in decimal and most others in hex)."""
    return int(text, 16) if text.startswith("0x") else int(text)


def expected_ext(row):
    """Extension header bytes, in IBA order, packed here from the manifest."""
    m = row["mask"]
    b = b""
    if m & HDR_DETH:
        b += struct.pack("!II", row["qkey"], row["src_qp"] & 0xFFFFFF)
    if m & HDR_XRCETH:
        b += struct.pack("!I", row["xrc_srqn"] & 0xFFFFFF)
    if m & HDR_FETH:
        b += struct.pack("!I", row["feth"])
    if m & HDR_RETH:
        b += struct.pack("!QII", row["va"], row["rkey"], row["dma_len"])
    if m & HDR_AETH:
        b += struct.pack("!I", (row["syndrome"] << 24) | row["msn"])
    if m & HDR_ATMETH:
        b += struct.pack("!QIQQ", row["va"], row["rkey"], row["swap_add"], row["compare"])
    if m & HDR_ATMACK:
        b += struct.pack("!Q", row["orig"])
    if m & HDR_IMMDT:
        b += struct.pack("!I", row["imm"])
    if m & HDR_IETH:
        b += struct.pack("!I", row["inv_rkey"])
    if m & HDR_CNPRSVD:
        b += b"\0" * 16
    return b


def scapy_icrc(frame):
    """ICRC of a frame as scapy computes it (see the module docstring)."""
    p = Ether(frame)
    if IP in p:
        # Drop the ICRC so that BTH.post_build() computes it again.
        del p[BTH].icrc
        b = raw(p)
        ip_end = len(b) - len(raw(p[IP])) + p[IP].len
        return struct.unpack("<I", b[ip_end - 4:ip_end])[0]
    ps = p[IPv6].copy()
    ps.tc = 0xFF
    ps.fl = 0xFFFFF
    ps.hlim = 0xFF
    ps[UDP].chksum = 0xFFFF
    ps[BTH].fecn = 1
    ps[BTH].becn = 1
    ps[BTH].resv6 = 0x3F
    return zlib.crc32(b"\xff" * 8 + raw(ps)[:-4]) & 0xFFFFFFFF


class WireInterop(unittest.TestCase):
    gen = None
    workdir = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="uroce-wire-interop-", dir=cls.workdir)
        cls.pcap = os.path.join(cls.tmp, "uroce-frames.pcap")
        cls.tsv = os.path.join(cls.tmp, "uroce-frames.tsv")
        subprocess.run([cls.gen, cls.pcap, cls.tsv], check=True, stdout=subprocess.DEVNULL)
        with open(cls.tsv, newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        for r in rows:
            for k in list(r):
                if k not in ("name", "encap"):
                    r[k] = int(r[k])
        cls.rows = rows
        cls.frames = [bytes(p) for p in rdpcap(cls.pcap)]
        cls.tshark = cls.run_tshark()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def run_tshark(cls):
        heur = list(PAYLOAD_HEURISTICS)
        while True:
            cmd = [TSHARK, "-n", "-r", cls.pcap, "-T", "fields", "-E", "separator=\t",
                   "-E", "occurrence=a", "-E", "aggregator=|"]
            for h in heur:
                cmd += ["--disable-heuristic", h]
            for f in TSHARK_FIELDS:
                cmd += ["-e", f]
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode == 0:
                break
            # An older or newer tshark may not know one of the names: drop it.
            bad = [h for h in heur if ("protocol %s," % h) in res.stderr]
            if not bad:
                raise RuntimeError("tshark failed: %s" % res.stderr)
            heur = [h for h in heur if h not in bad]
        out = []
        for line in res.stdout.splitlines():
            vals = line.split("\t")
            vals += [""] * (len(TSHARK_FIELDS) - len(vals))
            out.append(dict(zip(TSHARK_FIELDS, vals)))
        return out

    # -- coverage ---------------------------------------------------------

    def test_coverage(self):
        """Expect: every opcode of IBA table 35 and the CNP, in all three
        encapsulations, and every payload length the opcode allows."""
        self.assertEqual(len(self.frames), len(self.rows))
        self.assertEqual({r["opcode"] for r in self.rows}, EXPECTED_OPCODES)
        for enc in ("ipv4", "ipv6", "ipv4-vlan"):
            self.assertEqual({r["opcode"] for r in self.rows if r["encap"] == enc},
                             EXPECTED_OPCODES, enc)
        for op in EXPECTED_OPCODES:
            lens = {r["paylen"] for r in self.rows if r["opcode"] == op}
            mask = next(r["mask"] for r in self.rows if r["opcode"] == op)
            if not mask & F_PAYLOAD:
                self.assertEqual(lens, {0}, hex(op))
            elif mask & F_ATOMIC_WRITE:
                self.assertEqual(lens, {8}, hex(op))
            elif mask & F_FULL_PMTU:
                self.assertEqual(lens, {256, 1024, 4096}, hex(op))
            else:
                self.assertEqual(lens, {0, 1, 3, 4, 255, 256, 1024, 4096}, hex(op))

    # -- (a) tshark -------------------------------------------------------

    def test_tshark_decodes_infiniband(self):
        """Expect: tshark decodes UDP port 4791 as InfiniBand with no
        "decode as" option, for every frame, with the manifest's fields."""
        self.assertEqual(len(self.tshark), len(self.rows))
        for t, r in zip(self.tshark, self.rows):
            what = "frame %d (%s, %s, %d B)" % (r["frame"], r["name"], r["encap"], r["paylen"])
            with self.subTest(what):
                protos = t["frame.protocols"].split(":")
                self.assertIn("infiniband", protos)
                self.assertEqual(protos[protos.index("infiniband") - 1], "udp")
                self.assertEqual(num(t["infiniband.bth.opcode"]), r["opcode"])
                self.assertEqual(num(t["infiniband.bth.psn"]), r["psn"])
                self.assertEqual(num(t["infiniband.bth.destqp"]), r["dqpn"])
                self.assertEqual(num(t["infiniband.bth.se"]), r["se"])
                self.assertEqual(num(t["infiniband.bth.m"]), r["migreq"])
                self.assertEqual(num(t["infiniband.bth.a"]), r["ackreq"])
                self.assertEqual(num(t["infiniband.bth.padcnt"]), r["padcnt"])
                self.assertEqual(num(t["infiniband.bth.tver"]), 0)
                self.assertEqual(num(t["infiniband.bth.p_key"]), r["pkey"])
                if r["opcode"] in TSHARK_UNKNOWN:
                    continue
                m = r["mask"]
                if m & HDR_RETH:
                    self.assertEqual(num(t["infiniband.reth.va"]), r["va"])
                    self.assertEqual(num(t["infiniband.reth.r_key"]), r["rkey"])
                    self.assertEqual(num(t["infiniband.reth.dmalen"]), r["dma_len"])
                if m & HDR_AETH:
                    self.assertEqual(num(t["infiniband.aeth.syndrome"]), r["syndrome"])
                    self.assertEqual(num(t["infiniband.aeth.msn"]), r["msn"])
                if m & HDR_DETH:
                    self.assertEqual(num(t["infiniband.deth.q_key"]), r["qkey"])
                    self.assertEqual(num(t["infiniband.deth.srcqp"]), r["src_qp"])
                if m & HDR_ATMETH:
                    self.assertEqual(num(t["infiniband.atomiceth.swapdt"]),
                                     r["swap_add"])
                    self.assertEqual(num(t["infiniband.atomiceth.cmpdt"]),
                                     r["compare"])
                if m & HDR_ATMACK:
                    self.assertEqual(num(t["infiniband.atomicacketh.origremdt"]),
                                     r["orig"])
                # ImmDt and IETH are byte fields (hex without 0x), shown twice.
                if m & HDR_IMMDT:
                    self.assertEqual(int(t["infiniband.immdt"].split("|")[0], 16), r["imm"])
                if m & HDR_IETH:
                    self.assertEqual(int(t["infiniband.ieth"].split("|")[0], 16),
                                     r["inv_rkey"])
                if r["opcode"] != 0x81:
                    # Wireshark shows the ICRC as the 4 wire bytes read big-endian;
                    # it does not split it off the CNP it does not know.
                    shown = num(t["infiniband.invariant.crc"])
                    wire = struct.unpack("<I", struct.pack(">I", shown))[0]
                    self.assertEqual(wire, r["icrc"])
                if r["paylen"] > 0:
                    self.assertEqual(num(t["data.len"]), r["paylen"] + r["padcnt"])
                else:
                    self.assertEqual(t["data.len"], "")

    def test_tshark_no_malformed_no_errors(self):
        """Expect: no frame is malformed, and no expert info of warning or
        error severity other than the ones listed in ALLOWED_EXPERT."""
        seen_allowed = set()
        for t, r in zip(self.tshark, self.rows):
            what = "frame %d (%s, %s, %d B)" % (r["frame"], r["name"], r["encap"], r["paylen"])
            self.assertEqual(t["_ws.malformed"], "", what)
            msgs = t["_ws.expert.message"].split("|") if t["_ws.expert.message"] else []
            sevs = t["_ws.expert.severity"].split("|") if t["_ws.expert.severity"] else []
            self.assertEqual(len(msgs), len(sevs), what)
            for msg, sev in zip(msgs, sevs):
                if int(sev) < SEV_WARN:
                    continue
                self.assertIn(msg, ALLOWED_EXPERT.get(r["encap"], set()),
                              "%s: expert info %r" % (what, msg))
                seen_allowed.add(msg)
        if seen_allowed:
            sys.stderr.write("\nnote: tolerated tshark expert infos: %s\n" %
                             ", ".join(sorted(seen_allowed)))

    # -- (b) scapy ICRC ---------------------------------------------------

    def test_scapy_icrc(self):
        """Expect: scapy computes the ICRC uroce put on the wire, for every frame."""
        for f, r in zip(self.frames, self.rows):
            with self.subTest("frame %d (%s, %s)" % (r["frame"], r["name"], r["encap"])):
                self.assertEqual(struct.unpack("<I", f[-4:])[0], r["icrc"])
                self.assertEqual(scapy_icrc(f), r["icrc"])

    # -- (c) scapy fields -------------------------------------------------

    def test_scapy_fields(self):
        """Expect: scapy's Ethernet/IP/UDP/BTH dissection gives the manifest's
        fields; the bytes after the BTH are the extension headers packed from
        the manifest, the payload, and a zero pad."""
        for f, r in zip(self.frames, self.rows):
            what = "frame %d (%s, %s, %d B)" % (r["frame"], r["name"], r["encap"], r["paylen"])
            with self.subTest(what):
                p = Ether(f)
                if r["encap"] == "ipv4-vlan":
                    self.assertIn(Dot1Q, p)
                else:
                    self.assertNotIn(Dot1Q, p)
                udp = p[UDP]
                self.assertEqual(udp.dport, 4791)
                self.assertGreaterEqual(udp.sport, 0xC000)
                self.assertEqual(udp.chksum, 0)
                if r["encap"] == "ipv6":
                    ip = p[IPv6]
                    self.assertEqual(ip.nh, 17)
                    self.assertEqual(ip.plen, udp.len)
                else:
                    ip = p[IP]
                    self.assertEqual(ip.ihl, 5)
                    self.assertEqual(ip.proto, 17)
                    self.assertIn("DF", str(ip.flags))
                    self.assertEqual(ip.len, 20 + udp.len)
                    # The IPv4 header checksum, recomputed by scapy.
                    c = ip.copy()
                    del c.chksum
                    self.assertEqual(IP(raw(c)).chksum, ip.chksum)
                self.assertEqual(len(raw(udp)), udp.len)
                b = p[BTH]
                self.assertEqual(b.opcode, r["opcode"])
                self.assertEqual(b.solicited, r["se"])
                self.assertEqual(b.migreq, r["migreq"])
                self.assertEqual(b.padcount, r["padcnt"])
                self.assertEqual(b.version, 0)
                self.assertEqual(b.pkey, r["pkey"])
                self.assertEqual(b.fecn, r["fecn"])
                self.assertEqual(b.becn, r["becn"])
                self.assertEqual(b.resv6, 0)
                self.assertEqual(b.dqpn, r["dqpn"])
                self.assertEqual(b.ackreq, r["ackreq"])
                self.assertEqual(b.resv7, 0)
                self.assertEqual(b.psn, r["psn"])
                if AETH in p:
                    self.assertEqual(p[AETH].syndrome, r["syndrome"])
                    self.assertEqual(p[AETH].msn, r["msn"])
                # BTH .. ICRC as UDP payload; the part after the 12-byte BTH.
                ib = raw(udp)[8:]
                self.assertEqual(len(ib), 12 + len(expected_ext(r)) + r["paylen"] +
                                 r["padcnt"] + 4)
                after = ib[12:-4]
                ext = expected_ext(r)
                self.assertEqual(after[:len(ext)], ext, "extension headers")
                payload = after[len(ext):len(ext) + r["paylen"]]
                self.assertEqual(payload, bytes(((j * 7 + r["frame"] - 1) & 0xFF)
                                                for j in range(r["paylen"])))
                self.assertEqual(after[len(ext) + r["paylen"]:], b"\0" * r["padcnt"])


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--workdir")
    args, rest = ap.parse_known_args()
    WireInterop.gen = os.path.abspath(args.gen)
    WireInterop.workdir = args.workdir
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
