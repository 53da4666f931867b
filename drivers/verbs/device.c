/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Devices, contexts, device/port/GID queries, address vectors, asynchronous
 * events and the small libibverbs helpers (strings, rates, fork, sysfs).
 * One device per daemon socket named in $UROCE_SOCKET (colon separated;
 * default /run/uroce/uroced.sock); one liburoce context per ibv_context.
 */

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uroce_version.h"

#include "dv_internal.h"

/* verbs.h wraps these in macros; the library defines the real symbols. */
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova


int dv_trace_on;

void
dv_trace(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "uroce-verbs[%d]: ", (int)getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */
/* ------------------------------------------------------------------------ */

static struct dv_device dv_devices[DV_MAX_DEVICES];
static int dv_ndevices;
static pthread_once_t dv_once = PTHREAD_ONCE_INIT;

static void
dv_init_devices(void)
{
	const char *env = getenv("UROCE_SOCKET");
	char *list, *tok, *save = NULL;

	dv_trace_on = getenv("UROCE_VERBS_TRACE") != NULL && *getenv("UROCE_VERBS_TRACE") != '0';
	list = strdup(env != NULL && *env != '\0' ? env : UROCE_DEFAULT_SOCKET);
	if (list == NULL)
		return;
	for (tok = strtok_r(list, ":", &save); tok != NULL && dv_ndevices < DV_MAX_DEVICES;
	     tok = strtok_r(NULL, ":", &save)) {
		struct dv_device *d = &dv_devices[dv_ndevices];

		if (strlen(tok) >= sizeof(d->sock_path)) {
			fprintf(stderr, "uroce-verbs: UROCE_SOCKET entry too long, ignored: %s\n",
				tok);
			continue;
		}
		memset(d, 0, sizeof(*d));
		d->index = dv_ndevices;
		strcpy(d->sock_path, tok);
		d->device.node_type = IBV_NODE_CA;
		d->device.transport_type = IBV_TRANSPORT_IB;
		snprintf(d->device.name, sizeof(d->device.name), "uroce%d", dv_ndevices);
		snprintf(d->device.dev_name, sizeof(d->device.dev_name), "uverbs-uroce%d",
			 dv_ndevices);
		/* No kernel device: the paths stay empty. */
		dv_ndevices++;
	}
	free(list);
}

/*
 * Why a device is missing, once per device and process, on stderr: the
 * caller will only say "No IB devices found", which reads like a kernel RDMA
 * problem. @err: stat()'s errno, 0 if the path is there but no socket.
 */
static void
dv_no_device(struct dv_device *d, int err)
{
	DV_TRACE("no daemon socket at %s", d->sock_path);
	if (__atomic_exchange_n(&d->said_missing, true, __ATOMIC_RELAXED))
		return;
	fprintf(stderr, "uroce-verbs: no device %s: %s %s (%s); is uroced running with "
		"--socket %s? Set UROCE_SOCKET to its socket%s\n", d->device.name,
		err != 0 ? "no daemon socket at" : "not a socket:", d->sock_path,
		err != 0 ? strerror(err) : "some other file is there", d->sock_path,
		getenv("UROCE_SOCKET") == NULL ? " (unset: the default is used)" : "");
}

DV_EXPORT struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct ibv_device **l;
	int i, n = 0;

	pthread_once(&dv_once, dv_init_devices);
	l = calloc((size_t)dv_ndevices + 1, sizeof(*l));
	if (l == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/* A device is there when its daemon's socket is. */
	for (i = 0; i < dv_ndevices; i++) {
		struct stat st;

		if (stat(dv_devices[i].sock_path, &st) != 0)
			dv_no_device(&dv_devices[i], errno);
		else if (!S_ISSOCK(st.st_mode))
			dv_no_device(&dv_devices[i], 0);
		else
			l[n++] = &dv_devices[i].device;
	}
	if (num_devices != NULL)
		*num_devices = n;
	return l;
}

DV_EXPORT void
ibv_free_device_list(struct ibv_device **list)
{
	free(list); /* the devices themselves live as long as the process */
}

DV_EXPORT const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device != NULL ? device->name : NULL;
}

DV_EXPORT int
ibv_get_device_index(struct ibv_device *device)
{
	return device != NULL ? ((struct dv_device *)device)->index : -1;
}

DV_EXPORT __be64
ibv_get_device_guid(struct ibv_device *device)
{
	struct uroce_device_attr a;
	struct uroce_context *u;
	int rc;

	if (device == NULL)
		return 0;
	/* A short session with the daemon: the GUID is the daemon's. */
	u = uroce_open_device(((struct dv_device *)device)->sock_path);
	if (u == NULL)
		return 0;
	rc = uroce_query_device(u, &a);
	uroce_close_device(u);
	return rc == 0 ? htobe64(a.node_guid) : 0;
}

