#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
"""A hostile RoCEv2 peer on a veth, attacking a live uroced (af_packet port).

Run by test_hostile_peer.sh inside the peer's network namespace. It starts the
victim client (hostile_victim, a liburoce program with canary memory around
its MRs, MRs with fewer rights, QPs in every state), learns its QPNs, R_Keys
and addresses, and then plays a peer that lies: out-of-bounds and wrapping
addresses and lengths, wrong and foreign R_Keys, misaligned and unauthorised
atomics, PSNs ahead and behind, bad pad counts and P_Keys, truncated headers,
bad ICRCs, opcodes of the wrong service, multi-packet WRITEs that overrun
their RETH, spoofed sources, remote invalidates, bogus responses to the
victim's own READs and atomics, and thousands of random mutations of valid
packets. For each case it checks the answer IBA prescribes (the NAK syndrome
and PSN, an ACK, or silence), the victim QP's state, the counter that must
move (QP counters from `uroce-ctl counters --qp N --json`, port counters from
DPDK telemetry), and that no canary byte moved.

Frames are built byte by byte here (scapy's RoCE layer has no RETH, AtomicETH
or DETH) and sent on an AF_PACKET socket; the ICRC is computed by the RoCEv2
annex A17.4.1 recipe for IPv4 and IPv6, and cross-checked at start against
scapy.contrib.roce's own ICRC, so that what reaches the transport is what the
attack means (a bad ICRC only where the case wants one).

Subcommands:
  attack   the whole suite; exit 0 when every check passed
  neigh    neighbour ageing: uroced follows this peer's MAC change
           (test_neigh_age.sh)
"""
import argparse
import json
import os
import random
import select
import socket
import struct
import subprocess
import sys
import time
import zlib

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1

# Opcodes (IBA 9.2.1, table 35)
RC, UC, UD, XRC = 0x00, 0x20, 0x60, 0xA0
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY = 0x00, 0x01, 0x02, 0x04
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY = 0x06, 0x07, 0x08, 0x0A
READ_REQ = 0x0C
READ_FIRST, READ_MIDDLE, READ_LAST, READ_ONLY = 0x0D, 0x0E, 0x0F, 0x10
ACK, ATOMIC_ACK, CSWAP, FADD = 0x11, 0x12, 0x13, 0x14
SEND_ONLY_INV = 0x17
FLUSH, ATOMIC_WRITE = 0x1C, 0x1D  # IBA 1.5 Annex A19
# AETH syndromes (IBA 9.7.5.1, tables 43-44)
NAK_SEQ, NAK_INV_REQ, NAK_REM_ACC = 0x60, 0x61, 0x62
PMTU = 1024

QPS_NAMES = ["RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"]


# ------------------------------------------------------------------ wire ---

def csum16(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def icrc(l3, v6):
    """ICRC over IP header .. payload (RoCEv2 A17.4.1): 8 bytes of ones for the
    LRH, variant fields masked to ones (IPv4 TOS, TTL, checksum; IPv6 traffic
    class, flow label, hop limit; UDP checksum; BTH byte 4), CRC-32 stored
    little-endian."""
    b = bytearray(l3)
    if v6:
        b[0] |= 0x0F
        b[1:4] = b"\xff\xff\xff"
        b[7] = 0xFF
        udp = 40
    else:
        b[1] = 0xFF
        b[8] = 0xFF
        b[10:12] = b"\xff\xff"
        udp = (b[0] & 0x0F) * 4
    b[udp + 6:udp + 8] = b"\xff\xff"
    if len(b) > udp + 8 + 4:  # a truncated BTH has no byte 4 to mask
        b[udp + 8 + 4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF)


def mac_bytes(m):
    return bytes(int(x, 16) for x in m.split(":"))


class Wire:
    def __init__(self, iface, smac, dmac, promisc=False):
        self.iface = iface
        self.smac = mac_bytes(smac)
        self.dmac = mac_bytes(dmac)
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.s.bind((iface, 0))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        if promisc:
            ifindex = socket.if_nametoindex(iface)
            mreq = struct.pack("iHH8s", ifindex, PACKET_MR_PROMISC, 0, b"")
            self.s.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
        # A UDP socket on 4791, never read: the kernel here then sends no
        # ICMP port unreachable for uroced's answers (it drops them instead).
        self.quiet = []
        for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
            try:
                u = socket.socket(fam, socket.SOCK_DGRAM)
                u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
                if fam == socket.AF_INET6:
                    u.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                u.bind((addr, 4791))
                self.quiet.append(u)
            except OSError:
                pass
        self.sent = 0

    def frame(self, src, dst, ib, good_icrc=True, sport=0xC123, tos=0, ttl=64, smac=None):
        """Ethernet/IPv4|IPv6/UDP/ib/ICRC; ib is BTH through pad."""
        udp_len = 8 + len(ib) + 4
        if ":" in dst:
            ip = struct.pack("!IHBB16s16s", 6 << 28 | tos << 20, udp_len, 17, ttl,
                             socket.inet_pton(socket.AF_INET6, src),
                             socket.inet_pton(socket.AF_INET6, dst))
            etype = 0x86DD
        else:
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + udp_len, 0, 0x4000, ttl, 17, 0,
                             socket.inet_aton(src), socket.inet_aton(dst))
            ip = ip[:10] + struct.pack("!H", csum16(ip)) + ip[12:]
            etype = 0x0800
        l3 = ip + struct.pack("!HHHH", sport, 4791, udp_len, 0) + ib
        crc = icrc(l3, etype == 0x86DD)
        if not good_icrc:
            crc = bytes(x ^ 0xA5 for x in crc)
        eth = self.dmac + (mac_bytes(smac) if smac else self.smac) + struct.pack("!H", etype)
        return eth + l3 + crc

    def send(self, frames):
        for f in frames:
            self.s.send(f)
            self.sent += 1

    def drain(self):
        while select.select([self.s], [], [], 0)[0]:
            self.s.recvfrom(65536)

    def recv(self, timeout, want=None, stop=None):
        """RoCEv2 frames from uroced for `timeout` s (or until stop(list))."""
        out = []
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            if not select.select([self.s], [], [], left)[0]:
                break
            data, addr = self.s.recvfrom(65536)
            if addr[2] == PACKET_OUTGOING:
                continue
            p = parse(data)
            if p is None or p["smac"] == self.smac:
                continue
            if want is None or want(p):
                out.append(p)
                if stop is not None and stop(out):
                    break
        return out


def parse(data):
    if len(data) < 14:
        return None
    etype = struct.unpack("!H", data[12:14])[0]
    off = 14
    if etype == 0x8100:
        etype = struct.unpack("!H", data[16:18])[0]
        off = 18
    if etype == 0x0800:
        ihl = (data[off] & 0x0F) * 4
        if data[off + 9] != 17:
            return None
        src = socket.inet_ntoa(data[off + 12:off + 16])
        udp = off + ihl
    elif etype == 0x86DD:
        if data[off + 6] != 17:
            return None
        src = socket.inet_ntop(socket.AF_INET6, data[off + 8:off + 24])
        udp = off + 40
    else:
        return None
    if struct.unpack("!H", data[udp + 2:udp + 4])[0] != 4791:
        return None
    b = data[udp + 8:]
    if len(b) < 16:
        return None
    op = b[0]
    p = {"dmac": data[0:6], "smac": data[6:12], "src": src, "op": op,
         "dqpn": int.from_bytes(b[5:8], "big"), "psn": int.from_bytes(b[9:12], "big"),
         "pad": (b[1] >> 4) & 3, "ib": b}
    low = op & 0x1F
    if low in (READ_FIRST, READ_LAST, READ_ONLY, ACK, ATOMIC_ACK):
        p["syn"] = b[12]
        p["msn"] = int.from_bytes(b[13:16], "big")
        hdr = 16
    elif low == READ_MIDDLE:
        hdr = 12
    else:
        hdr = 12
    if low == ATOMIC_ACK and len(b) >= 28:
        p["orig"] = struct.unpack("!Q", b[16:24])[0]
        hdr = 24
    if low == READ_REQ:
        p["va"], p["rkey"], p["dma_len"] = struct.unpack("!QII", b[12:28])
        hdr = 28
    if low in (CSWAP, FADD):
        p["va"], p["rkey"], p["swap_add"], p["cmp"] = struct.unpack("!QIQQ", b[12:40])
        hdr = 40
    p["payload"] = b[hdr:len(b) - 4 - p["pad"]] if len(b) >= hdr + 4 + p["pad"] else b""
    return p


