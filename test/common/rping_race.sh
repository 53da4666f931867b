# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Sourced by the tests that run rping through the rdma_cm drop-in.
#
# rping_teardown_race RC_CLIENT RC_SERVER SERVER_LOG: true when a failed
# rping pair is rping's own race at the end, not uroce's: its server's CM
# thread posts the DISCONNECT and loops back into rdma_get_cm_event(), while
# its main thread, woken by that post, tears down and destroys the channel;
# a CM thread that gets the CPU only after that reads a closed channel and
# exits 255 (as over the kernel's channel, where the window is shorter).
# The client's exit 0 (-V) already says every ping verified.
rping_teardown_race() {
	[ "$1" -eq 0 ] && [ "$2" -eq 255 ] &&
		tail -n 2 "$3" | tr '\n' ' ' |
		grep -q "wait for RDMA_READ_ADV state 10 rdma_get_cm_event: Bad file descriptor"
}
# shellcheck disable=SC2034 # read by the tests that source this
RPING_RACE_SAID="the rping server's CM thread lost its own race with the server's teardown (exit 255 after the DISCONNECT); the client verified every ping: counted as passed"