/* Parse $name as an unsigned number if set: 0 and *out, or -EINVAL. */
static int
env_u32(const char *name, uint32_t *out)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	x = strtoul(v, &end, 0);
	if (errno != 0 || *end != '\0' || x > UINT32_MAX) {
		fprintf(stderr, "uroce-verbs: %s=%s is not a 32-bit number\n", name, v);
		return -EINVAL;
	}
	*out = (uint32_t)x;
	return 0;
}

static bool
gid_is_ipv4_mapped(const uint8_t g[16])
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(g, pfx, 12) == 0;
}

/* Read the port and GID table once: active MTU and the emulated LID. */
static int
ctx_probe_port(struct dv_context *ctx)
{
	struct uroce_port_attr pa;
	uint32_t i, type;
	int rc;

	rc = uroce_query_port(ctx->uctx, 1, &pa);
	if (rc != 0)
		return rc;
	ctx->active_mtu = (uint8_t)pa.active_mtu;
	ctx->ipv4_gid_index = -1;
	for (i = 0; i < pa.gid_tbl_len && i < DV_MAX_GIDS; i++) {
		uint8_t g[16];
		uint16_t lid;

		if (uroce_query_gid_ex(ctx->uctx, 1, (int)i, g, &type) != 0 ||
		    !gid_is_ipv4_mapped(g) || type != 1)
			continue;
		lid = (uint16_t)(g[14] << 8 | g[15]);
		/* LID 0 is invalid, 0xC000 and up are multicast (IBA 4.1.3). */
		if (lid == 0 || lid >= 0xC000)
			break;
		ctx->ipv4_gid_index = (int)i;
		ctx->lid = lid;
		ctx->ipv4_prefix[0] = g[12];
		ctx->ipv4_prefix[1] = g[13];
		break;
	}
	return 0;
}

DV_EXPORT struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct dv_device *d = (struct dv_device *)device;
	struct dv_context *ctx;
	struct ibv_context *c;
	int rc;

	if (d == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return NULL;
	ctx->dev = d;
	ctx->uctx = uroce_open_device(d->sock_path);
	if (ctx->uctx == NULL) {
		rc = -errno;
		fprintf(stderr, "uroce-verbs: cannot reach uroced at %s: %s\n", d->sock_path,
			strerror(errno));
		goto fail;
	}
	rc = uroce_query_device(ctx->uctx, &ctx->dattr);
	if (rc == 0)
		rc = ctx_probe_port(ctx);
	if (rc != 0)
		goto fail_close;
	ctx->vendor_id = ctx->dattr.vendor_id;
	ctx->vendor_part_id = ctx->dattr.vendor_part_id;
	rc = env_u32("UROCE_VERBS_VENDOR_ID", &ctx->vendor_id);
	if (rc == 0)
		rc = env_u32("UROCE_VERBS_VENDOR_PART_ID", &ctx->vendor_part_id);
	if (rc != 0)
		goto fail_close;

	ctx->vctx.sz = sizeof(ctx->vctx);
	ctx->vctx.query_port = dv_query_port;
	ctx->vctx.query_device_ex = dv_query_device_ex;
	ctx->vctx.create_qp_ex = dv_create_qp_ex;
	ctx->vctx.create_cq_ex = dv_create_cq_ex;
	ctx->vctx.alloc_parent_domain = dv_alloc_parent_domain;
	ctx->vctx.alloc_td = dv_alloc_td;
	ctx->vctx.dealloc_td = dv_dealloc_td;
	/* XRC (IBA 1.2) needs a daemon of shm ABI 1.7. */
	if (uroce_daemon_abi_minor(ctx->uctx) >= 7) {
		ctx->vctx.open_xrcd = dv_open_xrcd;
		ctx->vctx.close_xrcd = dv_close_xrcd;
		ctx->vctx.create_srq_ex = dv_create_srq_ex;
		ctx->vctx.get_srq_num = dv_get_srq_num;
	}
	/* CQ moderation needs 1.8. */
	if (uroce_daemon_abi_minor(ctx->uctx) >= 8)
		ctx->vctx.modify_cq = dv_modify_cq;
	pthread_mutex_init(&ctx->xrcd_lock, NULL);
	c = &ctx->vctx.context;
	c->device = device;
	/* No kernel command channel, but programs dup() or poll cmd_fd (rdma-core's
	 * test_shared_pd dups it before ibv_import_device, which then refuses):
	 * a real descriptor that carries nothing. */
	c->cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (c->cmd_fd < 0) {
		rc = -errno;
		goto fail_close;
	}
	c->async_fd = uroce_async_fd(ctx->uctx);
	c->num_comp_vectors = 1;
	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&c->mutex, NULL);
	/* The data path: called by the verbs.h inlines without a NULL check. */
	c->ops.poll_cq = dv_poll_cq;
	c->ops.req_notify_cq = dv_req_notify_cq;
	c->ops.post_send = dv_post_send;
	c->ops.alloc_mw = dv_alloc_mw;
	c->ops.dealloc_mw = dv_dealloc_mw;
	c->ops.bind_mw = dv_bind_mw;
	c->ops.post_recv = dv_post_recv;
	c->ops.post_srq_recv = dv_post_srq_recv;
	DV_TRACE("open %s (%s): vendor 0x%x part %u, LID 0x%x, active MTU %u", device->name,
		 d->sock_path, ctx->vendor_id, ctx->vendor_part_id, ctx->lid,
		 (unsigned int)ctx->active_mtu);
	return c;