def ib(op, dqpn, psn, payload=b"", reth=None, atm=None, aeth=None, atmack=None, imm=None,
       ieth=None, deth=None, pad=None, pkey=0xFFFF, ackreq=True, se=False, tver=0, feth=None,
       xrceth=None):
    """BTH, the extension headers in IBA order, payload and pad (no ICRC)."""
    if pad is None:
        pad = (4 - len(payload) % 4) % 4
    h = struct.pack("!BBHBBHBBH", op, (se << 7) | (pad & 3) << 4 | (tver & 15), pkey, 0,
                    dqpn >> 16 & 0xFF, dqpn & 0xFFFF, 0x80 if ackreq else 0,
                    psn >> 16 & 0xFF, psn & 0xFFFF)
    if deth is not None:
        h += struct.pack("!II", deth[0], deth[1] & 0xFFFFFF)
    if xrceth is not None:  # IBA 1.2 XRC: the SRQ number, right after the BTH
        h += struct.pack("!I", xrceth & 0xFFFFFF)
    if feth is not None:
        h += struct.pack("!I", feth)
    if reth is not None:
        h += struct.pack("!QII", reth[0] & (2**64 - 1), reth[1], reth[2] & 0xFFFFFFFF)
    if atm is not None:
        h += struct.pack("!QIQQ", atm[0] & (2**64 - 1), atm[1], atm[2], atm[3])
    if aeth is not None:
        h += struct.pack("!I", aeth[0] << 24 | (aeth[1] & 0xFFFFFF))
    if atmack is not None:
        h += struct.pack("!Q", atmack)
    if imm is not None:
        h += struct.pack("!I", imm)
    if ieth is not None:
        h += struct.pack("!I", ieth)
    return h + payload + b"\0" * ((4 - len(payload) % 4) % 4)


# How long an answer that must come may take (it is taken as soon as it
# comes): on a loaded host the daemon's worker can wait seconds for a CPU.
# Silence is judged once the counter that shows the frame was handled has
# moved, plus SILENCE_S.
ANSWER_S = float(os.environ.get("HOSTILE_ANSWER_S", "20"))
SILENCE_S = 0.4


def until(read, cond, limit=None):
    """read() again every 0.1 s until cond(value) holds, for at most `limit`
    (ANSWER_S) seconds; the last value read."""
    end = time.monotonic() + (ANSWER_S if limit is None else limit)
    while True:
        v = read()
        if cond(v) or time.monotonic() >= end:
            return v
        time.sleep(0.1)


def scapy_crosscheck(w, src, dst):
    """Our ICRC equals scapy.contrib.roce's for an IPv4 SEND Only."""
    from scapy.all import Ether, IP, UDP, Raw, raw, conf
    from scapy.contrib.roce import BTH
    conf.verb = 0
    pay = b"uroce-hostile-peer-crosscheck!!!"
    pkt = (Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
           IP(src=src, dst=dst, flags="DF", id=0, ttl=64) /
           UDP(sport=0xC123, dport=4791, chksum=0) /
           BTH(opcode=RC | SEND_ONLY, dqpn=0x11, psn=7, ackreq=1) / Raw(pay))
    theirs = raw(pkt)[-4:]
    ours = w.frame(src, dst, ib(RC | SEND_ONLY, 0x11, 7, pay))[-4:]
    return theirs == ours, theirs.hex(), ours.hex()


# ---------------------------------------------------------------- victim ---

