#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
"""Draw the DCQCN rate traces of test/component/test_congestion.c.

    UROCE_CC_TRACE_DIR=/tmp/cc build/test/component/test_congestion
    python3 doc/congestion_plot.py /tmp/cc doc/congestion-traces.png

The test writes one TSV per run (dcqcn-2, dcqcn-8, nocc-2): every 100 us,
for each flow, its DCQCN current rate and goodput in Mb/s, and the bytes in
the bottleneck queue. The figure has one panel of rates per DCQCN run (with
goodput averaged over 1 ms, dotted) and one of the queues. Needs Debian's
python3-matplotlib; writes a PNG (no display needed).
"""

import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


def load(path):
    """{flow: ([t_ms], [rate], [goodput])}, [t_ms], [queue bytes]."""
    flows, qt, qv = {}, [], []
    with open(path, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            t = float(row["t_ms"])
            n = int(row["flow"])
            tr = flows.setdefault(n, ([], [], []))
            tr[0].append(t)
            tr[1].append(float(row["rate_mbps"]) / 1000)
            tr[2].append(float(row["goodput_mbps"]) / 1000)
            if n == 0:
                qt.append(t)
                qv.append(int(row["queue_bytes"]) / 1024)
    return flows, qt, qv


def smooth(v, n=10):
    out, s = [], 0.0
    for i, x in enumerate(v):
        s += x
        if i >= n:
            s -= v[i - n]
        out.append(s / min(i + 1, n))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: congestion_plot.py TRACE_DIR OUT.png")
    d, out = sys.argv[1], sys.argv[2]
    runs = [r for r in ("dcqcn-2", "dcqcn-8") if os.path.exists(os.path.join(d, r + ".tsv"))]
    if not runs:
        sys.exit("no dcqcn-*.tsv in %s (run the test with UROCE_CC_TRACE_DIR=%s)" % (d, d))
    fig, axes = plt.subplots(len(runs) + 1, 1, figsize=(9, 3.2 * (len(runs) + 1)),
                             sharex=True)
    for ax, run in zip(axes, runs):
        flows, _, _ = load(os.path.join(d, run + ".tsv"))
        for n, (t, rate, gp) in sorted(flows.items()):
            line, = ax.plot(t, rate, linewidth=0.9, label="flow %d" % n)
            ax.plot(t, smooth(gp), linewidth=0.6, linestyle=":", color=line.get_color())
        fair = 10.0 / len(flows)
        ax.axhline(fair, color="black", linewidth=0.6, linestyle="--")
        ax.set_ylabel("Gb/s")
        ax.set_ylim(0, 10.5)
        ax.set_title("%d flows into one 10 Gb/s port: DCQCN rate (solid), goodput "
                     "(dotted, 1 ms), fair share (dashed)" % len(flows), fontsize=9)
        ax.legend(fontsize=7, ncol=min(len(flows), 8), loc="upper right")
    qax = axes[-1]
    for run in runs + ["nocc-2"]:
        p = os.path.join(d, run + ".tsv")
        if os.path.exists(p):
            _, qt, qv = load(p)
            qax.plot(qt, qv, linewidth=0.8,
                     label=run + (" (DCQCN off)" if run.startswith("nocc") else ""))
    qax.set_ylabel("queue, KiB")
    qax.set_xlabel("simulated time, ms")
    qax.set_title("bottleneck queue (marks CE from 5 KiB, all from 100 KiB; holds 400 KiB)",
                  fontsize=9)
    qax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote %s" % out)


if __name__ == "__main__":
    main()