fail_close:
	uroce_close_device(ctx->uctx);
fail:
	free(ctx);
	errno = -rc;
	return NULL;
}

DV_EXPORT int
ibv_close_device(struct ibv_context *c)
{
	struct dv_context *ctx;

	if (c == NULL)
		return EINVAL;
	ctx = dv_ctx(c);
	uroce_close_device(ctx->uctx);
	close(c->cmd_fd);
	pthread_mutex_destroy(&c->mutex);
	free(ctx);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

static void
fill_device_attr(struct dv_context *ctx, struct ibv_device_attr *a)
{
	const struct uroce_device_attr *u = &ctx->dattr;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "uroce %s", UROCE_VERSION);
	a->node_guid = htobe64(u->node_guid);
	a->sys_image_guid = htobe64(u->sys_image_guid != 0 ? u->sys_image_guid : u->node_guid);
	a->max_mr_size = u->max_mr_size;
	a->page_size_cap = u->page_size_cap;
	a->vendor_id = ctx->vendor_id;
	a->vendor_part_id = ctx->vendor_part_id;
	a->hw_ver = u->hw_ver;
	a->max_qp = (int)u->max_qp;
	a->max_qp_wr = (int)u->max_qp_wr;
	/* What uroce does: RNR NAKs, SRQ resize no, port events no. */
	a->device_cap_flags = u->device_cap_flags | IBV_DEVICE_RC_RNR_NAK_GEN;
	a->max_sge = (int)u->max_sge;
	a->max_sge_rd = (int)u->max_sge;
	a->max_cq = (int)u->max_cq;
	a->max_cqe = (int)u->max_cqe;
	a->max_mr = (int)u->max_mr;
	/* Windows and MRs share the daemon's key table. */
	a->max_mw = (u->device_cap_flags & IBV_DEVICE_MEM_WINDOW) ? a->max_mr : 0;
	a->max_pd = (int)u->max_pd;
	a->max_qp_rd_atom = (int)u->max_qp_rd_atom;
	a->max_qp_init_rd_atom = (int)u->max_qp_init_rd_atom;
	a->max_res_rd_atom = (int)(u->max_qp_rd_atom * u->max_qp);
	/* IBV_ATOMIC_HCA even though uroce's atomics are GLOB (also atomic for
	 * the CPU): verbs programs test for HCA exactly, as ConnectX and rxe
	 * report it (UCX's rc_verbs refuses fetch-add otherwise), and HCA
	 * promises less than uroce keeps. doc/conformance.md. */
	a->atomic_cap = u->atomic_cap != UROCE_ATOMIC_NONE ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE;
	a->max_srq = (int)u->max_srq;
	a->max_srq_wr = (int)(u->max_srq_wr != 0 ? u->max_srq_wr : u->max_qp_wr);
	a->max_srq_sge = (int)(u->max_srq_sge != 0 ? u->max_srq_sge : u->max_sge);
	a->max_ah = (int)u->max_ah;
	a->max_pkeys = u->max_pkeys;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = u->phys_port_cnt;
}

DV_EXPORT int
ibv_query_device(struct ibv_context *c, struct ibv_device_attr *attr)
{
	struct dv_context *ctx;
	int rc;

	if (c == NULL || attr == NULL)
		return EINVAL;
	ctx = dv_ctx(c);
	/* Refresh: attributes are the daemon's, which may have restarted. */
	rc = uroce_query_device(ctx->uctx, &ctx->dattr);
	if (rc != 0)
		return -rc;
	fill_device_attr(ctx, attr);
	return 0;
}

/* Extended capability bits of rdma-core's kernel ABI (ib_user_verbs.h). */
#define DV_DEVICE_FLUSH_GLOBAL (1ULL << 38)
#define DV_DEVICE_ATOMIC_WRITE (1ULL << 40)