class Victim:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.info = self._read()
        if "fatal" in self.info:
            raise RuntimeError("victim: " + self.info["fatal"])

    def _read(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("victim exited (status %s)" % self.p.poll())
        return json.loads(line)

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self._read()

    def qpn(self, name):
        return self.info["qps"][name]

    def mr(self, name):
        return self.info["mrs"][name]

    def state(self, q):
        return self.cmd("state " + q)["state"]

    def reset(self, q):
        r = self.cmd("reset " + q)
        return r["rc"] == 0

    def quit(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
            self.p.wait(10)
        except Exception:
            self.p.kill()


# -------------------------------------------------------------- counters ---

class Counters:
    """Counters read with retries: on a loaded host an answer can be slow; one
    that never comes reads as {} (the check that needed it then fails)."""

    def __init__(self, ctl, sock, prefix):
        self.ctl = ctl
        self.sock = sock
        self.tel_path = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix

    def _ctl(self, args):
        for _ in range(3):
            try:
                out = subprocess.run([self.ctl, "counters", "--json", "-s", self.sock] + args,
                                     capture_output=True, text=True, timeout=60)
                if out.returncode == 0:
                    return json.loads(out.stdout)["counters"]
            except (subprocess.TimeoutExpired, ValueError, KeyError):
                pass
            time.sleep(0.5)
        print("hostile_peer: uroce-ctl counters %s: no answer" % " ".join(args), flush=True)
        return {}

    def qp(self, qpn):
        return self._ctl(["--qp", str(qpn)]).get("transport", {})

    def device(self):
        c = self._ctl([])
        d = dict(c.get("transport", {}))
        d.update({"daemon." + k: v for k, v in c.get("daemon", {}).items()})
        return d

    def tel(self, cmd):
        for _ in range(3):
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                s.settimeout(20)
                s.connect(self.tel_path)
                json.loads(s.recv(16384).decode())
                s.send(cmd.encode())
                reply = json.loads(s.recv(65536).decode())
                s.close()
                return reply[cmd.split(",")[0]] or {}
            except (OSError, ValueError, KeyError):
                time.sleep(0.5)
        print("hostile_peer: telemetry %s: no answer" % cmd, flush=True)
        return {}

    def port(self):
        return self.tel("/uroce/port/stats,0")


def has_nak(out):
    return any(r.get("syn", 0) & 0x60 == 0x60 for r in out)


def delta(a, b):
    return {k: b[k] - a.get(k, 0) for k in b if isinstance(b[k], int) and b[k] != a.get(k, 0)}


# ----------------------------------------------------------------- suite ---

class Suite:
    def __init__(self, a):
        self.a = a
        self.w = Wire(a.iface, a.mac_b, a.mac_a)
        self.fails = 0
        self.checks = 0
        self.v = None
        self.cnt = Counters(a.ctl, a.socket, a.prefix)
        self.log = open(a.log, "w") if a.log else None

    def ok(self, cond, what):
        self.checks += 1
        if cond:
            print("hostile_peer: ok: " + what, flush=True)
        else:
            self.fails += 1
            print("hostile_peer: FAIL: " + what, flush=True)
        return cond

    def note(self, what):
        if self.log:
            self.log.write(what + "\n")
            self.log.flush()

    # -- addressing --------------------------------------------------------
    def peer_of(self, q):
        return 0x100 + ["rc", "rc2", "rc6", "uc", "ud", "rtr", "sqd", "init", "reset",
                        "err", "xtgt"].index(q)

    def to(self, q, ibb, good_icrc=True, src=None, v6=None):
        v6 = (q == "rc6") if v6 is None else v6
        if v6:
            return self.w.frame(src or self.a.ip6_b, self.a.ip6_a, ibb, good_icrc)
        return self.w.frame(src or self.a.ip_b, self.a.ip_a, ibb, good_icrc)

    def answers(self, q, timeout=SILENCE_S, n=None, stop=None):
        peer = self.peer_of(q)
        if n:
            stop = lambda out: len(out) >= n
        return self.w.recv(timeout, want=lambda p: p["dqpn"] == peer, stop=stop)

    def exchange(self, q, frames, timeout=SILENCE_S, n=None, stop=None):
        """Send, then collect answers for `timeout` s; when `n` answers (or
        what `stop` says) are expected, wait up to ANSWER_S for them (a
        loaded machine answers late)."""
        self.w.drain()
        self.w.send(frames)
        return self.answers(q, ANSWER_S if n or stop else timeout, n, stop)

    def poll_until(self, cond):
        """The victim's completions, polled until cond(all of them) holds
        (ANSWER_S at most)."""
        wc = []
        end = time.monotonic() + ANSWER_S
        while True:
            wc += self.v.cmd("poll")["wc"]
            if cond(wc) or time.monotonic() >= end:
                return wc
            time.sleep(0.1)

    def canary(self, what):
        r = self.v.cmd("check")
        return self.ok(r["ok"], "%s: no canary byte moved (%s)" % (what, json.dumps(r)))

    def syn_str(self, rs):
        return [("%s psn=%#x syn=%#x msn=%s" % (hex(r["op"]), r["psn"], r.get("syn", -1),
                                                r.get("msn"))) for r in rs]

    # -- building blocks ---------------------------------------------------
    def write(self, q, psn, va, rkey, data, op=WRITE_ONLY, dma=None, **kw):
        svc = UC if q == "uc" else RC
        return ib(svc | op, self.v.qpn(q), psn, data,
                  reth=(va, rkey, len(data) if dma is None else dma), **kw)

    def read(self, q, psn, va, rkey, n):
        return ib(RC | READ_REQ, self.v.qpn(q), psn, reth=(va, rkey, n))

    def atomic(self, q, psn, op, va, rkey, add, cmp=0):
        return ib(RC | op, self.v.qpn(q), psn, atm=(va, rkey, add, cmp))

    def expect_nak(self, name, q, frames, syn, psn, state="ERR", counter=None, silent_ok=False):
        before = self.cnt.qp(self.v.qpn(q)) if counter else None
        rs = self.exchange(q, frames, 0.5, n=1)
        naks = [r for r in rs if r["op"] & 0x1F == ACK and r.get("syn", 0) & 0x60 == 0x60]
        got = [(r["syn"], r["psn"]) for r in naks]
        self.ok((syn, psn) in got and all(r["op"] & 0x1F == ACK for r in rs),
                "%s: NAK syndrome %#x at PSN %#x (got %s)" % (name, syn, psn, self.syn_str(rs)))
        st = self.v.state(q)
        self.ok(QPS_NAMES[st] == state, "%s: victim QP %s is %s (want %s)" %
                (name, q, QPS_NAMES[st], state))
        if counter:
            d = until(lambda: delta(before, self.cnt.qp(self.v.qpn(q))),
                      lambda d: d.get(counter, 0) >= 1)
            self.ok(d.get(counter, 0) >= 1, "%s: counter %s moved (%s)" % (name, counter, d))
        self.canary(name)
        return rs

    def expect_silent(self, name, q, frames, counter=None, port_counter=None, state=None):
        before = self.cnt.qp(self.v.qpn(q)) if counter else None
        pbefore = self.cnt.port() if port_counter else None
        self.w.drain()
        self.w.send(frames)
        # Handled (the counter moved: bounded wait), then silent for SILENCE_S:
        # an answer sent at any time since is still in the socket.
        if counter:
            names = counter.split("|")
            d = until(lambda: delta(before, self.cnt.qp(self.v.qpn(q))),
                      lambda d: sum(d.get(c, 0) for c in names) >= len(frames))
            self.ok(sum(d.get(c, 0) for c in names) >= len(frames),
                    "%s: QP counter %s moved by %d (%s)" % (name, counter, len(frames), d))
        if port_counter:
            names = port_counter.split("|")
            d = until(lambda: delta(pbefore, self.cnt.port()),
                      lambda d: sum(d.get(c, 0) for c in names) >= len(frames))
            self.ok(sum(d.get(c, 0) for c in names) >= len(frames),
                    "%s: port counter %s moved by %d (%s)" % (name, port_counter, len(frames), d))
        rs = self.answers(q, SILENCE_S)
        self.ok(rs == [], "%s: dropped silently (got %s)" % (name, self.syn_str(rs)))
        if state:
            st = self.v.state(q)
            self.ok(QPS_NAMES[st] == state, "%s: victim QP %s is still %s (is %s)" %
                    (name, q, state, QPS_NAMES[st]))
        self.canary(name)
        return rs

    def reset(self, q):
        if not self.v.reset(q):
            self.ok(False, "victim could not reset QP %s" % q)
        return self.v.info["rq_psn"]

    # -- the cases ---------------------------------------------------------
    def run(self):
        a = self.a
        same, theirs, ours = scapy_crosscheck(self.w, a.ip_b, a.ip_a)
        self.ok(same, "ICRC of this peer equals scapy.contrib.roce's (%s / %s)" % (ours, theirs))
        self.v = Victim([a.victim, "--socket", a.socket, "--peer4", "::ffff:" + a.ip_b,
                         "--peer6", a.ip6_b, "--peer-qpn", "0x100"])
        self.note(json.dumps(self.v.info))
        # uroced resolves this peer's addresses before the first answer can
        # leave; ask for them first, so no case loses its answer to ARP/ND.
        for ip in (a.ip_b, a.ip6_b):
            until(lambda: self.cnt.tel("/uroce/port/resolve,0," + ip).get("state"),
                  lambda st: st == "reachable", 60)
        self.sanity()
        self.bounds_and_keys()
        self.rights()
        self.atomics()
        self.iba15()
        self.xrc()
        self.psns()
        self.headers()
        self.services_and_states()
        self.overrun()
        self.spoofed()
        self.invalidate()
        self.windows()
        self.sends()
        self.uc_ud()
        self.msn_per_response()
        self.completer()
        self.mutations()
        self.final()
        self.v.quit()
        print("hostile_peer: %d checks, %d failed, %d frames sent" %
              (self.checks, self.fails, self.w.sent), flush=True)
        return self.fails == 0

    def sanity(self):
        """A well-behaved peer is served: WRITE lands, READ returns it."""
        e = self.reset("rc")
        rw = self.v.mr("rw")
        data = bytes((i * 7 + 3) & 0xFF for i in range(256))
        rs = self.exchange("rc", [self.to("rc", self.write("rc", e, rw["addr"] + 64,
                                                           rw["rkey"], data))], n=1)
        self.ok(any(r["op"] == RC | ACK and r["syn"] & 0x60 == 0 and r["psn"] == e for r in rs),
                "good WRITE Only: ACK at PSN %#x (got %s)" % (e, self.syn_str(rs)))
        got = bytes.fromhex(self.v.cmd("dump rw 64 256")["hex"])
        self.ok(got == data, "good WRITE Only: the 256 bytes landed in MR rw")
        rs = self.exchange("rc", [self.to("rc", self.read("rc", e + 1, rw["addr"] + 64,
                                                          rw["rkey"], 256))], n=1)
        self.ok(len(rs) == 1 and rs[0]["op"] == RC | READ_ONLY and rs[0]["payload"] == data and
                rs[0]["psn"] == e + 1, "good READ: READ Response Only with the data at PSN %#x"
                % (e + 1))
        self.canary("sanity")

    def bounds_and_keys(self):
        rw = self.v.mr("rw")
        end = rw["addr"] + rw["len"]
        cases = [
            ("WRITE past the end of the MR", rw["addr"] + rw["len"] - 32, rw["rkey"], 64, None),
            ("WRITE at the last byte + 1", end, rw["rkey"], 4, None),
            ("WRITE before the start of the MR", rw["addr"] - 8, rw["rkey"], 16, None),
            ("WRITE whose address wraps 2^64", 2**64 - 16, rw["rkey"], 64, None),
            ("WRITE with DMA length 2^31 in a 4 KiB MR", rw["addr"], rw["rkey"], PMTU,
             0x80000000),
            ("WRITE with a random R_Key", rw["addr"], 0x5EED1234, 64, None),
            ("WRITE with the right index, wrong key variant", rw["addr"], rw["rkey"] ^ 0x01, 64,
             None),
            ("WRITE with a key of another PD (same client)", self.v.mr("pd2")["addr"],
             self.v.mr("pd2")["rkey"], 64, None),
            ("WRITE with another client's key", self.v.mr("other")["addr"],
             self.v.mr("other")["rkey"], 64, None),
            ("WRITE with a deregistered key", self.v.mr("stale")["addr"],
             self.v.mr("stale")["rkey"], 64, None),
            ("WRITE with R_Key 0", rw["addr"], 0, 64, None),
        ]
        for name, va, rkey, n, dma in cases:
            e = self.reset("rc")
            op = WRITE_ONLY if dma is None else WRITE_FIRST
            pkt = self.write("rc", e, va, rkey, bytes([0xEE]) * n, op=op, dma=dma)
            self.expect_nak(name, "rc", [self.to("rc", pkt)], NAK_REM_ACC, e,
                            counter="resp_remote_access_errors")
        # The same against READ.
        for name, va, rkey, n in [
                ("READ past the end of the MR", rw["addr"] + rw["len"] - 8, rw["rkey"], 16),
                ("READ whose address wraps 2^64", 2**64 - 8, rw["rkey"], 64),
                ("READ of 8 KiB from a 4 KiB MR", rw["addr"], rw["rkey"], 8192),
                ("READ with another client's key", self.v.mr("other")["addr"],
                 self.v.mr("other")["rkey"], 64),
                ("READ with a deregistered key", self.v.mr("stale")["addr"],
                 self.v.mr("stale")["rkey"], 64)]:
            e = self.reset("rc")
            self.expect_nak(name, "rc", [self.to("rc", self.read("rc", e, va, rkey, n))],
                            NAK_REM_ACC, e, counter="resp_remote_access_errors")
        # A DMA length above 2^31, the largest message (IBA 9.4.3, port
        # max_msg_sz): a length error, Invalid Request, before any R_Key or
        # bounds check (as rxe's check_length()).
        for name, pkt in [
                ("WRITE First with DMA length 2^32 - 16 (above 2^31)",
                 lambda e: self.write("rc", e, rw["addr"] + 16, rw["rkey"], b"\xEE" * PMTU,
                                      op=WRITE_FIRST, dma=0xFFFFFFF0)),
                ("READ of 2^32 - 1 bytes (above 2^31)",
                 lambda e: self.read("rc", e, rw["addr"], rw["rkey"], 0xFFFFFFFF))]:
            e = self.reset("rc")
            self.expect_nak(name, "rc", [self.to("rc", pkt(e))], NAK_INV_REQ, e,
                            counter="resp_remote_invalid_request")
        # The odd 100-byte MR: exactly its bytes, and not one more.
        odd = self.v.mr("odd")
        e = self.reset("rc")
        rs = self.exchange("rc", [self.to("rc", self.write("rc", e, odd["addr"], odd["rkey"],
                                                           b"\x11" * 100))], n=1)
        self.ok(any(r["syn"] & 0x60 == 0 for r in rs if "syn" in r),
                "WRITE of exactly the 100 bytes of MR odd: ACK (got %s)" % self.syn_str(rs))
        e = self.reset("rc")
        self.expect_nak("WRITE of 101 bytes into the 100-byte MR odd", "rc",
                        [self.to("rc", self.write("rc", e, odd["addr"], odd["rkey"],
                                                  b"\x22" * 101))], NAK_REM_ACC, e)

    def rights(self):
        for name, mr, pkt in [
                ("WRITE to a read-only MR", "ro", "w"),
                ("WRITE to an MR with no remote right", "none", "w"),
                ("READ from a write-only MR", "wo", "r"),
                ("READ from an MR with no remote right", "none", "r"),
                ("READ from an atomic-only MR", "at", "r"),
                ("WRITE to an atomic-only MR", "at", "w")]:
            m = self.v.mr(mr)
            e = self.reset("rc")
            if pkt == "w":
                p = self.write("rc", e, m["addr"], m["rkey"], b"\x33" * 64)
            else:
                p = self.read("rc", e, m["addr"], m["rkey"], 64)
            self.expect_nak(name, "rc", [self.to("rc", p)], NAK_REM_ACC, e,
                            counter="resp_remote_access_errors")
        # READ of a read-only MR is served, with its own bytes.
        ro = self.v.mr("ro")
        e = self.reset("rc")
        rs = self.exchange("rc", [self.to("rc", self.read("rc", e, ro["addr"], ro["rkey"],
                                                          2000))], n=2)
        data = b"".join(r["payload"] for r in rs)
        want = bytes(pattern(0x3000 + i) for i in range(2000))
        self.ok([r["op"] for r in rs] == [RC | READ_FIRST, RC | READ_LAST] and data == want and
                [r["psn"] for r in rs] == [e, e + 1],
                "READ of 2000 bytes of MR ro: First and Last at PSNs %#x, %#x with its bytes" %
                (e, e + 1))

    def atomics(self):
        at = self.v.mr("at")
        e = self.reset("rc")
        rs = self.exchange("rc", [self.to("rc", self.atomic("rc", e, FADD, at["addr"] + 8,
                                                            at["rkey"], 5))], n=1)
        orig = struct.unpack("<Q", bytes(pattern(0x7008 + i) for i in range(8)))[0]
        self.ok(len(rs) == 1 and rs[0]["op"] == RC | ATOMIC_ACK and rs[0].get("orig") == orig,
                "FETCH_ADD on MR at: Atomic ACK with the original value %#x (got %s)" %
                (orig, [hex(r.get("orig", -1)) for r in rs]))
        got = struct.unpack("<Q", bytes.fromhex(self.v.cmd("dump at 8 8")["hex"]))[0]
        self.ok(got == (orig + 5) & (2**64 - 1), "FETCH_ADD: memory holds original + 5")
        # IBA 9.4.5 (C9-?? on alignment), as rxe: a misaligned atomic is an
        # Invalid Request (class C), not a remote access error.
        e = self.reset("rc")
        self.expect_nak("FETCH_ADD at an address 4 bytes off alignment", "rc",
                        [self.to("rc", self.atomic("rc", e, FADD, at["addr"] + 4, at["rkey"],
                                                   1))], NAK_INV_REQ, e)
        for name, mr, off in [("CMP_SWAP on a read-only MR", "ro", 0),
                              ("FETCH_ADD on a read/write MR without REMOTE_ATOMIC", "wo", 0),
                              ("FETCH_ADD 8 bytes past the end of MR at", "at", 0x1000),
                              ("CMP_SWAP at 2^64 - 8 (wraps)", "at", None)]:
            m = self.v.mr(mr)
            e = self.reset("rc")
            op = CSWAP if "CMP" in name else FADD
            va = 2**64 - 8 if off is None else m["addr"] + off
            self.expect_nak(name, "rc", [self.to("rc", self.atomic("rc", e, op, va,
                                                                   m["rkey"], 1, 0))],
                            NAK_REM_ACC, e, counter="resp_remote_access_errors")

    def iba15(self):
        """IBA 1.5 ATOMIC WRITE and FLUSH (Annex A19) from a hostile peer: the
        victim's QP allows remote write but no FLUSH type, its MRs no FLUSH."""
        rw, ro = self.v.mr("rw"), self.v.mr("ro")
        val = bytes(range(0xA0, 0xA8))

        def aw(e, va, rkey, data=val, dma=8):
            return ib(RC | ATOMIC_WRITE, self.v.qpn("rc"), e, data, reth=(va, rkey, dma))

        def fl(e, va, rkey, n, feth):
            return ib(RC | FLUSH, self.v.qpn("rc"), e, reth=(va, rkey, n), feth=feth)

        e = self.reset("rc")
        self.v.cmd("fill rw 0")
        first = self.to("rc", aw(e, rw["addr"] + 128, rw["rkey"]))
        rs = self.exchange("rc", [first], n=1)
        self.ok(len(rs) == 1 and rs[0]["op"] == RC | READ_ONLY and rs[0]["payload"] == b"" and
                rs[0]["psn"] == e and rs[0].get("syn", 0x60) & 0x60 == 0,
                "ATOMIC WRITE: an empty READ Response Only at PSN %#x (got %s)" %
                (e, self.syn_str(rs)))
        got = bytes.fromhex(self.v.cmd("dump rw 128 8")["hex"])
        self.ok(got == val, "ATOMIC WRITE: the 8 bytes landed in MR rw (%s)" % got.hex())
        # oA19-14/15: the duplicate is answered again, never executed again.
        self.v.cmd("fill rw 0")
        rs = self.exchange("rc", [first], n=1)
        self.ok(len(rs) == 1 and rs[0]["op"] == RC | READ_ONLY and rs[0]["psn"] == e,
                "duplicate ATOMIC WRITE: answered again at PSN %#x (got %s)" %
                (e, self.syn_str(rs)))
        got = bytes.fromhex(self.v.cmd("dump rw 128 8")["hex"])
        self.ok(got == b"\0" * 8, "duplicate ATOMIC WRITE: not executed again (%s)" % got.hex())
        self.canary("ATOMIC WRITE")
        for name, pkt, syn in [
                ("ATOMIC WRITE 4 bytes off alignment",
                 lambda e: aw(e, rw["addr"] + 4, rw["rkey"]), NAK_INV_REQ),
                ("ATOMIC WRITE with RETH DMA length 4",
                 lambda e: aw(e, rw["addr"] + 8, rw["rkey"], dma=4), NAK_INV_REQ),
                ("ATOMIC WRITE to a read-only MR", lambda e: aw(e, ro["addr"], ro["rkey"]),
                 NAK_REM_ACC),
                ("ATOMIC WRITE with a deregistered key",
                 lambda e: aw(e, self.v.mr("stale")["addr"], self.v.mr("stale")["rkey"]),
                 NAK_REM_ACC),
                ("FLUSH with a reserved FETH bit", lambda e: fl(e, rw["addr"], rw["rkey"], 64,
                                                               0x41), NAK_INV_REQ),
                ("FLUSH with selectivity 2", lambda e: fl(e, rw["addr"], rw["rkey"], 64, 0x21),
                 NAK_INV_REQ),
                ("FLUSH with no placement type", lambda e: fl(e, rw["addr"], rw["rkey"], 64,
                                                             0x10), NAK_INV_REQ),
                ("FLUSH GLOBAL on a QP without FLUSH_GLOBAL",
                 lambda e: fl(e, rw["addr"], rw["rkey"], 64, 0x01), NAK_REM_ACC),
                ("FLUSH PERSISTENT of a whole MR", lambda e: fl(e, rw["addr"], rw["rkey"], 0,
                                                               0x12), NAK_REM_ACC)]:
            e = self.reset("rc")
            self.v.cmd("fill rw 0")
            self.expect_nak(name, "rc", [self.to("rc", pkt(e))], syn, e)
            got = bytes.fromhex(self.v.cmd("dump rw 0 16")["hex"])
            self.ok(got == b"\0" * 16, "%s: nothing written" % name)
        # A payload other than 8 bytes is not an ATOMIC WRITE the wire allows.
        e = self.reset("rc")
        self.expect_silent("ATOMIC WRITE carrying 12 bytes", "rc",
                           [self.to("rc", aw(e, rw["addr"], rw["rkey"], data=b"\x55" * 12))],
                           port_counter="rx_bad_length", state="RTS")

    def xrc(self):
        """IBA 1.2 XRC from a hostile peer against the victim's XRC target QP:
        the XRCETH must name an XRC SRQ of the target's domain. An SRQ of
        another domain of the same client, one of another client, and a
        number that is no SRQ are XRC domain violations (remote access NAK,
        the QP to ERR, counted), and none of those SRQs gives up its bait
        receive (the canary); an R_Key of a PD other than the named SRQ's is
        a remote access NAK; a request cut inside its XRCETH is dropped as a
        bad length; a good SEND lands in the domain's SRQ."""
        q, srq = "xtgt", self.v.info["srqs"]
        qpn = self.v.qpn(q)
        e = self.reset(q)
        self.v.cmd("poll")
        rs = self.exchange(q, [self.to(q, ib(XRC | SEND_ONLY, qpn, e, b"\x3C" * 64,
                                              xrceth=srq["xsrq"]))], n=1)
        self.ok(any(r["op"] == XRC | ACK and r["syn"] & 0x60 == 0 and r["psn"] == e
                    for r in rs), "XRC SEND to the domain's SRQ: XRC ACK at %#x (got %s)" %
                (e, self.syn_str(rs)))
        wc = self.poll_until(lambda wc: any(c["qpn"] == qpn for c in wc))
        self.ok(any(c["qpn"] == qpn and c["status"] == 0 and c["len"] == 64 for c in wc),
                "the XRC SRQ's receive completed for the target QP (%s)" % wc)
        for name, srqn in (("an SRQ of another domain of the client", srq["xother"]),
                           ("an SRQ of another client's domain", srq["xforeign"]),
                           ("a number that is no SRQ", 0xFFFFFF)):
            e = self.reset(q)
            self.expect_nak("XRC SEND naming %s" % name, q,
                            [self.to(q, ib(XRC | SEND_ONLY, qpn, e, b"\x5A" * 64,
                                           xrceth=srqn))],
                            NAK_REM_ACC, e, counter="resp_xrc_domain_err")
        e = self.reset(q)
        self.expect_nak("XRC WRITE with an rkey of another PD than the SRQ's", q,
                        [self.to(q, ib(XRC | WRITE_ONLY, qpn, e, b"\x5A" * 16,
                                       xrceth=srq["xsrq"],
                                       reth=(self.v.mr("pd2")["addr"], self.v.mr("pd2")["rkey"],
                                             16)))],
                        NAK_REM_ACC, e, counter="resp_remote_access_errors")
        e = self.reset(q)
        cut = ib(XRC | WRITE_ONLY, qpn, e, b"", xrceth=srq["xsrq"],
                 reth=(self.v.mr("rw")["addr"], self.v.mr("rw")["rkey"], 0))[:14]
        self.expect_silent("XRC WRITE cut inside its XRCETH", q, [self.to(q, cut)],
                           port_counter="rx_bad_length|rx_truncated", state="RTS")
        self.canary("xrc")

    def psns(self):
        rw = self.v.mr("rw")
        e = self.reset("rc")
        self.v.cmd("fill rw 0")
        # PSN ahead: one PSN-sequence NAK naming ePSN, then silence (IBA 9.7.5.1.1).
        before = self.cnt.qp(self.v.qpn("rc"))
        rs = self.exchange("rc", [self.to("rc", self.write("rc", e + 5, rw["addr"], rw["rkey"],
                                                           b"\x44" * 64))], n=1)
        self.ok([(r["syn"], r["psn"]) for r in rs] == [(NAK_SEQ, e)],
                "WRITE 5 PSNs ahead: one PSN sequence error NAK at ePSN %#x (got %s)" %
                (e, self.syn_str(rs)))
        self.w.drain()
        self.w.send([self.to("rc", self.write("rc", e + 9, rw["addr"], rw["rkey"],
                                               b"\x44" * 64))])
        d = until(lambda: delta(before, self.cnt.qp(self.v.qpn("rc"))),
                  lambda d: d.get("out_of_sequence", 0) >= 2)
        rs = self.answers("rc", SILENCE_S)
        self.ok(rs == [], "a second WRITE ahead in the same gap: silence (got %s)" %
                self.syn_str(rs))
        self.ok(d.get("out_of_sequence", 0) == 2 and d.get("seq_nak_sent", 0) == 1,
                "PSNs ahead: out_of_sequence +2, seq_nak_sent +1 (%s)" % d)
        self.ok(self.v.cmd("dump rw 0 64")["hex"] == "00" * 64,
                "PSNs ahead: nothing written")
        self.ok(QPS_NAMES[self.v.state("rc")] == "RTS", "PSNs ahead: the QP stays in RTS")
        # The expected PSN then goes through.
        rs = self.exchange("rc", [self.to("rc", self.write("rc", e, rw["addr"], rw["rkey"],
                                                           b"\x55" * 64))], n=1)
        self.ok([r["syn"] & 0x60 for r in rs] == [0] and rs[0]["psn"] == e,
                "then the expected PSN: ACK (got %s)" % self.syn_str(rs))
        # PSN behind (a duplicate, IBA 9.7.5.1.2): re-ACKed, not an error.
        before = self.cnt.qp(self.v.qpn("rc"))
        rs = self.exchange("rc", [self.to("rc", self.write("rc", e, rw["addr"], rw["rkey"],
                                                           b"\x55" * 64))], n=1)
        self.ok(len(rs) == 1 and rs[0]["syn"] & 0x60 == 0,
                "duplicate WRITE (PSN behind): ACK, no NAK (got %s)" % self.syn_str(rs))
        rs = self.exchange("rc", [self.to("rc", self.write("rc", (e - 1000) & 0xFFFFFF,
                                                           rw["addr"], rw["rkey"],
                                                           b"\x66" * 64))], n=1)
        self.ok(all(r["syn"] & 0x60 == 0 for r in rs),
                "WRITE 1000 PSNs behind: a duplicate, no NAK (got %s)" % self.syn_str(rs))
        d = until(lambda: delta(before, self.cnt.qp(self.v.qpn("rc"))),
                  lambda d: d.get("duplicate_request", 0) >= 2)
        self.ok(d.get("duplicate_request", 0) == 2, "duplicates counted (%s)" % d)
        self.ok(QPS_NAMES[self.v.state("rc")] == "RTS", "duplicates: the QP stays in RTS")
        # Half the PSN space away: behind, never "ahead by 2^23".
        rs = self.exchange("rc", [self.to("rc", self.write("rc", (e + 1 + 0x800000) & 0xFFFFFF,
                                                           rw["addr"], rw["rkey"],
                                                           b"\x77" * 64))], n=1)
        self.ok(QPS_NAMES[self.v.state("rc")] == "RTS" and
                self.v.cmd("dump rw 0 1")["hex"] == "55",
                "WRITE 2^23 PSNs away: not executed, QP in RTS (got %s)" % self.syn_str(rs))
        self.canary("PSNs")

    def headers(self):
        rw = self.v.mr("rw")
        e = self.reset("rc")
        q = self.v.qpn("rc")
        good = self.write("rc", e, rw["addr"], rw["rkey"], b"\x12" * 64)
        # P_Key other than the default (IBA 9.6.1.2, 10.9): silent, counted.
        self.expect_silent("P_Key 0x1234", "rc",
                           [self.to("rc", self.write("rc", e, rw["addr"], rw["rkey"],
                                                     b"\x12" * 64, pkey=0x1234))],
                           counter="rx_bad_pkey", state="RTS")
        # Bad ICRC: dropped by the port, never reaches the transport.
        self.expect_silent("bad ICRC", "rc", [self.to("rc", good, good_icrc=False)] * 3,
                           port_counter="rx_icrc_errors", state="RTS")
        # Truncated headers: a RETH cut short, a BTH cut short.
        self.expect_silent("WRITE Only cut inside its RETH", "rc",
                           [self.to("rc", good[:12 + 8])], port_counter="rx_bad_length|rx_truncated",
                           state="RTS")
        self.expect_silent("BTH cut at 8 bytes", "rc", [self.to("rc", good[:8])],
                           port_counter="rx_truncated|rx_bad_length", state="RTS")
        # TVer 1 and an RD opcode: not packets uroce accepts (IBA 9.6.1).
        self.expect_silent("BTH TVer 1", "rc", [self.to("rc", self.write("rc", e, rw["addr"],
                                                                         rw["rkey"],
                                                                         b"\x12" * 64,
                                                                         tver=1))],
                           port_counter="rx_bad_tver", state="RTS")
        self.expect_silent("an RD opcode (0x4A)", "rc",
                           [self.to("rc", ib(0x4A, q, e, b"\x12" * 64, reth=(rw["addr"],
                                                                             rw["rkey"], 64)))],
                           port_counter="rx_bad_opcode", state="RTS")
        # Pad count larger than the payload: the lengths cannot add up.
        self.expect_silent("pad count 3 on a 2-byte payload", "rc",
                           [self.to("rc", ib(RC | SEND_ONLY, q, e, b"\x01\x02", pad=3)[:-2])],
                           port_counter="rx_bad_length|rx_truncated", state="RTS")
        # Pad count that shortens the payload below the DMA length: the
        # payload of a WRITE Only must equal its DMA length (IBA C9-??,
        # 9.7.5.1.3 length errors): Invalid Request.
        pkt = bytearray(self.write("rc", e, rw["addr"], rw["rkey"], b"\x12" * 64))
        pkt[1] |= 3 << 4
        self.expect_nak("WRITE Only whose pad count makes it 61 bytes for a DMA length of 64",
                        "rc", [self.to("rc", bytes(pkt))], NAK_INV_REQ, e,
                        counter="resp_remote_invalid_request")

    def services_and_states(self):
        rw = self.v.mr("rw")
        e = self.reset("rc")
        q = self.v.qpn("rc")
        data = b"\x21" * 64
        # Opcodes of another service (IBA 9.6.1.1): silent, rx_bad_service.
        self.expect_silent("UC WRITE Only to an RC QP", "rc",
                           [self.to("rc", ib(UC | WRITE_ONLY, q, e, data,
                                             reth=(rw["addr"], rw["rkey"], 64)))],
                           counter="rx_bad_service", state="RTS")
        self.expect_silent("UD SEND Only to an RC QP", "rc",
                           [self.to("rc", ib(UD | SEND_ONLY, q, e, data,
                                             deth=(0x11111111, 0x100)))],
                           counter="rx_bad_service", state="RTS")
        uq = self.v.qpn("uc")
        self.expect_silent("RC READ request to a UC QP", "uc",
                           [self.to("uc", ib(RC | READ_REQ, uq, e, reth=(rw["addr"], rw["rkey"],
                                                                          64)))],
                           counter="rx_bad_service", state="RTS")
        self.expect_silent("RC FETCH_ADD to a UD QP", "ud",
                           [self.to("ud", ib(RC | FADD, self.v.qpn("ud"), 0,
                                             atm=(rw["addr"], rw["rkey"], 1, 0)))],
                           counter="rx_bad_service", state="RTS")
        # QPs in states that receive nothing (IBA 10.3.1): silent, rx_bad_state.
        # The ERR QP came there from INIT, with no peer address: a packet for
        # it may as well count as one from a source that is not its peer.
        for st in ("reset", "init", "err"):
            self.reset(st)
            self.expect_silent("WRITE to a QP in %s" % st.upper(), st,
                               [self.to(st, self.write(st, 0x100, rw["addr"], rw["rkey"],
                                                       data))],
                               counter="rx_bad_state" + ("|rx_bad_src_addr" if st == "err"
                                                         else ""), state=st.upper())
        # RTR and SQD receive (IBA 10.3.1).
        for st in ("rtr", "sqd"):
            self.reset(st)
            rs = self.exchange(st, [self.to(st, self.write(st, 0x100, rw["addr"], rw["rkey"],
                                                           data))], n=1)
            self.ok(len(rs) == 1 and rs[0]["syn"] & 0x60 == 0 and rs[0]["psn"] == 0x100,
                    "WRITE to a QP in %s: ACK (got %s)" % (st.upper(), self.syn_str(rs)))
        self.canary("services and states")

    def overrun(self):
        """Multi-packet WRITEs whose packets carry more than their RETH said."""
        rw = self.v.mr("rw")
        e = self.reset("rc")
        self.v.cmd("fill rw 0")
        va = rw["addr"]
        frames = [self.to("rc", self.write("rc", e, va, rw["rkey"], b"\xA1" * PMTU,
                                           op=WRITE_FIRST, dma=PMTU + 512)),
                  self.to("rc", ib(RC | WRITE_MIDDLE, self.v.qpn("rc"), e + 1, b"\xA2" * PMTU)),
                  self.to("rc", ib(RC | WRITE_LAST, self.v.qpn("rc"), e + 2, b"\xA3" * 512))]
        rs = self.exchange("rc", frames, stop=has_nak)
        naks = [(r["syn"], r["psn"]) for r in rs if r["syn"] & 0x60 == 0x60]
        self.ok(naks[:1] == [(NAK_INV_REQ, e + 1)],
                "WRITE First (DMA length 1536) + Middle + Last of 2560 bytes: Invalid Request "
                "NAK at the Middle, PSN %#x (got %s)" % (e + 1, self.syn_str(rs)))
        tail = bytes.fromhex(self.v.cmd("dump rw %d %d" % (PMTU + 512, 4096 - PMTU - 512))["hex"])
        self.ok(tail == b"\0" * len(tail), "overrun: not one byte past va + 1536 written")
        self.ok(QPS_NAMES[self.v.state("rc")] == "ERR", "overrun: the QP went to ERR")
        # A Last after the DMA length was already used up exactly.
        e = self.reset("rc")
        frames = [self.to("rc", self.write("rc", e, va, rw["rkey"], b"\xB1" * PMTU,
                                           op=WRITE_FIRST, dma=PMTU)),
                  self.to("rc", ib(RC | WRITE_LAST, self.v.qpn("rc"), e + 1, b"\xB2" * 16))]
        self.v.cmd("fill rw 0")
        rs = self.exchange("rc", frames, stop=has_nak)
        tail = bytes.fromhex(self.v.cmd("dump rw %d %d" % (PMTU, 4096 - PMTU))["hex"])
        self.ok(tail == b"\0" * len(tail) and
                any(r["syn"] == NAK_INV_REQ for r in rs if "syn" in r),
                "WRITE First of the whole DMA length then a Last of 16 more: Invalid Request, "
                "nothing past the range (got %s)" % self.syn_str(rs))
        # A Middle or Last with no First (IBA 9.7.5.1.3 opcode sequence).
        e = self.reset("rc")
        self.expect_nak("WRITE Middle with no First", "rc",
                        [self.to("rc", ib(RC | WRITE_MIDDLE, self.v.qpn("rc"), e,
                                          b"\xC1" * PMTU))], NAK_INV_REQ, e,
                        counter="resp_remote_invalid_request")
        self.canary("overrun")

    def spoofed(self):
        """Issue 9 defect 3: right QPN, PSN and R_Key, wrong source address."""
        rw = self.v.mr("rw")
        e = self.reset("rc")
        self.v.cmd("fill rw 0")
        before = self.cnt.qp(self.v.qpn("rc"))
        dev_before = self.cnt.device()
        pkt = self.write("rc", e, rw["addr"], rw["rkey"], b"\xD1" * 64)
        self.w.drain()
        self.w.send([self.to("rc", pkt, src=self.a.ip_spoof),
                     self.to("rc", pkt, src=self.a.ip6_b, v6=True)])
        d = until(lambda: delta(before, self.cnt.qp(self.v.qpn("rc"))),
                  lambda d: d.get("rx_bad_src_addr", 0) >= 2)
        rs = self.answers("rc", SILENCE_S)
        self.ok(rs == [], "WRITE from %s and from %s to a QP connected to %s: no answer (got %s)"
                % (self.a.ip_spoof, self.a.ip6_b, self.a.ip_b, self.syn_str(rs)))
        self.ok(self.v.cmd("dump rw 0 64")["hex"] == "00" * 64,
                "spoofed WRITEs: nothing written")
        self.ok(d.get("rx_write_requests", 0) == 0,
                "spoofed WRITEs: rx_write_requests did not move (%s)" % d)
        dd = delta(dev_before, self.cnt.device())
        self.ok(d.get("rx_bad_src_addr", 0) == 2,
                "spoofed WRITEs: rx_bad_src_addr moved by 2 (QP: %s; device: %s)" % (d, dd))
        # The real peer's WRITE at the same PSN is new, not a duplicate.
        rs = self.exchange("rc", [self.to("rc", pkt)], n=1)
        d2 = until(lambda: delta(before, self.cnt.qp(self.v.qpn("rc"))),
                   lambda d: d.get("rx_write_requests", 0) >= 1)
        self.ok(len(rs) == 1 and rs[0]["syn"] & 0x60 == 0 and d2.get("rx_write_requests") == 1
                and self.v.cmd("dump rw 0 64")["hex"] == "d1" * 64,
                "then the connected peer's WRITE at PSN %#x executes (ePSN did not move)" % e)
        self.canary("spoofed sources")

    def invalidate(self):
        """Issue 9 defect 2: SEND with Invalidate naming an ordinary MR's R_Key
        (IBA 10.6.4.2: only memory windows and fast-registered MRs may be
        invalidated remotely; uroce has neither). MR inv is its own target, so
        that a failure here does not spoil the other cases."""
        inv = self.v.mr("inv")
        e = self.reset("rc")
        rs = self.exchange("rc", [self.to("rc", ib(RC | SEND_ONLY_INV, self.v.qpn("rc"), e,
                                                   b"\x01" * 16, ieth=inv["rkey"]))], n=1)
        self.ok(len(rs) >= 1 and all(r.get("syn", 0) & 0x60 == 0x60 for r in rs),
                "SEND with Invalidate of an MR registered with reg_mr: a NAK, not an ACK "
                "(got %s)" % self.syn_str(rs))
        self.note("invalidate answer: %s" % self.syn_str(rs))
        self.v.cmd("poll")
        e = self.reset("rc")
        rs = self.exchange("rc", [self.to("rc", self.write("rc", e, inv["addr"], inv["rkey"],
                                                           b"\xE1" * 32))], n=1)
        self.ok(len(rs) == 1 and rs[0]["syn"] & 0x60 == 0 and
                self.v.cmd("dump inv 0 32")["hex"] == "e1" * 32,
                "the MR stays valid: a WRITE to it afterwards is ACKed and lands (got %s)" %
                self.syn_str(rs))
        self.canary("remote invalidate")

    def windows(self):
        """Memory windows (IBA 10.6.7, issue 20): a window the victim bound
        through QP rc takes a WRITE inside it; its key is refused once the
        victim invalidated it (stale), when its variant byte is wrong, and
        when a type 2B window bound through QP rc2 is named on QP rc
        (foreign): remote access error NAKs, nothing lands. A peer's SEND
        with Invalidate of a type 1 window is an invalid request."""
        mwb = self.v.mr("mwb")
        e = self.reset("rc")
        b = self.v.cmd("mw rc 2 0 256 6")
        self.ok(b.get("rc") == 0 and b.get("status") == 0, "BIND_MW of a type 2 window: %s" % b)
        rs = self.exchange("rc", [self.to("rc", self.write("rc", e, b["addr"] + 64, b["rkey"],
                                                           b"\x5D" * 32))], n=1)
        self.ok(len(rs) == 1 and rs[0]["syn"] & 0x60 == 0 and
                self.v.cmd("dump mwb 64 32")["hex"] == "5d" * 32,
                "WRITE through the window: ACKed and landed (got %s)" % self.syn_str(rs))
        e += 1
        self.expect_nak("WRITE through the window with a wrong key variant", "rc",
                        [self.to("rc", self.write("rc", e, b["addr"], b["rkey"] ^ 0x40,
                                                  b"\xEE" * 32))], NAK_REM_ACC, e,
                        counter="resp_remote_access_errors")
        e = self.reset("rc")
        b = self.v.cmd("mw rc 2 0 256 6")
        inv = self.v.cmd("mwinv rc %d" % b.get("rkey", 0))
        self.ok(b.get("status") == 0 and inv.get("status") == 0,
                "BIND_MW then LOCAL_INV: %s %s" % (b, inv))
        self.expect_nak("WRITE with a stale (invalidated) window key", "rc",
                        [self.to("rc", self.write("rc", e, b["addr"] + 128, b["rkey"],
                                                  b"\xEE" * 32))], NAK_REM_ACC, e,
                        counter="resp_remote_access_errors")
        self.ok(self.v.cmd("dump mwb 128 32")["hex"] != "ee" * 32,
                "nothing landed through the stale key")
        self.reset("rc2")
        e = self.reset("rc")
        b = self.v.cmd("mw rc2 2 512 256 6")
        self.ok(b.get("status") == 0, "BIND_MW of a type 2 window through QP rc2: %s" % b)
        self.expect_nak("WRITE on QP rc with a type 2B window bound through rc2 (foreign)",
                        "rc", [self.to("rc", self.write("rc", e, b["addr"], b["rkey"],
                                                        b"\xEE" * 32))], NAK_REM_ACC, e,
                        counter="resp_remote_access_errors")
        e = self.reset("rc")
        b = self.v.cmd("mw rc 1 768 256 6")
        self.ok(b.get("status") == 0, "BIND_MW of a type 1 window: %s" % b)
        self.expect_nak("SEND with Invalidate of a type 1 window (o10-37.2.26)", "rc",
                        [self.to("rc", ib(RC | SEND_ONLY_INV, self.v.qpn("rc"), e,
                                          b"\x01" * 16, ieth=b["rkey"]))], NAK_INV_REQ, e)
        self.v.cmd("poll")
        self.note("mwb: %s" % mwb)
        self.canary("memory windows")

    def sends(self):
        q = self.v.qpn("rc")
        e = self.reset("rc")
        # A SEND longer than the 512-byte receive WQE (IBA 9.7.5.1.3): Invalid
        # Request, the WQE completes with LOC_LEN_ERR, nothing past the slot.
        self.v.cmd("poll")
        self.expect_nak("SEND Only of 1000 bytes into a 512-byte receive WQE", "rc",
                        [self.to("rc", ib(RC | SEND_ONLY, q, e, b"\x5A" * 1000))],
                        NAK_INV_REQ, e, counter="resp_local_length_error")
        wc = self.poll_until(lambda wc: any(c["status"] == 1 for c in wc))
        self.ok(any(c["status"] == 1 for c in wc),
                "the receive WQE completed with LOC_LEN_ERR (%s)" % wc)
        # No receive WQE: RNR NAK, ePSN kept (IBA 9.7.5.1.4).
        e = self.reset("rc")
        for _ in range(4):
            self.exchange("rc", [self.to("rc", ib(RC | SEND_ONLY, q, e, b"\x5B" * 8))], n=1)
            e += 1
        rs = self.exchange("rc", [self.to("rc", ib(RC | SEND_ONLY, q, e, b"\x5C" * 8))], n=1)
        self.ok(len(rs) == 1 and rs[0]["syn"] & 0x60 == 0x20 and rs[0]["psn"] == e,
                "SEND with no receive WQE left: RNR NAK at PSN %#x (got %s)" %
                (e, self.syn_str(rs)))
        self.v.cmd("poll")
        self.canary("sends")

    def uc_ud(self):
        rw = self.v.mr("rw")
        uq = self.v.qpn("uc")
        self.reset("uc")
        # UC has no NAK: an out-of-bounds WRITE is dropped, the QP stays in RTS.
        self.expect_silent("UC WRITE past the end of the MR", "uc",
                           [self.to("uc", ib(UC | WRITE_ONLY, uq, 0x100, b"\x61" * 64,
                                             reth=(rw["addr"] + rw["len"] - 8, rw["rkey"], 64)))],
                           state="RTS")
        self.expect_silent("UC WRITE with another client's key", "uc",
                           [self.to("uc", ib(UC | WRITE_ONLY, uq, 0x101, b"\x62" * 64,
                                             reth=(self.v.mr("other")["addr"],
                                                   self.v.mr("other")["rkey"], 64)))],
                           state="RTS")
        self.v.cmd("fill rw 0")
        self.expect_silent("UC WRITE in bounds (executed, never answered)", "uc",
                           [self.to("uc", ib(UC | WRITE_ONLY, uq, 0x102, b"\x63" * 64,
                                             reth=(rw["addr"], rw["rkey"], 64)))],
                           counter="rx_write_requests", state="RTS")
        self.ok(self.v.cmd("dump rw 0 64")["hex"] == "63" * 64, "UC WRITE in bounds landed")
        udq = self.v.qpn("ud")
        self.reset("ud")
        self.v.cmd("poll")
        qkey = self.v.info["qkey"]
        self.expect_silent("UD SEND with a wrong Q_Key", "ud",
                           [self.to("ud", ib(UD | SEND_ONLY, udq, 5, b"\x64" * 64,
                                             deth=(qkey ^ 1, 0x104)))],
                           counter="rx_ud_qkey_err", state="RTS")
        self.expect_silent("UD SEND longer than the receive WQE (512 bytes with the GRH)", "ud",
                           [self.to("ud", ib(UD | SEND_ONLY, udq, 6, b"\x65" * 500,
                                             deth=(qkey, 0x104)))],
                           counter="rx_ud_drop|resp_local_length_error", state="RTS")
        self.expect_silent("UD SEND that fits (delivered, never answered)", "ud",
                           [self.to("ud", ib(UD | SEND_ONLY, udq, 7, b"\x66" * 64,
                                             deth=(qkey, 0x104)))], state="RTS")
        wc = self.poll_until(lambda wc: any(c["qpn"] == udq and c["status"] == 0 for c in wc))
        good = [c for c in wc if c["qpn"] == udq and c["status"] == 0]
        self.ok(len(good) == 1 and good[0]["len"] == 64 + 40,
                "UD: only the good datagram completed, 64 bytes + 40 of GRH (%s)" % wc)

    def msn_per_response(self):
        """Issue 9 defect 4: each READ response and atomic ACK carries the MSN
        as of its own request (IBA 9.7.5.1.5, C9-148). The victim's
        max_dest_rd_atomic is 8, so five in flight are allowed."""
        at = self.v.mr("at")
        e = self.reset("rc")
        frames = [self.to("rc", self.atomic("rc", e + k, FADD, at["addr"] + 64, at["rkey"], 1))
                  for k in range(5)]
        rs = self.exchange("rc", frames, n=5)
        msns = [r.get("msn") for r in rs if r["op"] == RC | ATOMIC_ACK]
        self.ok(msns == [1, 2, 3, 4, 5],
                "five FETCH_ADDs sent back to back: Atomic ACK MSNs 1..5 (got %s)" % msns)
        origs = [r.get("orig") for r in rs]
        self.ok(len(origs) == 5 and all(origs[k + 1] == origs[k] + 1 for k in range(4)),
                "and each got its own original value, executed once (%s)" %
                [hex(o) for o in origs if o is not None])
        rw = self.v.mr("rw")
        e = self.reset("rc")
        frames = [self.to("rc", self.read("rc", e + k, rw["addr"], rw["rkey"], 8))
                  for k in range(3)]
        rs = self.exchange("rc", frames, n=3)
        msns = [r.get("msn") for r in rs if r["op"] == RC | READ_ONLY]
        self.ok(msns == [1, 2, 3], "three READs back to back: response MSNs 1..3 (got %s)" % msns)

    def completer(self):
        """Bogus responses to the victim's own requests (its completer)."""
        q = "rc2"
        peer = self.peer_of(q)
        loc = self.v.mr("loc")
        self.v.cmd("poll")
        # 1. A READ of 512 answered with 1024 bytes: nothing past the SGE.
        self.reset(q)
        self.v.cmd("fill loc 0")
        self.w.drain()
        self.v.cmd("post %s read 512 %d %d" % (q, 0x5000000, 0x1234))
        req = self.w.recv(ANSWER_S, want=lambda p: p["dqpn"] == peer and p["op"] == RC | READ_REQ,
                          stop=lambda o: True)
        self.ok(len(req) == 1, "victim's READ request seen on the wire")
        if req:
            psn = req[0]["psn"]
            # A ghost first: an Atomic ACK for a PSN never sent.
            before = self.cnt.qp(self.v.qpn(q))
            self.w.send([self.to(q, ib(RC | ATOMIC_ACK, self.v.qpn(q), (psn + 1000) & 0xFFFFFF,
                                       aeth=(0x1F, 1), atmack=0xDEAD))])
            d = until(lambda: delta(before, self.cnt.qp(self.v.qpn(q))),
                      lambda d: d.get("ghost_response", 0) + d.get("duplicate_response", 0) >= 1)
            self.ok(d.get("ghost_response", 0) + d.get("duplicate_response", 0) >= 1,
                    "Atomic ACK for a PSN never sent: ignored and counted (%s)" % d)
            self.w.send([self.to(q, ib(RC | READ_ONLY, self.v.qpn(q), psn, b"\x71" * 1024,
                                       aeth=(0x1F, 1)))])
            time.sleep(0.3)
            got = bytes.fromhex(self.v.cmd("dump loc 512 1024")["hex"])
            self.ok(got == b"\0" * 1024,
                    "READ of 512 answered with 1024 bytes: not one byte past the SGE written")
            # Let the READ end (answered right, or retried and failed).
            self.w.send([self.to(q, ib(RC | READ_ONLY, self.v.qpn(q), psn, b"\x72" * 512,
                                       aeth=(0x1F, 1)))])
            wc = self.poll_until(lambda wc: len(wc) >= 1)
            self.ok(len(wc) >= 1, "the victim's READ completed (status %s)" %
                    [c["status"] for c in wc])
        self.canary("completer: READ response overrun")
        # 2. An atomic answered with a READ response: not its answer, nothing
        # of it lands where the original value goes.
        self.reset(q)
        self.v.cmd("fill loc 0")
        self.w.drain()
        self.v.cmd("post %s fadd 8 %d %d 1" % (q, 0x5000000, 0x1234))
        req = self.w.recv(ANSWER_S, want=lambda p: p["dqpn"] == peer and p["op"] == RC | FADD,
                          stop=lambda o: True)
        self.ok(len(req) == 1, "victim's FETCH_ADD seen on the wire")
        if req:
            psn = req[0]["psn"]
            self.w.send([self.to(q, ib(RC | READ_ONLY, self.v.qpn(q), psn, b"\x73" * 8,
                                       aeth=(0x1F, 1)))])
            time.sleep(0.5)
            wc = self.v.cmd("poll")["wc"]
            self.ok(self.v.cmd("dump loc 2048 8")["hex"] != "73" * 8 and
                    all(c["status"] != 0 for c in wc),
                    "FETCH_ADD answered with a READ response: not taken as its result (%s)" % wc)
        # 3. An atomic answered with a remote access NAK: REM_ACCESS_ERR, ERR.
        self.reset(q)
        self.w.drain()
        self.v.cmd("post %s fadd 8 %d %d 1" % (q, 0x5000000, 0x1234))
        req = self.w.recv(ANSWER_S, want=lambda p: p["dqpn"] == peer and p["op"] == RC | FADD,
                          stop=lambda o: True)
        if req:
            self.w.send([self.to(q, ib(RC | ACK, self.v.qpn(q), req[0]["psn"],
                                       aeth=(NAK_REM_ACC, 1)))])
            wc = self.poll_until(lambda wc: any(c["status"] == 10 for c in wc))
            self.ok(any(c["status"] == 10 for c in wc),
                    "FETCH_ADD answered with a remote access NAK: REM_ACCESS_ERR (%s)" % wc)
            self.ok(QPS_NAMES[self.v.state(q)] == "ERR", "and the requester QP went to ERR")
        self.canary("completer: bogus atomic answers")

    def mutations(self):
        """Thousands of random mutations of valid packets (ICRC recomputed for
        most of them, so that they reach the transport)."""
        rnd = random.Random(self.a.seed)
        rw, at, ro = self.v.mr("rw"), self.v.mr("at"), self.v.mr("ro")
        targets = ["rc", "rc", "rc", "uc", "ud", "rtr", "sqd", "rc6"]
        for q in set(targets):
            self.reset(q)
        n = self.a.mutations
        keys = [m["rkey"] for m in self.v.info["mrs"].values()]
        sent = 0
        t0 = time.monotonic()
        while sent < n:
            batch = []
            for _ in range(min(50, n - sent)):
                q = rnd.choice(targets)
                qpn = self.v.qpn(q)
                psn = (0x100 + rnd.randrange(-4, 40)) & 0xFFFFFF
                kind = rnd.randrange(6)
                if kind == 0:
                    b = bytearray(self.write(q, psn, rw["addr"] + rnd.randrange(0, 4096, 8),
                                             rw["rkey"], bytes(rnd.randrange(256)
                                                               for _ in range(64))))
                elif kind == 1:
                    b = bytearray(self.read(q, psn, ro["addr"], ro["rkey"],
                                            rnd.choice([8, 64, 1500, 4096])))
                elif kind == 2:
                    b = bytearray(self.atomic(q, psn, rnd.choice([FADD, CSWAP]),
                                              at["addr"] + 8 * rnd.randrange(512), at["rkey"],
                                              rnd.getrandbits(64), rnd.getrandbits(64)))
                elif kind == 3:
                    b = bytearray(ib(rnd.choice([RC, UC, UD]) | SEND_ONLY, qpn, psn,
                                     b"\x7E" * rnd.randrange(0, 600),
                                     deth=(self.v.info["qkey"], 7) if q == "ud" else None))
                elif kind == 4:
                    b = bytearray(ib(RC | ACK, qpn, psn, aeth=(rnd.getrandbits(8), psn)))
                else:
                    b = bytearray(ib(RC | READ_FIRST, qpn, psn, b"\x7F" * PMTU,
                                     aeth=(0x1F, 1)))
                for _ in range(rnd.randrange(1, 5)):
                    how = rnd.randrange(8)
                    if how <= 3 and len(b):
                        b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
                    elif how == 4 and len(b) > 12:  # a header field anywhere
                        pos = rnd.randrange(12, min(len(b), 44))
                        b[pos:pos + 4] = struct.pack("!I", rnd.choice(keys + [rnd.getrandbits(32)]))
                    elif how == 5:
                        b = b[:rnd.randrange(len(b) + 1)]
                    elif how == 6:
                        b += bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 64)))
                    elif len(b):
                        b[0] = rnd.randrange(256)
                b[5:8] = qpn.to_bytes(3, "big")  # keep aiming at the victim
                batch.append(self.to(q, bytes(b), good_icrc=rnd.random() < 0.97))
            self.w.send(batch)
            sent += len(batch)
            self.w.drain()
            if sent % 500 == 0 or sent >= n:
                for q in set(targets):
                    if QPS_NAMES[self.v.state(q)] != ("RTS" if q not in ("rtr", "sqd") else
                                                      q.upper()):
                        self.reset(q)
                r = self.v.cmd("check")
                if not r["ok"]:
                    self.ok(False, "mutation %d: a canary byte moved (%s)" % (sent, r))
                    break
        self.v.cmd("poll")
        self.ok(True, "%d random mutations of valid packets sent in %.1f s" %
                (sent, time.monotonic() - t0))
        self.canary("random mutations")

    def final(self):
        """uroced is alive and serves the peer correctly after all that."""
        port = self.cnt.port()
        self.ok(port.get("rx_roce_packets", 0) > 0,
                "uroced answers telemetry: rx_roce_packets %s, rx_icrc_errors %s" %
                (port.get("rx_roce_packets"), port.get("rx_icrc_errors")))
        self.sanity()
        for q in ("rc", "uc", "ud", "rc6"):
            self.reset(q)
        rw = self.v.mr("rw")
        rs = self.exchange("rc6", [self.to("rc6", self.write("rc6", 0x100, rw["addr"],
                                                             rw["rkey"], b"\x99" * 8))], n=1)
        self.ok(len(rs) == 1 and rs[0]["syn"] & 0x60 == 0,
                "the QP connected over IPv6 is served too (got %s)" % self.syn_str(rs))
        self.canary("final")


