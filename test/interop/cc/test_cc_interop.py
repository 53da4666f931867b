#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
"""uroce's congestion control frames, decoded by tshark and by uroce-ctl.

gen_cc_frames (C, the transport engine on the simulated wire) writes a pcap
of what uroce sends for congestion control, and a manifest: an RC WRITE
(ECT(0)), the same frame marked CE as a switch marks it, the CNP the
receiving QP's notification point answers with (RoCEv2 A17.9.3), its ACK,
over IPv4 and IPv6, and the WRITE and the CNP as a VLAN port sends them.

  (a) tshark must decode every frame as InfiniBand over RoCEv2 with no
      malformed-packet or error expert info, with the manifest's DSCP, ECN,
      802.1p priority, opcode and destination QP, and the CNP's BTH byte 4
      at 0x40 (BECN). Wireshark 4.0 (Debian 12) has no name for opcode 0x81:
      it shows "Unknown (129)" and the BECN bit as a "Reserved" byte; the
      test checks exactly that and says so, and accepts a later Wireshark
      that names them.
  (b) uroce-ctl decode must find every frame valid with a good ICRC (the
      CE-marked one too: the ICRC does not cover ECN), name the CNP, show
      BECN on it, and give the manifest's DSCP and ECN.

Exits 77 (meson SKIP) if tshark is missing.
Usage: test_cc_interop.py --gen PATH/gen_cc_frames --ctl PATH/uroce-ctl [--workdir DIR]
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

TSHARK = shutil.which("tshark")
ARGS = None
FRAMES = None   # manifest rows
PCAP = None

FIELDS = ["frame.number", "frame.protocols", "vlan.priority", "ip.dsfield.dscp",
          "ip.dsfield.ecn", "ipv6.tclass.dscp", "ipv6.tclass.ecn", "infiniband.bth.opcode",
          "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.reserved",
          "_ws.malformed", "_ws.expert.message", "_ws.expert.severity"]
SEV_ERROR = 0x00800000
# UDP over IPv6 with checksum 0 is what every RoCEv2 sender does (RFC 6935).
ALLOWED_EXPERT = {"Illegal checksum value (0)"}


def num(text):
    return int(text, 16) if text.startswith("0x") else int(text)


def tshark_rows():
    out = subprocess.run([TSHARK, "-n", "-r", PCAP, "-T", "fields", "-E", "separator=\t",
                          "-E", "occurrence=a", "-E", "aggregator=|"] +
                         sum([["-e", f] for f in FIELDS], []),
                         capture_output=True, text=True, check=True).stdout
    return [dict(zip(FIELDS, line.split("\t"))) for line in out.splitlines()]


class CcInterop(unittest.TestCase):

    def test_tshark(self):
        rows = tshark_rows()
        self.assertEqual(len(rows), len(FRAMES))
        names = {}
        for m, t in zip(FRAMES, rows):
            what = "frame %s (%s)" % (m["index"], m["kind"])
            self.assertIn("infiniband", t["frame.protocols"].split(":"), what)
            self.assertEqual(t["_ws.malformed"], "", what)
            for msg, sev in zip(t["_ws.expert.message"].split("|"),
                                t["_ws.expert.severity"].split("|")):
                if msg and msg not in ALLOWED_EXPERT:
                    self.assertLess(num(sev), SEV_ERROR, "%s: %s" % (what, msg))
            v4 = m["family"] == "4"
            dscp = t["ip.dsfield.dscp"] if v4 else t["ipv6.tclass.dscp"]
            ecn = t["ip.dsfield.ecn"] if v4 else t["ipv6.tclass.ecn"]
            self.assertEqual(num(dscp), int(m["dscp"]), what)
            self.assertEqual(num(ecn), int(m["ecn"]), what)
            if m["pcp"] != "-1":
                self.assertEqual(num(t["vlan.priority"]), int(m["pcp"]), what)
            self.assertEqual(num(t["infiniband.bth.opcode"]), int(m["opcode"]), what)
            self.assertEqual(num(t["infiniband.bth.destqp"]), int(m["dqpn"]), what)
            if m["kind"].startswith("cnp"):
                self.assertEqual(num(t["infiniband.bth.psn"]), 0, what)
                if t["infiniband.reserved"]:
                    # Wireshark 4.0 does not know FECN/BECN: byte 4 is "Reserved".
                    self.assertEqual(int(t["infiniband.reserved"].split("|")[0], 16), 0x40,
                                     what)
        # What Wireshark calls the CNP opcode (and says about it).
        out = subprocess.run([TSHARK, "-n", "-r", PCAP, "-V", "-Y",
                              "infiniband.bth.opcode == 129"],
                             capture_output=True, text=True, check=True).stdout
        opnames = sorted({l.strip() for l in out.splitlines()
                          if l.strip().startswith("Opcode:")})
        self.assertTrue(opnames, "tshark shows no CNP")
        print("tshark %s calls the CNP opcode: %s" % (tshark_version(), "; ".join(opnames)))
        if tshark_version().startswith("4.0."):
            self.assertEqual(opnames, ["Opcode: Unknown (129)"],
                             "Wireshark 4.0 was expected to have no name for 0x81")

    def test_uroce_ctl_decode(self):
        out = subprocess.run([ARGS.ctl, "decode", PCAP], capture_output=True, text=True,
                             check=True).stdout
        objs = [json.loads(l) for l in out.splitlines()]
        self.assertEqual(len(objs), len(FRAMES))
        for m, o in zip(FRAMES, objs):
            what = "frame %s (%s): %s" % (m["index"], m["kind"], o)
            self.assertTrue(o["valid"], what)
            self.assertTrue(o["icrc_ok"], what)
            self.assertEqual(o["dscp"], int(m["dscp"]), what)
            self.assertEqual(o["ecn"], int(m["ecn"]), what)
            self.assertEqual(o["opcode"], int(m["opcode"]), what)
            self.assertEqual(o["dqpn"], int(m["dqpn"]), what)
            self.assertEqual(o["becn"], m["becn"] == "1", what)
            if m["kind"].startswith("cnp"):
                self.assertEqual(o["opcode_name"], "CNP", what)
                self.assertTrue(o["becn"], what)
                self.assertEqual(o["payload_len"], 0, what)

    def test_manifest_says_what_uroce_sends(self):
        """The markings themselves: ECT(0) data and ACKs, CE after the
        switch, CNPs DSCP 48 ECT(0) and (on a VLAN) priority 6, the port's
        DSCP 26 and priority 3 on data."""
        by = {(m["kind"], m["family"]): m for m in FRAMES}
        for fam in ("4", "6"):
            self.assertEqual((by[("data", fam)]["dscp"], by[("data", fam)]["ecn"]), ("0", "2"))
            self.assertEqual(by[("data_ce", fam)]["ecn"], "3")
            self.assertEqual(by[("ack", fam)]["ecn"], "2")
            self.assertEqual((by[("cnp", fam)]["dscp"], by[("cnp", fam)]["ecn"]), ("48", "2"))
            self.assertEqual(by[("cnp", fam)]["opcode"], "129")
            self.assertEqual(by[("cnp", fam)]["becn"], "1")
            self.assertEqual(by[("cnp", fam)]["dqpn"], by[("ack", fam)]["dqpn"])
        self.assertEqual((by[("cnp_vlan", "4")]["pcp"], by[("cnp_vlan", "4")]["dscp"]),
                         ("6", "48"))
        self.assertEqual((by[("data_vlan", "4")]["pcp"], by[("data_vlan", "4")]["dscp"]),
                         ("3", "26"))


def tshark_version():
    out = subprocess.run([TSHARK, "-v"], capture_output=True, text=True).stdout
    first = out.splitlines()[0] if out else ""
    for w in first.split():
        if w[:1].isdigit():
            return w
    return "?"


def main():
    global ARGS, FRAMES, PCAP
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen", required=True)
    ap.add_argument("--ctl", required=True)
    ap.add_argument("--workdir")
    ARGS, rest = ap.parse_known_args()
    if TSHARK is None:
        sys.stderr.write("\n*** SKIP test_cc_interop: tshark not found (Debian package "
                         "tshark) ***\n\n")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="uroce-cc-", dir=ARGS.workdir)
    PCAP = os.path.join(work, "cc.pcap")
    tsv = os.path.join(work, "cc.tsv")
    subprocess.run([ARGS.gen, PCAP, tsv], check=True)
    with open(tsv, newline="") as f:
        FRAMES = list(csv.DictReader(f, delimiter="\t"))
    try:
        unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