int
dv_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
		   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex x;
	int rc;

	if (in != NULL && in->comp_mask != 0)
		return EINVAL;
	if (attr_size < sizeof(struct ibv_device_attr))
		return EINVAL;
	memset(&x, 0, sizeof(x));
	rc = ibv_query_device(c, &x.orig_attr);
	if (rc != 0)
		return rc;
	/* IBA 1.5 ATOMIC WRITE and FLUSH GLOBAL (not PERSISTENT: no pmem) come
	 * with shm ABI 1.6 (IB_UVERBS_DEVICE_ATOMIC_WRITE, _FLUSH_GLOBAL: no
	 * IBV_ names exist for these bits). */
	x.device_cap_flags_ex = x.orig_attr.device_cap_flags;
	if (uroce_daemon_abi_minor(dv_ctx(c)->uctx) >= 6)
		x.device_cap_flags_ex |= DV_DEVICE_ATOMIC_WRITE | DV_DEVICE_FLUSH_GLOBAL;
	/* CQ moderation (ibv_modify_cq) with a ConnectX's limits, from 1.8. */
	if (uroce_daemon_abi_minor(dv_ctx(c)->uctx) >= 8) {
		x.cq_mod_caps.max_cq_count = UINT16_MAX;
		x.cq_mod_caps.max_cq_period = UROCE_CQ_PERIOD_MAX;
	}
	/* No ODP, TSO, RSS, packet pacing, tag matching, timestamps: zero. */
	x.max_dm_size = 0;
	x.phys_port_cnt_ex = x.orig_attr.phys_port_cnt;
	memcpy(attr, &x, attr_size < sizeof(x) ? attr_size : sizeof(x));
	return 0;
}

static int
fill_port_attr(struct dv_context *ctx, uint8_t port, struct ibv_port_attr *a)
{
	struct uroce_port_attr u;
	int rc;

	rc = uroce_query_port(ctx->uctx, port, &u);
	if (rc != 0)
		return -rc;
	ctx->active_mtu = (uint8_t)u.active_mtu;
	memset(a, 0, sizeof(*a));
	a->state = (enum ibv_port_state)u.state;
	a->max_mtu = (enum ibv_mtu)u.max_mtu;
	a->active_mtu = (enum ibv_mtu)u.active_mtu;
	a->gid_tbl_len = (int)u.gid_tbl_len;
	/* No IB CM on QP1 yet: IBV_PORT_CM_SUP stays clear. */
	a->port_cap_flags = u.port_cap_flags;
	a->max_msg_sz = u.max_msg_sz;
	a->pkey_tbl_len = u.pkey_tbl_len;
	a->lid = ctx->lid;
	a->max_vl_num = 1;
	a->active_width = u.active_width;
	a->active_speed = u.active_speed;
	a->phys_state = u.phys_state;
	a->link_layer = u.link_layer;
	return 0;
}

int
dv_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr, size_t attr_len)
{
	struct ibv_port_attr a;
	int rc;

	if (c == NULL || attr == NULL)
		return EINVAL;
	rc = fill_port_attr(dv_ctx(c), port, &a);
	if (rc != 0)
		return rc;
	memcpy(attr, &a, attr_len < sizeof(a) ? attr_len : sizeof(a));
	return 0;
}

/* The exported IBVERBS_1.1 symbol takes the 48-byte struct of old headers
 * (struct ibv_port_attr without port_cap_flags2); verbs.h reaches it only
 * for a context that is not extended, which ours never is. */
struct _compat_ibv_port_attr;
DV_EXPORT int ibv_query_port(struct ibv_context *c, uint8_t port,
			     struct _compat_ibv_port_attr *attr);

DV_EXPORT int
ibv_query_port(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	return dv_query_port(c, port, (struct ibv_port_attr *)attr,
			     offsetof(struct ibv_port_attr, port_cap_flags2));
}

/*
 * A program asked for a GID index the port lacks (ibv_rc_pingpong -g 1,
 * perftest -x 1 on a daemon without ports, which has GID 0 only): its own
 * message will be vague, so name the GIDs that exist.
 */
static void
gid_missing(struct dv_context *ctx, int index)
{
	char list[512], a[INET6_ADDRSTRLEN];
	size_t off = 0;
	uint8_t g[16];
	uint32_t type;
	int i;

	list[0] = '\0';
	for (i = 0; i < 16 && off < sizeof(list); i++) {
		if (uroce_query_gid_ex(ctx->uctx, 1, i, g, &type) != 0)
			continue;
		inet_ntop(AF_INET6, g, a, sizeof(a));
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%d %s",
					off ? ", " : "", i, a);
	}
	fprintf(stderr, "uroce-verbs: GID index %d does not exist on port 1 of %s; its GIDs: %s "
		"(a uroced without ports has GID 0 only; doc/operations.md)\n", index,
		ctx->dev->sock_path, off ? list : "none");
}

