#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
"""`uroce-ctl template` frames checked by implementations uroce did not write.

Sink descriptions are written here (the JSON `uroce-perf sink` prints, no
daemon needed) for IPv4 and IPv6, with and without an 802.1Q tag, UC and UD
QPs; `uroce-ctl template` turns each into a pcap, which must:

  (a) decode in tshark as InfiniBand over UDP 4791 (no "decode as"), with no
      malformed frame and no expert info of warning severity or worse, with
      the opcode, destination QP, PSN, RETH, DETH and ImmDt expected;
  (b) decode in `uroce-ctl decode` as valid frames, every ICRC good;
  (c) carry the ICRC scapy computes (IPv4: scapy.contrib.roce; IPv6: the
      masked CRC-32 of RoCEv2 annex A17.4.1 over scapy's fields);
  (d) follow doc/loadgen.md, checked with a Python implementation of its
      text: payloads in the pattern uroce-lg-1 (WRITE: by window offset;
      SEND: tag, then the stream of (QPN, tag, length)), immediate = window
      offset, UC PSNs from the QP's expected PSN up (wrapping at 2^24), UDP
      source ports in 0xC000-0xFFFF, one per QP and --flows per QP;
  (e) as a pktgen command file (--pktgen), turn pktgen's single-mode packet
      into the first frame, with pktgen 23.03's rnd mask semantics
      (pktgen_set_random_bitfield / pktgen_rnd_bits_apply) emulated here.
And the command refuses bad input with a clear message and exit status 2.

Run with /usr/bin/python3 (Debian's python3-scapy). Without tshark or scapy
the test prints why and exits 77 (meson: skipped).

Usage: test_template.py UROCE_CTL [WORKDIR] [unittest args]
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib


def skip(why):
    sys.stderr.write("\n*** SKIP test_template: %s ***\n\n" % why)
    sys.exit(77)


try:
    from scapy.all import Ether, Dot1Q, IP, IPv6, UDP, raw, rdpcap, conf  # noqa: E402
    from scapy.contrib.roce import BTH  # noqa: E402
except ImportError as e:
    skip("scapy is not importable by %s (%s); install python3-scapy and run with "
         "/usr/bin/python3" % (sys.executable, e))

TSHARK = shutil.which("tshark")
if TSHARK is None:
    skip("tshark not found on PATH (Debian package tshark)")
conf.verb = 0

CTL = None
WORKDIR = None

# ---- doc/loadgen.md, "The payload pattern", in Python -------------------

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
KIND_WRITE = 0x55524F43454C4757  # "UROCELGW"
KIND_SEND = 0x55524F43454C4753   # "UROCELGS"


def splitmix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def stream(seed, start, n):
    out = bytearray(n)
    for j in range(n):
        k = start + j
        w = splitmix((seed + (k // 8 + 1) * GOLDEN) & M64)
        out[j] = ((w >> (8 * (k % 8))) & 0xFF) | 1
    return bytes(out)


def write_payload(qpn, off, n):
    return stream(splitmix(KIND_WRITE ^ qpn), off, n)


def send_payload(qpn, tag, n):
    if n < 4:
        tag = 0
    seed = splitmix(splitmix(KIND_SEND ^ qpn) ^ ((n << 32) | tag))
    if n < 4:
        return stream(seed, 0, n)
    return struct.pack("!I", tag) + stream(seed, 4, n - 4)


# ---- fixtures -----------------------------------------------------------

UC_WRITE, UC_WRITE_IMM, UC_SEND, UD_SEND = 0x2A, 0x2B, 0x24, 0x64


def desc(v6=False, vlan=None, size=64, path_mtu=1024, ud_max=1024, qps=None):
    gid = "2001:2::3:1" if v6 else "::ffff:198.18.3.1"
    peer = "2001:2::3:fe" if v6 else "::ffff:198.18.3.254"
    if qps is None:
        qps = [
            {"type": "UC", "qpn": 17, "peer_qpn": 256, "psn": 0xFFFFFE, "rkey": 0x1A2B3C01,
             "va": 0x7F12_3456_0000, "len": 16 * size if size else 64, "recv_slots": 64,
             "ops": ["write", "write_imm", "send"]},
            {"type": "UC", "qpn": 18, "peer_qpn": 257, "psn": 5, "rkey": 0x1A2B3C01,
             "va": 0x7F12_3457_0000, "len": 16 * size if size else 64, "recv_slots": 64,
             "ops": ["write", "write_imm", "send"]},
            {"type": "UD", "qpn": 19, "peer_qpn": 258, "qkey": 0x11111111, "recv_slots": 64,
             "ops": ["send"]},
            {"type": "UD", "qpn": 0xABCDEF, "peer_qpn": 259, "qkey": 0x80010000,
             "recv_slots": 64, "ops": ["send"]},
        ]
    return {"uroce_sink": 1, "pattern": "uroce-lg-1", "socket": "/tmp/x.sock", "port": 1,
            "gid_index": 2 if v6 else 1, "mac": "02:00:c6:12:03:01", "mac_source": "gid0",
            "vlan": vlan, "family": "ipv6" if v6 else "ipv4", "gid": gid,
            "ip": gid.replace("::ffff:", ""), "peer_gid": peer,
            "peer_ip": peer.replace("::ffff:", ""), "gids": [],
            "path_mtu": path_mtu, "ud_max_payload": ud_max, "size": size, "qps": qps}


def num(text):
    return int(text, 16) if text.startswith("0x") else int(text)


TSHARK_FIELDS = [
    "frame.protocols", "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
    "infiniband.bth.padcnt", "infiniband.reth.va", "infiniband.reth.r_key",
    "infiniband.reth.dmalen", "infiniband.deth.q_key", "infiniband.deth.srcqp",
    "infiniband.immdt", "_ws.malformed", "_ws.expert.message", "_ws.expert.severity",
]
# The InfiniBand dissector's payload heuristics guess upper protocols from
# the first payload bytes and may call random bytes malformed: off, as in
# test/interop/wire/test_wire_interop.py.
PAYLOAD_HEURISTICS = [
    "rpcrdma_infiniband", "smb_direct_infiniband", "smcr_infiniband", "nvme_rdma",
    "lnet_ib", "iser_infiniband", "eth_over_ib", "mellanox_eoib", "sdp_infiniband",
    "fc_infiniband",
]
# UDP over IPv6 with a zero checksum (RoCEv2 senders send 0): Wireshark warns.
ALLOWED_EXPERT = {"Illegal checksum value (0)"}
SEV_WARN = 0x00600000


def run_tshark(pcap):
    heur = list(PAYLOAD_HEURISTICS)
    while True:
        cmd = [TSHARK, "-n", "-r", pcap, "-T", "fields", "-E", "separator=\t",
               "-E", "occurrence=a", "-E", "aggregator=|"]
        for h in heur:
            cmd += ["--disable-heuristic", h]
        for f in TSHARK_FIELDS:
            cmd += ["-e", f]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode == 0:
            break
        bad = [h for h in heur if ("protocol %s," % h) in res.stderr]
        if not bad:
            raise RuntimeError("tshark failed: %s" % res.stderr)
        heur = [h for h in heur if h not in bad]
    rows = []
    for line in res.stdout.splitlines():
        vals = line.split("\t")
        vals += [""] * (len(TSHARK_FIELDS) - len(vals))
        rows.append(dict(zip(TSHARK_FIELDS, vals)))
    return rows


def icrc_of(frame):
    """The RoCEv2 ICRC as scapy computes it (see test_wire_interop.py)."""
    p = Ether(frame)
    if IP in p:
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


class Template(unittest.TestCase):
    """Each case: a description, options, and what every frame must be."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="uroce-template-", dir=WORKDIR)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def make(self, d, *opts, expect_rc=0):
        jpath = os.path.join(self.tmp, "sink.json")
        with open(jpath, "w") as fh:
            fh.write(json.dumps(d) + "\n")
            # a sink's output goes on with rate records: they are ignored
            fh.write('{"uroce_rate":1,"role":"sink"}\n')
        out = os.path.join(self.tmp, "t.pcap")
        res = subprocess.run([CTL, "template", *opts, jpath, out], capture_output=True,
                             text=True)
        self.assertEqual(res.returncode, expect_rc, res.stderr)
        return out, res.stderr

    def check(self, d, opts, msgs, uc_op, size, flows=1, vlan=None, pcp=0):
        pcap, _ = self.make(d, *opts)
        frames = [bytes(p) for p in rdpcap(pcap)]
        qps = d["qps"]
        self.assertEqual(len(frames), msgs * len(qps))
        ts = run_tshark(pcap)
        self.assertEqual(len(ts), len(frames))
        dec = subprocess.run([CTL, "decode", "--strict", pcap], capture_output=True, text=True)
        self.assertEqual(dec.returncode, 0, dec.stderr)
        decoded = [json.loads(line) for line in dec.stdout.splitlines()]
        sports = {}
        for n, (f, t, u) in enumerate(zip(frames, ts, decoded)):
            i, q = divmod(n, len(qps))
            q = qps[q]
            what = "frame %d (QP %d, message %d)" % (n, q["qpn"], i)
            with self.subTest(what):
                uc = q["type"] == "UC"
                op = {"write": UC_WRITE, "write-imm": UC_WRITE_IMM,
                      "send": UC_SEND}[uc_op] if uc else UD_SEND
                # (b) uroce-ctl decode: valid, ICRC good
                self.assertTrue(u["valid"], u)
                self.assertTrue(u["icrc_ok"])
                self.assertEqual(u["opcode"], op)
                # (a) tshark
                protos = t["frame.protocols"].split(":")
                self.assertIn("infiniband", protos)
                self.assertEqual(protos[protos.index("infiniband") - 1], "udp")
                self.assertEqual(t["_ws.malformed"], "")
                msgs_ = t["_ws.expert.message"].split("|") if t["_ws.expert.message"] else []
                sevs = t["_ws.expert.severity"].split("|") if t["_ws.expert.severity"] else []
                for m, s in zip(msgs_, sevs):
                    if int(s) >= SEV_WARN:
                        self.assertIn(m, ALLOWED_EXPERT)
                self.assertEqual(num(t["infiniband.bth.opcode"]), op)
                self.assertEqual(num(t["infiniband.bth.destqp"]), q["qpn"])
                psn = (q["psn"] + i) & 0xFFFFFF if uc else i
                self.assertEqual(num(t["infiniband.bth.psn"]), psn)
                self.assertEqual(num(t["infiniband.bth.padcnt"]), (4 - size % 4) % 4)
                # (c) scapy's ICRC
                self.assertEqual(struct.unpack("<I", f[-4:])[0], icrc_of(f))
                # encapsulation
                p = Ether(f)
                self.assertEqual(p.dst, d["mac"])
                if vlan:
                    self.assertEqual(p[Dot1Q].vlan, vlan)
                    self.assertEqual(p[Dot1Q].prio, pcp)
                else:
                    self.assertNotIn(Dot1Q, p)
                ipl = p[IPv6] if "ipv6" == d["family"] else p[IP]
                self.assertEqual(ipl.dst, d["ip"])
                self.assertEqual(ipl.src, d["peer_ip"])
                udp = p[UDP]
                self.assertEqual(udp.dport, 4791)
                self.assertGreaterEqual(udp.sport, 0xC000)
                self.assertEqual(udp.chksum, 0)
                sports.setdefault(q["qpn"], []).append(udp.sport)
                # (d) headers and payload, per doc/loadgen.md
                ib = raw(udp)[8:]
                body = ib[12:len(ib) - 4]
                if op in (UC_WRITE, UC_WRITE_IMM):
                    slots = q["len"] // size
                    off = (i % slots) * size
                    self.assertEqual(num(t["infiniband.reth.va"]), q["va"] + off)
                    self.assertEqual(num(t["infiniband.reth.r_key"]), q["rkey"])
                    self.assertEqual(num(t["infiniband.reth.dmalen"]), size)
                    ext = 16
                    if op == UC_WRITE_IMM:
                        self.assertEqual(int(t["infiniband.immdt"].split("|")[0], 16), off)
                        ext = 20
                    self.assertEqual(body[ext:ext + size], write_payload(q["qpn"], off, size))
                elif op == UD_SEND:
                    self.assertEqual(num(t["infiniband.deth.q_key"]), q["qkey"])
                    self.assertEqual(num(t["infiniband.deth.srcqp"]), q["peer_qpn"])
                    self.assertEqual(body[8:8 + size], send_payload(q["qpn"], i, size))
                else:
                    self.assertEqual(body[:size], send_payload(q["qpn"], i, size))
                self.assertEqual(body[len(body) - (4 - size % 4) % 4:] if size % 4 else b"",
                                 b"\0" * ((4 - size % 4) % 4))
        # UDP source ports: flows distinct ports per QP, cycling with the message index.
        for qpn, ps in sports.items():
            self.assertEqual(len(set(ps)), min(flows, msgs), "QP %d: %s" % (qpn, ps))
            self.assertEqual(ps, [ps[k % flows] for k in range(len(ps))])
        if flows == 1:
            self.assertEqual(len({ps[0] for ps in sports.values()}), len(qps),
                             "each QP its own flow")

    def test_ipv4_uc_write_ud_send(self):
        """Expect: UC RDMA WRITE Only and UD SEND Only over IPv4, PSNs wrapping."""
        self.check(desc(), ["-n", "8"], 8, "write", 64)

    def test_ipv4_vlan_write_imm_1k_flows(self):
        """Expect: WRITE with immediate (imm = offset), 1 KiB, tagged, 4 flows per QP."""
        self.check(desc(vlan=100, size=1024), ["-n", "6", "--op", "write-imm", "--flows", "4",
                                                "--pcp", "3"], 6, "write-imm", 1024,
                   flows=4, vlan=100, pcp=3)

    def test_ipv6_uc_send_odd_sizes(self):
        """Expect: UC and UD SEND Only over IPv6 with pad bytes (sizes 1, 3, 5, 0)."""
        for size in (1, 3, 5, 0):
            with self.subTest(size=size):
                self.check(desc(v6=True, size=size), ["-n", "4", "--op", "send"], 4, "send",
                           size)

    def test_ipv6_vlan_ud_4k(self):
        """Expect: UD SEND Only of 4096 bytes over tagged IPv6."""
        d = desc(v6=True, vlan=7, size=4096, path_mtu=4096, ud_max=4096)
        d["qps"] = [q for q in d["qps"] if q["type"] == "UD"]
        self.check(d, ["-n", "3"], 3, "send", 4096, vlan=7)

    def test_selection(self):
        """Expect: --ud, --uc and --qpn pick QPs; --size overrides the description."""
        d = desc()
        pcap, _ = self.make(d, "--ud", "-n", "2", "-s", "32")
        frames = rdpcap(pcap)
        self.assertEqual([p[BTH].dqpn for p in frames], [19, 0xABCDEF] * 2)
        self.assertTrue(all(len(p[UDP]) == 8 + 12 + 8 + 32 + 4 for p in frames))
        pcap, _ = self.make(d, "--qpn", "18,19", "-n", "1")
        self.assertEqual([p[BTH].dqpn for p in rdpcap(pcap)], [18, 19])

    def test_deterministic(self):
        """Expect: the same description and options give the same bytes."""
        a, _ = self.make(desc(), "-n", "5", "--flows", "2")
        with open(a, "rb") as fh:
            first = fh.read()
        b, _ = self.make(desc(), "-n", "5", "--flows", "2")
        with open(b, "rb") as fh:
            self.assertEqual(fh.read(), first)

    # -- (e) pktgen ------------------------------------------------------

    def pktgen_emulate(self, pkt_path, frame):
        """pktgen 23.03 single mode, then its rnd masks (pktgen-random.c)."""
        with open(pkt_path) as fh:
            cmds = [line.split() for line in fh if line.strip() and line[0] != "#"]
        size = next(int(c[3]) for c in cmds if c[:3] == ["set", "0", "size"])
        dmac = next(c[4] for c in cmds if c[:4] == ["set", "0", "dst", "mac"])
        smac = next(c[4] for c in cmds if c[:4] == ["set", "0", "src", "mac"])
        self.assertEqual(size - 4, len(frame), "pktgen sizes include the FCS")
        self.assertIn(["enable", "0", "random"], cmds)
        # What pktgen builds itself (its L2 header, then its own IP/UDP and
        # fill pattern, which the masks must overwrite completely): here
        # 0x5a bytes stand for everything after the Ethernet header.
        vlan = ["enable", "0", "vlan"] in cmds
        l2 = bytes.fromhex(dmac.replace(":", "")) + bytes.fromhex(smac.replace(":", ""))
        if vlan:
            vid = next(int(c[3]) for c in cmds if c[:3] == ["set", "0", "vlan"])
            cos = next(int(c[3]) for c in cmds if c[:3] == ["set", "0", "cos"])
            l2 += struct.pack("!HH", 0x8100, cos << 13 | vid)
        l2 += frame[len(l2):len(l2) + 2]  # the ethertype of 'set 0 type'
        pkt = bytearray(l2 + b"\x5a" * (len(frame) - len(l2)) + b"\0" * 4)
        slots = set()
        for c in cmds:
            if c[:3] != ["set", "0", "rnd"]:
                continue
            idx, off, mask = int(c[3]), int(c[4]), c[5]
            self.assertLess(idx, 32)
            self.assertNotIn(idx, slots)
            slots.add(idx)
            self.assertTrue(set(mask) <= {"0", "1"}, "nothing random")
            m0 = m1 = 0
            for ch in mask:
                m0, m1 = m0 << 1 | (ch == "0"), m1 << 1 | (ch == "1")
            m0 <<= 32 - len(mask)
            m1 <<= 32 - len(mask)
            word = struct.unpack("!I", pkt[off:off + 4])[0]
            word = (word & ~m0 & 0xFFFFFFFF) | m1
            pkt[off:off + 4] = struct.pack("!I", word)
        return bytes(pkt[:len(frame)])

    def test_pktgen_file(self):
        """Expect: pktgen's packet, after the rnd masks, is the first frame."""
        for v6, vlan, size in ((False, None, 64), (True, 9, 16), (False, 3, 0)):
            with self.subTest(v6=v6, vlan=vlan, size=size):
                d = desc(v6=v6, vlan=vlan, size=size)
                d["qps"] = [q for q in d["qps"] if q["type"] == "UD"]
                pkt = os.path.join(self.tmp, "t.pkt")
                pcap, _ = self.make(d, "-n", "2", "--pktgen", pkt)
                first = bytes(rdpcap(pcap)[0])
                self.assertEqual(self.pktgen_emulate(pkt, first), first)

    def test_pktgen_refuses_big_frames(self):
        """Expect: a frame pktgen's 128 bytes of masks cannot cover is refused."""
        d = desc(size=128)
        _, err = self.make(d, "--ud", "--pktgen", os.path.join(self.tmp, "x.pkt"),
                           expect_rc=2)
        self.assertIn("pktgen's 32 random-bit slots cover 128", err)
        self.assertIn("at most 76 bytes", err)

    # -- bad input --------------------------------------------------------

    def test_bad_input(self):
        """Expect: exit 2 and a message that names the problem."""
        cases = [
            (desc(size=2048), [], "above the path MTU 1024"),
            (desc(), ["--qpn", "99"], "no QP of the description matches"),
            (desc(), ["--src", "2001:2::9"], "same family"),
            (desc(), ["--src", "198.18.3.9"], "takes packets only from its peer 198.18.3.254"),
            (desc(), ["--op", "read"], "write, write-imm or send"),
            (desc(), ["-n", "0"], "--msgs"),
            (desc(), ["--vlan", "4095"], "--vlan"),
            (dict(desc(), mac="ff:ff:ff:ff:ff:ff"), [], "multicast"),
            (dict(desc(), qps=[{"type": "UC", "qpn": 17}]), [], "qps[0].peer_qpn: missing"),
        ]
        for d, opts, what in cases:
            with self.subTest(what=what):
                _, err = self.make(d, *opts, expect_rc=2)
                self.assertIn(what, err)
        res = subprocess.run([CTL, "template", os.path.join(self.tmp, "none.json"),
                              os.path.join(self.tmp, "o.pcap")], capture_output=True, text=True)
        self.assertEqual(res.returncode, 2)
        self.assertIn("No such file", res.stderr)
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w") as fh:
            fh.write('{"uroce_sink": 1,\n "qps": [}\n')
        res = subprocess.run([CTL, "template", bad, os.path.join(self.tmp, "o.pcap")],
                             capture_output=True, text=True)
        self.assertEqual(res.returncode, 2)
        self.assertIn("line 2, column", res.stderr)


def main():
    global CTL, WORKDIR
    if len(sys.argv) < 2:
        sys.exit("usage: test_template.py UROCE_CTL [WORKDIR]")
    CTL = os.path.abspath(sys.argv[1])
    rest = sys.argv[2:]
    if rest and not rest[0].startswith("-"):
        WORKDIR = rest.pop(0)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
