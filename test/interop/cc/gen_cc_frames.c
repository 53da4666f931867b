/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The congestion control frames uroce puts on a wire, made by the engine
 * itself (not by hand) on the simulated wire, for test_cc_interop.py to give
 * to tshark and uroce-ctl decode:
 *
 *   per family (IPv4, IPv6): an RC RDMA WRITE from side 0 (ECT(0) by
 *   default); the same frame marked CE by uroce_frame_mark_ce() as a switch
 *   would mark it; the CNP side 1's notification point sends for it; and the
 *   ACK side 1 sends (ECT(0)).
 *   With a VLAN (IPv4): the WRITE and the CNP wrapped as the dataplane does
 *   on a port with VLAN 100, PCP 3 and DSCP 26: the CNP keeps its own class
 *   (DSCP 48) and priority (cnp_802p_prio 6), the WRITE takes the port's.
 *
 * Usage: gen_cc_frames OUT.pcap OUT.tsv
 * The TSV has one line per frame: kind, family, vlan PCP (-1: none), DSCP,
 * ECN, opcode, destination QP, BECN.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simwire.h"

#define HEADROOM 64

static FILE *pcap, *tsv;
static unsigned int nframes;

static void
put32(uint32_t v)
{
	fwrite(&v, 4, 1, pcap); /* host order: the magic number tells readers which */
}

static void
emit(const char *kind, const uint8_t *frame, uint32_t len)
{
	struct uroce_frame f;
	struct uroce_pkt p;
	int pcp = -1;

	if (uroce_parse(frame, len, &f, &p) != UROCE_WIRE_OK) {
		fprintf(stderr, "gen_cc_frames: %s does not parse\n", kind);
		exit(1);
	}
	if (f.has_vlan)
		pcp = f.vlan_tci >> 13;
	put32(1700000000u + nframes);
	put32(0);
	put32(len);
	put32(len);
	fwrite(frame, 1, len, pcap);
	fprintf(tsv, "%u\t%s\t%d\t%d\t%u\t%u\t%u\t%u\t%u\n", nframes, kind, f.family, pcp,
		f.tclass >> 2, f.tclass & 3, p.opcode, p.dqpn, uroce_bth_becn(p.bth));
	nframes++;
}

/* Wrap the IB part of a captured frame again, as the dataplane does on a
 * port with a VLAN (roce.c: the port's PCP and DSCP unless the engine chose). */
static void
emit_vlan(const char *kind, const struct sim_cap *c)
{
	uint8_t buf[HEADROOM + 9216];
	uint32_t ib_len = c->p.ib_len, elen;
	struct uroce_encap e;

	memcpy(buf + HEADROOM, c->p.bth, ib_len);
	uroce_eng_tx_encap(&c->addr, &e);
	memcpy(e.smac, c->frame + 6, 6);
	memcpy(e.dmac, c->frame, 6);
	e.has_vlan = true;
	e.vlan_tci = (uint16_t)((e.has_pcp ? e.pcp : 3) << 13 | 100);
	if (!e.tclass_final && (e.tclass >> 2) == 0)
		e.tclass |= 26 << 2;
	elen = uroce_frame_wrap(buf + HEADROOM, HEADROOM, ib_len, &e);
	if (elen == 0) {
		fprintf(stderr, "gen_cc_frames: cannot wrap %s\n", kind);
		exit(1);
	}
	emit(kind, buf + HEADROOM - elen, elen + ib_len);
}