DV_EXPORT int
ibv_query_gid(struct ibv_context *c, uint8_t port, int index, union ibv_gid *gid)
{
	uint32_t type;
	int rc;

	if (c == NULL || gid == NULL) {
		errno = EINVAL;
		return -1;
	}
	rc = uroce_query_gid_ex(dv_ctx(c)->uctx, port, index, gid->raw, &type);
	if (rc == -EINVAL && port == 1)
		gid_missing(dv_ctx(c), index);
	if (rc != 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

/* Private to rdma-core (ibv_devinfo uses it): the type in sysfs's words,
 * 0 "IB/RoCE v1", 1 "RoCE v2". */
DV_EXPORT int ibv_query_gid_type(struct ibv_context *c, uint8_t port, unsigned int index,
				 int *type);

DV_EXPORT int
ibv_query_gid_type(struct ibv_context *c, uint8_t port, unsigned int index, int *type)
{
	uint8_t g[16];
	uint32_t t;
	int rc;

	if (c == NULL || type == NULL || index > INT32_MAX) {
		errno = EINVAL;
		return -1;
	}
	rc = uroce_query_gid_ex(dv_ctx(c)->uctx, port, (int)index, g, &t);
	if (rc != 0) {
		errno = -rc;
		return -1;
	}
	*type = t == 1 ? 1 : 0;
	return 0;
}

static bool
gid_is_zero(const uint8_t g[16])
{
	static const uint8_t z[16];

	return memcmp(g, z, 16) == 0;
}

/* One GID entry: 0, or a positive errno (ENODATA for an empty slot). */
static int
gid_entry(struct dv_context *ctx, uint8_t port, uint32_t index, struct ibv_gid_entry *e)
{
	uint32_t t;
	int rc;

	memset(e, 0, sizeof(*e));
	rc = uroce_query_gid_ex(ctx->uctx, port, (int)index, e->gid.raw, &t);
	if (rc != 0)
		return -rc;
	if (gid_is_zero(e->gid.raw))
		return ENODATA;
	e->gid_index = index;
	e->port_num = port;
	e->gid_type = t == 1 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
	e->ndev_ifindex = 0; /* the port is a DPDK port, not a kernel netdev */
	return 0;
}

DV_EXPORT int
_ibv_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	int rc;

	if (c == NULL || entry == NULL || flags != 0 || port > 255 || index > INT32_MAX ||
	    entry_size < sizeof(e))
		return EINVAL;
	rc = gid_entry(dv_ctx(c), (uint8_t)port, index, &e);
	if (rc == 0)
		memcpy(entry, &e, sizeof(e));
	return rc;
}

DV_EXPORT ssize_t
_ibv_query_gid_table(struct ibv_context *c, struct ibv_gid_entry *entries, size_t max_entries,
		     uint32_t flags, size_t entry_size)
{
	struct dv_context *ctx;
	struct ibv_port_attr pa;
	size_t n = 0;
	uint32_t i;
	int rc;

	if (c == NULL || (entries == NULL && max_entries > 0) || flags != 0 ||
	    entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	ctx = dv_ctx(c);
	rc = fill_port_attr(ctx, 1, &pa);
	if (rc != 0)
		return -rc;
	for (i = 0; i < (uint32_t)pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		rc = gid_entry(ctx, 1, i, &e);
		if (rc == ENODATA)
			continue;
		if (rc != 0)
			return -rc;
		if (n == max_entries)
			return -EINVAL; /* as rdma-core: the array is too small */
		memcpy((uint8_t *)entries + n * entry_size, &e, sizeof(e));
		n++;
	}
	return (ssize_t)n;
}

DV_EXPORT int
ibv_query_pkey(struct ibv_context *c, uint8_t port, int index, __be16 *pkey)
{
	if (c == NULL || pkey == NULL || port != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(0xffff); /* RoCE: the default full-member P_Key only */
	return 0;
}

DV_EXPORT int
ibv_get_pkey_index(struct ibv_context *c, uint8_t port, __be16 pkey)
{
	if (c == NULL || port != 1 || be16toh(pkey) != 0xffff) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Address vectors                                                           */
/* ------------------------------------------------------------------------ */

int
dv_ah_attr_to_uroce(struct dv_context *ctx, const struct ibv_ah_attr *in,
		    struct uroce_ah_attr *out)
{
	memset(out, 0, sizeof(*out));
	out->sl = in->sl;
	out->port_num = in->port_num != 0 ? in->port_num : 1;
	if (in->is_global) {
		memcpy(out->dgid, in->grh.dgid.raw, 16);
		/* A flow label is 20 bits; more is taken as "none chosen" (UCX
		 * passes all ones), as providers ignore the upper bits. */
		out->flow_label = in->grh.flow_label <= 0xfffff ? in->grh.flow_label : 0;
		out->hop_limit = in->grh.hop_limit;
		out->traffic_class = in->grh.traffic_class;
		out->sgid_index = in->grh.sgid_index;
		return 0;
	}
	/* RoCE needs a GRH; a LID-only vector is routed by the emulated LID:
	 * the IPv4-mapped GID with our /16 prefix and the LID as the rest. */
	if (ctx->ipv4_gid_index < 0 || in->dlid == 0 || in->dlid >= 0xC000)
		return EINVAL;
	out->dgid[10] = 0xff;
	out->dgid[11] = 0xff;
	out->dgid[12] = ctx->ipv4_prefix[0];
	out->dgid[13] = ctx->ipv4_prefix[1];
	out->dgid[14] = (uint8_t)(in->dlid >> 8);
	out->dgid[15] = (uint8_t)in->dlid;
	out->hop_limit = 64;
	out->sgid_index = (uint8_t)ctx->ipv4_gid_index;
	return 0;
}

void
dv_ah_attr_from_uroce(struct dv_context *ctx, const struct uroce_ah_attr *in,
		      struct ibv_ah_attr *out)
{
	memset(out, 0, sizeof(*out));
	out->is_global = 1;
	memcpy(out->grh.dgid.raw, in->dgid, 16);
	out->grh.flow_label = in->flow_label;
	out->grh.hop_limit = in->hop_limit;
	out->grh.traffic_class = in->traffic_class;
	out->grh.sgid_index = in->sgid_index;
	out->sl = in->sl;
	out->port_num = in->port_num;
	if (ctx->ipv4_gid_index >= 0 && gid_is_ipv4_mapped(in->dgid) &&
	    in->dgid[12] == ctx->ipv4_prefix[0] && in->dgid[13] == ctx->ipv4_prefix[1])
		out->dlid = (uint16_t)(in->dgid[14] << 8 | in->dgid[15]);
}

DV_EXPORT struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct uroce_ah_attr ua;
	struct dv_ah *ah;
	int rc;

	if (pd == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	rc = dv_ah_attr_to_uroce(dv_ctx(pd->context), attr, &ua);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return NULL;
	ah->uah = uroce_create_ah(((struct dv_pd *)pd)->upd, &ua);
	if (ah->uah == NULL) {
		int err = errno;

		DV_TRACE("create_ah global %d sgid %u hop %u tclass %u flow 0x%x port %u: %s",
			 attr->is_global, ua.sgid_index, ua.hop_limit, ua.traffic_class,
			 ua.flow_label, ua.port_num, strerror(err));
		free(ah);
		errno = err;
		return NULL;
	}
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	ah->ah.handle = ah->uah->handle;
	return &ah->ah;
}

DV_EXPORT int
ibv_destroy_ah(struct ibv_ah *ah)
{
	struct dv_ah *a = (struct dv_ah *)ah;
	int rc;

	if (ah == NULL)
		return EINVAL;
	rc = uroce_destroy_ah(a->uah);
	if (rc != 0 && rc != -ENOTCONN)
		return -rc;
	free(a);
	return 0;
}

/* Index of the local GID equal to @p gid, or -1. */
static int
local_gid_index(struct dv_context *ctx, uint8_t port, const uint8_t gid[16])
{
	struct uroce_port_attr pa;
	uint32_t i, t;

	if (uroce_query_port(ctx->uctx, port, &pa) != 0)
		return -1;
	for (i = 0; i < pa.gid_tbl_len && i < DV_MAX_GIDS; i++) {
		uint8_t g[16];

		if (uroce_query_gid_ex(ctx->uctx, port, (int)i, g, &t) == 0 && memcmp(g, gid, 16) == 0)
			return (int)i;
	}
	return -1;
}

/*
 * The address vector back to the sender of a UD datagram (IBA 11.4.1.2: the
 * GRH is the first 40 bytes of the receive buffer). On RoCEv2 over IPv4 the
 * 40 bytes hold the IPv4 header in their last 20, as every Linux RDMA
 * provider writes them (uroce's responder too); otherwise an IPv6 header.
 */
DV_EXPORT int
ibv_init_ah_from_wc(struct ibv_context *c, uint8_t port, struct ibv_wc *wc, struct ibv_grh *grh,
		    struct ibv_ah_attr *ah)
{
	const uint8_t *h = (const uint8_t *)grh;
	uint8_t sgid[16] = {0}, dgid[16] = {0};
	struct dv_context *ctx;
	int idx;

	if (c == NULL || wc == NULL || grh == NULL || ah == NULL || !(wc->wc_flags & IBV_WC_GRH)) {
		errno = EINVAL;
		return -1;
	}
	ctx = dv_ctx(c);
	memset(ah, 0, sizeof(*ah));
	if (h[20] == 0x45) {
		sgid[10] = sgid[11] = 0xff;
		dgid[10] = dgid[11] = 0xff;
		memcpy(sgid + 12, h + 20 + 12, 4);
		memcpy(dgid + 12, h + 20 + 16, 4);
		ah->grh.traffic_class = h[21];
	} else if ((h[0] >> 4) == 6) {
		memcpy(sgid, h + 8, 16);
		memcpy(dgid, h + 24, 16);
		ah->grh.traffic_class = (uint8_t)((h[0] & 0xf) << 4 | h[1] >> 4);
		ah->grh.flow_label = (uint32_t)(h[1] & 0xf) << 16 | (uint32_t)h[2] << 8 | h[3];
	} else {
		errno = EINVAL;
		return -1;
	}
	idx = local_gid_index(ctx, port, dgid);
	if (idx < 0) {
		errno = ENOENT;
		return -1;
	}
	ah->is_global = 1;
	memcpy(ah->grh.dgid.raw, sgid, 16);
	ah->grh.sgid_index = (uint8_t)idx;
	ah->grh.hop_limit = 0xff;
	ah->dlid = wc->slid;
	ah->sl = wc->sl;
	ah->port_num = port;
	return 0;
}

DV_EXPORT struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port)
{
	struct ibv_ah_attr a;

	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (ibv_init_ah_from_wc(pd->context, port, wc, grh, &a) != 0)
		return NULL;
	return ibv_create_ah(pd, &a);
}

DV_EXPORT int
ibv_resolve_eth_l2_from_gid(struct ibv_context *c, struct ibv_ah_attr *attr, uint8_t eth_mac[6],
			    uint16_t *vid)
{
	(void)c;
	(void)attr;
	(void)eth_mac;
	(void)vid;
	/* uroced resolves neighbours itself (ARP/ND); no MAC is exposed. */
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* ------------------------------------------------------------------------ */
/* Asynchronous events                                                       */
/* ------------------------------------------------------------------------ */

DV_EXPORT int
ibv_get_async_event(struct ibv_context *c, struct ibv_async_event *event)
{
	struct uroce_async_event u;
	int rc;

	if (c == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	rc = uroce_get_async_event(dv_ctx(c)->uctx, &u);
	if (rc != 0) {
		errno = -rc;
		return -1;
	}
	memset(event, 0, sizeof(*event));
	event->event_type = (enum ibv_event_type)u.event_type;
	switch (u.event_type) {
	case UROCE_ASYNC_CQ_ERR:
		event->element.cq = (struct ibv_cq *)uroce_cq_context(u.element.cq);
		break;
	case UROCE_ASYNC_SRQ_ERR:
	case UROCE_ASYNC_SRQ_LIMIT_REACHED:
		event->element.srq = (struct ibv_srq *)u.element.srq->srq_context;
		break;
	case UROCE_ASYNC_DEVICE_FATAL:
		break;
	case UROCE_ASYNC_PORT_ACTIVE:
	case UROCE_ASYNC_PORT_ERR:
	case UROCE_ASYNC_LID_CHANGE:
	case UROCE_ASYNC_PKEY_CHANGE:
	case UROCE_ASYNC_SM_CHANGE:
	case UROCE_ASYNC_CLIENT_REREGISTER:
	case UROCE_ASYNC_GID_CHANGE:
		event->element.port_num = 1;
		break;
	default:
		event->element.qp = (struct ibv_qp *)u.element.qp->qp_context;
		break;
	}
	return 0;
}

DV_EXPORT void
ibv_ack_async_event(struct ibv_async_event *event)
{
	struct uroce_async_event u;

	if (event == NULL)
		return;
	memset(&u, 0, sizeof(u));
	u.event_type = event->event_type;
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR:
		u.element.cq = ((struct dv_cq *)event->element.cq)->ucq;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		u.element.srq = ((struct dv_srq *)event->element.srq)->usrq;
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		u.element.qp = ((struct dv_qp *)event->element.qp)->uqp;
		break;
	default:
		return; /* nothing is counted for device and port events */
	}
	uroce_ack_async_event(&u);
}

/* ------------------------------------------------------------------------ */
/* Strings and rates                                                         */
/* ------------------------------------------------------------------------ */

DV_EXPORT const char *
ibv_node_type_str(enum ibv_node_type t)
{
	switch (t) {
	case IBV_NODE_CA: return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH: return "InfiniBand switch";
	case IBV_NODE_ROUTER: return "InfiniBand router";
	case IBV_NODE_RNIC: return "iWARP NIC";
	case IBV_NODE_USNIC: return "usNIC";
	case IBV_NODE_USNIC_UDP: return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED: return "unspecified";
	default: return "unknown";
	}
}

DV_EXPORT const char *
ibv_port_state_str(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_NOP: return "PORT_NOP";
	case IBV_PORT_DOWN: return "PORT_DOWN";
	case IBV_PORT_INIT: return "PORT_INIT";
	case IBV_PORT_ARMED: return "PORT_ARMED";
	case IBV_PORT_ACTIVE: return "PORT_ACTIVE";
	case IBV_PORT_ACTIVE_DEFER: return "PORT_ACTIVE_DEFER";
	default: return "invalid state";
	}
}

DV_EXPORT const char *
ibv_event_type_str(enum ibv_event_type e)
{
	static const char *const names[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	if ((unsigned int)e < sizeof(names) / sizeof(names[0]) && names[e] != NULL)
		return names[e];
	return "unknown";
}

DV_EXPORT const char *
ibv_wc_status_str(enum ibv_wc_status s)
{
	/* The statuses a uroce CQE can carry share liburoce's table; tag
	 * matching's are libibverbs' own. */
	if (s == IBV_WC_TM_ERR)
		return "TM error";
	if (s == IBV_WC_TM_RNDV_INCOMPLETE)
		return "TM software rendezvous";
	return uroce_wc_status_str((uint32_t)s);
}

/* Each rate: its enum, its multiple of 2.5 Gb/s (0: none), and Mb/s. */
static const struct {
	enum ibv_rate rate;
	int mult;
	int mbps;
} dv_rates[] = {
	{IBV_RATE_2_5_GBPS, 1, 2500},     {IBV_RATE_5_GBPS, 2, 5000},
	{IBV_RATE_10_GBPS, 4, 10000},     {IBV_RATE_20_GBPS, 8, 20000},
	{IBV_RATE_30_GBPS, 12, 30000},    {IBV_RATE_40_GBPS, 16, 40000},
	{IBV_RATE_60_GBPS, 24, 60000},    {IBV_RATE_80_GBPS, 32, 80000},
	{IBV_RATE_120_GBPS, 48, 120000},  {IBV_RATE_14_GBPS, 0, 14062},
	{IBV_RATE_56_GBPS, 0, 56250},     {IBV_RATE_112_GBPS, 0, 112500},
	{IBV_RATE_168_GBPS, 0, 168750},   {IBV_RATE_25_GBPS, 0, 25781},
	{IBV_RATE_100_GBPS, 0, 103125},   {IBV_RATE_200_GBPS, 0, 206250},
	{IBV_RATE_300_GBPS, 0, 309375},   {IBV_RATE_28_GBPS, 0, 28125},
	{IBV_RATE_50_GBPS, 0, 53125},     {IBV_RATE_400_GBPS, 0, 425000},
	{IBV_RATE_600_GBPS, 0, 637500},   {IBV_RATE_800_GBPS, 0, 850000},
	{IBV_RATE_1200_GBPS, 0, 1275000},
};
#define DV_NRATES (sizeof(dv_rates) / sizeof(dv_rates[0]))

DV_EXPORT int
ibv_rate_to_mult(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < DV_NRATES; i++)
		if (dv_rates[i].rate == rate && dv_rates[i].mult != 0)
			return dv_rates[i].mult;
	return -1;
}

DV_EXPORT enum ibv_rate
mult_to_ibv_rate(int mult)
{
	size_t i;

	for (i = 0; i < DV_NRATES; i++)
		if (dv_rates[i].mult == mult && mult != 0)
			return dv_rates[i].rate;
	return IBV_RATE_MAX;
}

DV_EXPORT int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < DV_NRATES; i++)
		if (dv_rates[i].rate == rate)
			return dv_rates[i].mbps;
	return -1;
}

DV_EXPORT enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	size_t i;

	for (i = 0; i < DV_NRATES; i++)
		if (dv_rates[i].mbps == mbps)
			return dv_rates[i].rate;
	return IBV_RATE_MAX;
}

