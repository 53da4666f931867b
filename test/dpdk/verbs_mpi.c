/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * A two-rank MPI job for test_verbs_dropin.sh: a ping-pong whose every
 * message is checked, then MPI_Allreduce (sum) checked against the closed
 * form, at a small and a large (rendezvous) size. Run with Open MPI's UCX
 * PML and shared-memory transports off, each rank on its own uroced, the
 * bytes cross uroce. Prints one "verbs_mpi: ok ..." line from rank 0 and
 * exits 0 only if every check passed on every rank.
 *
 * usage: verbs_mpi ITERS SIZE
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static uint8_t
pattern(int iter, size_t i)
{
	return (uint8_t)(iter * 131 + i * 7 + 1);
}

/* Ping-pong: rank 0 sends a patterned message, rank 1 checks it and sends it
 * back with every byte incremented, rank 0 checks that. @return errors. */
static long
pingpong(int rank, int iters, size_t size, double *usec)
{
	uint8_t *buf = malloc(size);
	long bad = 0;
	double t0;
	int it;
	size_t i;

	if (buf == NULL)
		return 1;
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (it = 0; it < iters; it++) {
		if (rank == 0) {
			for (i = 0; i < size; i++)
				buf[i] = pattern(it, i);
			MPI_Send(buf, (int)size, MPI_BYTE, 1, it, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_BYTE, 1, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (i = 0; i < size; i++)
				bad += buf[i] != (uint8_t)(pattern(it, i) + 1);
		} else {
			MPI_Recv(buf, (int)size, MPI_BYTE, 0, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (i = 0; i < size; i++) {
				bad += buf[i] != pattern(it, i);
				buf[i]++;
			}
			MPI_Send(buf, (int)size, MPI_BYTE, 0, it, MPI_COMM_WORLD);
		}
	}
	*usec = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
	free(buf);
	return bad;
}

/* Allreduce of n 64-bit integers: element i of rank r is r * n + i, so the
 * sum over ranks is known. @return errors. */
static long
allreduce(int rank, int nranks, size_t n)
{
	int64_t *in = calloc(n, sizeof(*in)), *out = calloc(n, sizeof(*out));
	long bad = 0;
	size_t i;

	if (in == NULL || out == NULL) {
		free(in);
		free(out);
		return 1;
	}
	for (i = 0; i < n; i++)
		in[i] = (int64_t)rank * (int64_t)n + (int64_t)i;
	MPI_Allreduce(in, out, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < n; i++) {
		int64_t want = (int64_t)n * nranks * (nranks - 1) / 2 + (int64_t)i * nranks;

		bad += out[i] != want;
	}
	free(in);
	free(out);
	return bad;
}

int
main(int argc, char **argv)
{
	int rank, nranks, iters;
	long bad = 0, total = 0;
	size_t size;
	double lat_small = 0, lat_big = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc != 3 || nranks != 2 || (iters = atoi(argv[1])) <= 0 ||
	    (size = strtoul(argv[2], NULL, 0)) == 0) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 verbs_mpi ITERS SIZE (2 ranks)\n");
		MPI_Finalize();
		return 2;
	}
	bad += pingpong(rank, iters, 8, &lat_small);
	bad += pingpong(rank, iters / 10 + 1, size, &lat_big);
	bad += allreduce(rank, nranks, 16);
	bad += allreduce(rank, nranks, size / 8);
	MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		if (total == 0)
			printf("verbs_mpi: ok: ping-pong 8 B x %d (%.1f us one way), %zu B x %d, "
			       "allreduce of 16 and %zu int64 checked\n",
			       iters, lat_small, size, iters / 10 + 1, size / 8);
		else
			printf("verbs_mpi: FAIL: %ld bad values\n", total);
	}
	MPI_Finalize();
	return total == 0 ? 0 : 1;
}
