/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * `uroce-perf sink`: receive-side QPs for stateless RoCEv2 load (a packet
 * generator, a replayed pcap), described as JSON, with per-second rates and
 * payload verification. See sink.c and doc/loadgen.md.
 */

#ifndef UROCE_PERF_SINK_H
#define UROCE_PERF_SINK_H

/* Entry point: @p argv[0] is "sink". @return the process exit code:
 * 0 (no error, every check passed), 1 (errors or bad data seen), 2 (usage,
 * setup or daemon failure). */
int sink_main(int argc, char **argv);

#endif /* UROCE_PERF_SINK_H */