def pattern(off, salt=0):
    """hostile_victim.c's canary pattern."""
    return ((off * 131 + (off >> 8) * 7 + salt) ^ 0x5A) & 0xFF


# ----------------------------------------------------------- neighbours ---

def neigh(a):
    """uroced follows a MAC change of this peer (test_neigh_age.sh changes it
    between the two phases; this side only talks and listens)."""
    w = Wire(a.iface, a.mac_b, a.mac_a, promisc=True)
    v = Victim([a.victim, "--socket", a.socket, "--peer4", "::ffff:" + a.ip_b,
                "--peer6", a.ip6_b, "--peer-qpn", "0x100"])
    rw = v.info["mrs"]["rw"]
    qpn = v.info["qps"]["rc"]
    psn = v.info["rq_psn"]
    fails = 0
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        phase, want_mac = line.split()
        # The peer writes once a 100 ms until an ACK comes back to want_mac.
        seen = []
        end = time.monotonic() + a.timeout
        ok = False
        while time.monotonic() < end and not ok:
            w.drain()
            w.send([w.frame(a.ip_b, a.ip_a, ib(RC | WRITE_ONLY, qpn, psn, b"\x42" * 8,
                                               reth=(rw["addr"], rw["rkey"], 8)),
                            smac=want_mac)])
            for p in w.recv(0.1, want=lambda p: p["dqpn"] == 0x100):
                dm = ":".join("%02x" % x for x in p["dmac"])
                seen.append(dm)
                ok = ok or dm == want_mac.lower()
            psn += 1
        print(json.dumps({"phase": phase, "ok": ok, "acks_to": sorted(set(seen)),
                          "seconds": round(a.timeout - (end - time.monotonic()), 2)}),
              flush=True)
        fails += not ok
    v.quit()
    return fails == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["attack", "neigh"])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--mac-a", required=True, help="uroced's MAC")
    ap.add_argument("--mac-b", required=True, help="this peer's MAC")
    ap.add_argument("--ip-a", required=True)
    ap.add_argument("--ip-b", required=True)
    ap.add_argument("--ip6-a", required=True)
    ap.add_argument("--ip6-b", required=True)
    ap.add_argument("--ip-spoof", default="198.18.7.66")
    ap.add_argument("--victim", required=True)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--ctl", default="uroce-ctl")
    ap.add_argument("--prefix", default="uroced")
    ap.add_argument("--mutations", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--log", default=None)
    a = ap.parse_args()
    if a.mode == "neigh":
        return 0 if neigh(a) else 1
    return 0 if Suite(a).run() else 1


if __name__ == "__main__":
    sys.exit(main())