/* ------------------------------------------------------------------------ */
/* fork, sysfs                                                               */
/* ------------------------------------------------------------------------ */

/* liburoce marks every re-backed range MADV_DONTFORK while it is registered
 * (doc/verbs.md), which is what ibv_fork_init() asks for. */
DV_EXPORT int
ibv_fork_init(void)
{
	return 0;
}

DV_EXPORT enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_ENABLED;
}

static int
madvise_range(void *base, size_t size, int advice)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)base & ~((uintptr_t)pg - 1);
	uintptr_t end = ((uintptr_t)base + size + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);

	if (size == 0)
		return 0;
	return madvise((void *)start, end - start, advice) == 0 ? 0 : errno;
}

/* Not in verbs.h; libmlx5 imports them. */
DV_EXPORT int ibv_dontfork_range(void *base, size_t size);
DV_EXPORT int ibv_dofork_range(void *base, size_t size);

DV_EXPORT int
ibv_dontfork_range(void *base, size_t size)
{
	return madvise_range(base, size, MADV_DONTFORK);
}

DV_EXPORT int
ibv_dofork_range(void *base, size_t size)
{
	return madvise_range(base, size, MADV_DOFORK);
}

/* There is no kernel device, so no sysfs: the helpers find nothing. */
DV_EXPORT const char *ibv_get_sysfs_path(void);
DV_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
DV_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size, const char *fmt, ...);