static void
one_family(bool ipv6)
{
	struct simwire_conf conf = { .seed = 1, .ipv6 = ipv6 };
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_send_wr wr;
	struct uroce_wr_sge sge;
	struct uroce_eng_mr *mr[2];
	struct sim_side s[2];
	static uint8_t mem[2][4096];
	const struct sim_cap *data, *cnp = NULL, *ack = NULL;
	struct uroce_frame f;
	uint8_t ce[9216];
	struct simwire *sw = simwire_create(&conf);
	uint32_t i;
	int k;

	if (sw == NULL || sim_pair_create(sw, s, &o, 16, 64) != 0) {
		fprintf(stderr, "gen_cc_frames: simulated wire\n");
		exit(1);
	}
	for (k = 0; k < 2; k++) {
		mr[k] = uroce_eng_mr_reg(s[k].pd, mem[k], 0x1000, sizeof(mem[k]),
					 UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE);
		simwire_set_capture(sw, k, true);
	}
	memset(mem[0], 0x5A, sizeof(mem[0]));
	sge = (struct uroce_wr_sge){ 0x1000, 256, uroce_eng_mr_lkey(mr[0]) };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UROCE_WR_RDMA_WRITE;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = uroce_eng_mr_rkey(mr[1]);
	if (uroce_eng_post_send(s[0].qp, &wr, NULL) != 0)
		exit(1);
	while (uroce_eng_poll(simwire_engine(sw, 0)) != 0)
		;
	data = simwire_cap(sw, 0, 0);
	if (data == NULL)
		exit(1);
	/* A switch marks it CE on the way; side 1 receives that. */
	memcpy(ce, data->frame, data->len);
	f = data->f;
	if (uroce_frame_mark_ce(ce, data->len, &f) != 1) {
		fprintf(stderr, "gen_cc_frames: the data frame is not ECN-capable\n");
		exit(1);
	}
	emit("data", data->frame, data->len);
	emit("data_ce", ce, data->len);
	simwire_cap_forward(sw, 0, 0); /* the unmarked one... */
	while (uroce_eng_poll(simwire_engine(sw, 1)) != 0)
		;
	simwire_cap_clear(sw, 1);
	/* ... and now the marked one, as a retransmission would arrive. */
	{
		struct uroce_pkt p;

		if (uroce_parse(ce, data->len, &f, &p) != UROCE_WIRE_OK)
			exit(1);
		uroce_eng_rx(simwire_engine(sw, 1), &p, &f);
	}
	while (uroce_eng_poll(simwire_engine(sw, 1)) != 0)
		;
	for (i = 0; i < simwire_ncap(sw, 1); i++) {
		const struct sim_cap *c = simwire_cap(sw, 1, i);

		if (c->p.opcode == UROCE_OPCODE_CNP && cnp == NULL)
			cnp = c;
		else if ((c->p.opcode & 0x1F) == UROCE_OP_ACKNOWLEDGE && ack == NULL)
			ack = c;
	}
	if (cnp == NULL || ack == NULL) {
		fprintf(stderr, "gen_cc_frames: side 1 sent no CNP or no ACK\n");
		exit(1);
	}
	emit("cnp", cnp->frame, cnp->len);
	emit("ack", ack->frame, ack->len);
	if (!ipv6) {
		emit_vlan("data_vlan", data);
		emit_vlan("cnp_vlan", cnp);
	}
	sim_pair_destroy(s);
	simwire_destroy(sw);
}

int
main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s OUT.pcap OUT.tsv\n", argv[0]);
		return 2;
	}
	pcap = fopen(argv[1], "wb");
	tsv = fopen(argv[2], "w");
	if (pcap == NULL || tsv == NULL) {
		perror("gen_cc_frames");
		return 1;
	}
	/* Classic pcap: magic, version 2.4, no zone, no accuracy, snaplen, Ethernet. */
	put32(0xA1B2C3D4);
	{
		uint16_t ver[2] = { 2, 4 };

		fwrite(ver, 2, 2, pcap);
	}
	put32(0);
	put32(0);
	put32(65535);
	put32(1);
	fprintf(tsv, "index\tkind\tfamily\tpcp\tdscp\tecn\topcode\tdqpn\tbecn\n");
	one_family(false);
	one_family(true);
	if (fclose(pcap) != 0 || fclose(tsv) != 0) {
		perror("gen_cc_frames");
		return 1;
	}
	return 0;
}