DV_EXPORT const char *
ibv_get_sysfs_path(void)
{
	return "/sys";
}

DV_EXPORT int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	(void)dir;
	(void)file;
	(void)buf;
	(void)size;
	errno = ENOENT;
	return -1;
}

DV_EXPORT int
ibv_read_ibdev_sysfs_file(char *buf, size_t size, const char *fmt, ...)
{
	(void)buf;
	(void)size;
	(void)fmt;
	errno = ENOENT;
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Entry points of rdma-core's provider interface (IBVERBS_PRIVATE_*)        */
/* ------------------------------------------------------------------------ */

/*
 * libmlx5 and libefa, which perftest links with BIND_NOW, register
 * themselves from their constructors; nothing here ever loads a provider, so
 * the registration is ignored. Their other private imports are generated
 * stubs (abi_stubs.c) that fail with EOPNOTSUPP: they are reachable only
 * through the providers' own objects, which this library never creates.
 */
DV_EXPORT void verbs_register_driver_34(const void *ops);
DV_EXPORT void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

DV_EXPORT void
verbs_register_driver_34(const void *ops)
{
	(void)ops;
	DV_TRACE("provider registration ignored");
}

DV_EXPORT void
__verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
{
	va_list ap;

	(void)ctx;
	(void)level;
	if (!dv_trace_on)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
