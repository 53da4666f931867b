/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * `uroced --check`: a preflight that reports, line by line, on memory
 * (hugepages or --no-huge), the control socket path, worker lcores, each
 * port (found, queues, MTU, MAC, link), its addresses and its GID table.
 * Every line starts with OK, WARN or FAIL; WARN and FAIL lines end with
 * advice. Ports are really configured and started, as the daemon would, so
 * a port that passes here also starts. Also the daemon's own socket and
 * hugepage housekeeping: its socket directory, the probe of a live socket,
 * and the release of its hugepage files at a clean stop.
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <libgen.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "dp_internal.h"

static void
line(FILE *out, int *fails, const char *tag, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
line(FILE *out, int *fails, const char *tag, const char *fmt, ...)
{
	va_list ap;

	if (strcmp(tag, "FAIL") == 0)
		(*fails)++;
	fprintf(out, "%-4s  ", tag);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

static long
meminfo(const char *key)
{
	char l[128];
	long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL)
		return -1;
	while (fgets(l, sizeof(l), f) != NULL)
		if (strncmp(l, key, n) == 0 && l[n] == ':')
			v = strtol(l + n + 1, NULL, 10);
	fclose(f);
	return v;
}

static bool
hugetlbfs_mounted(char *where, size_t len)
{
	char dev[128], dir[256], type[64];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	if (f == NULL)
		return false;
	while (fscanf(f, "%127s %255s %63s %*[^\n]", dev, dir, type) == 3) {
		if (strcmp(type, "hugetlbfs") == 0) {
			snprintf(where, len, "%s", dir);
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Free hugepages of every size, from sysfs; -1 if sysfs cannot be read. */
static long
hugepages_free_all(long *total)
{
	static const char *const sizes[] = {"hugepages-2048kB", "hugepages-1048576kB"};
	char path[128];
	long sum = 0, v;
	bool any = false;
	unsigned int i;
	FILE *f;

	*total = 0;
	for (i = 0; i < UROCE_ARRAY_SIZE(sizes); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/free_hugepages",
			 sizes[i]);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%ld", &v) == 1) {
			sum += v;
			any = true;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/nr_hugepages",
			 sizes[i]);
		f = fopen(path, "r");
		if (f != NULL) {
			if (fscanf(f, "%ld", &v) == 1)
				*total += v;
			fclose(f);
		}
	}
	return any ? sum : -1;
}

int
uroce_dp_memory_precheck(const struct uroce_dp_config *cfg, char *err, size_t errlen)
{
	long total, freep;
	char mnt[256];

	if (cfg->no_huge)
		return 0;
	freep = hugepages_free_all(&total);
	if (freep < 0)
		return 0; /* cannot tell: let EAL decide */
	if (total == 0) {
		snprintf(err, errlen, "no hugepages reserved: run 'dpdk-hugepages.py -p 2M --setup "
			 "512M' as root, or start with --no-huge");
		return -ENOMEM;
	}
	if (freep == 0) {
		snprintf(err, errlen, "all %ld hugepages are in use (another DPDK process?): free "
			 "some, reserve more (dpdk-hugepages.py --reserve), or use --no-huge",
			 total);
		return -ENOMEM;
	}
	if (!hugetlbfs_mounted(mnt, sizeof(mnt))) {
		snprintf(err, errlen, "%ld hugepages reserved but hugetlbfs is not mounted: as root, "
			 "'mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages'",
			 total);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Why a clean stop has to do this (issue 21.5): DPDK 22.11's EAL gives a
 * hugepage back only when a free empties it after the page was marked
 * freeable, and it marks the pages preallocated by -m (memory =) freeable
 * only inside rte_eal_cleanup(), after uroced has freed its mempools, rings
 * and tables; rte_eal_cleanup() then unmaps the memory and leaves the files
 * (and the pages, which a hugetlbfs file holds) in place. The libraries also
 * keep a few allocations to the end (pdump's statistics, ethdev's port
 * data, memif's socket table). So the daemon removes its own files last,
 * while EAL still holds the prefix (no other primary can have it): the
 * mappings live until the process exits, then the pages are free. EAL does
 * the same to a prefix's files when a primary with it starts.
 */
int
uroce_dp_hugepages_release(const struct uroce_dp_config *cfg)
{
	char dev[128], dir[256], type[64], rt[PATH_MAX];
	size_t plen = strlen(cfg->file_prefix);
	const char *eal_prefix;
	struct dirent *e;
	int n = 0;
	FILE *f;
	DIR *d;

	if (cfg->no_huge || cfg->in_memory || plen == 0)
		return 0;
	/* Only the prefix EAL really uses: the name of its runtime directory. */
	snprintf(rt, sizeof(rt), "%s", rte_eal_get_runtime_dir());
	eal_prefix = strrchr(rt, '/') != NULL ? strrchr(rt, '/') + 1 : rt;
	if (strcmp(eal_prefix, cfg->file_prefix) != 0)
		return -ESRCH;
	f = fopen("/proc/mounts", "r");
	if (f == NULL)
		return -errno;
	while (fscanf(f, "%127s %255s %63s %*[^\n]", dev, dir, type) == 3) {
		if (strcmp(type, "hugetlbfs") != 0 || (d = opendir(dir)) == NULL)
			continue;
		while ((e = readdir(d)) != NULL) {
			const char *t = e->d_name + plen;

			/* EAL's name for a page file: <prefix>map_<n> */
			if (strncmp(e->d_name, cfg->file_prefix, plen) != 0 ||
			    strncmp(t, "map_", 4) != 0 || t[4] == '\0' ||
			    strspn(t + 4, "0123456789") != strlen(t + 4))
				continue;
			if (unlinkat(dirfd(d), e->d_name, 0) == 0)
				n++;
		}
		closedir(d);
	}
	fclose(f);
	return n;
}

static void
check_memory(const struct uroce_dp_config *cfg, FILE *out, int *fails)
{
	long total = meminfo("HugePages_Total"), freep = meminfo("HugePages_Free");
	long size_kb = meminfo("Hugepagesize");
	char mnt[256];

	if (cfg->no_huge) {
		line(out, fails, "OK", "memory: --no-huge, %u MB of ordinary memory (dpdk-dumpcap "
		     "and other secondary processes cannot attach without hugepages)",
		     cfg->memory_mb ? cfg->memory_mb : 256);
		return;
	}
	if (total <= 0) {
		line(out, fails, "FAIL", "hugepages: none reserved (HugePages_Total = 0); run "
		     "'dpdk-hugepages.py -p 2M --setup 512M' as root, or start with --no-huge");
		return;
	}
	if (freep <= 0) {
		line(out, fails, "FAIL", "hugepages: all %ld in use; stop what holds them "
		     "(another DPDK process?) or reserve more with dpdk-hugepages.py --reserve",
		     total);
		return;
	}
	if (!hugetlbfs_mounted(mnt, sizeof(mnt))) {
		line(out, fails, "FAIL", "hugepages: %ld reserved but no hugetlbfs is mounted; as root, "
		     "'mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages'",
		     total);
		return;
	}
	line(out, fails, "OK", "hugepages: %ld of %ld free (%ld kB each), hugetlbfs at %s",
	     freep, total, size_kb, mnt);
}

int
uroce_dp_socket_live(const char *path)
{
	struct sockaddr_un sa;
	int fd, rc;

	if (path == NULL || strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* The daemon listens on SOCK_SEQPACKET (lib/daemon): a probe of any
	 * other type is refused with EPROTOTYPE even by a live daemon. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	rc = rc == 0 ? 1 : errno == ECONNREFUSED || errno == ENOENT ? 0 : -errno;
	close(fd);
	return rc;
}

/* The nearest existing ancestor of directory @dir, in @anc. */
static void
existing_ancestor(const char *dir, char *anc, size_t len)
{
	struct stat st;
	char *slash;

	snprintf(anc, len, "%s", dir);
	while (stat(anc, &st) != 0 && (slash = strrchr(anc, '/')) != NULL) {
		if (slash == anc) {
			anc[1] = '\0';
			break;
		}
		*slash = '\0';
	}
}

int
uroce_dp_socket_dir(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct stat st;
	char *p;
	int rc;

	if (path == NULL || path[0] != '/' || strlen(path) >= sizeof(dir)) {
		snprintf(err, errlen, "control socket %s: not an absolute path of at most %zu "
			 "characters", path != NULL ? path : "(none)", sizeof(dir) - 1);
		return -EINVAL;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	p = strrchr(dir, '/');
	if (p == dir)
		return 0; /* a socket in / */
	*p = '\0';
	/* mkdir -p: each missing directory from the top down, 0755 whatever
	 * the umask, so that clients of other users can reach the socket
	 * (its own socket_mode decides who may connect). */
	for (p = dir + 1;; p++) {
		bool last = *p == '\0';

		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) == 0) {
			rc = chmod(dir, 0755);
		} else if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
			rc = 0; /* there already: left as it is */
		} else {
			rc = -1;
			if (errno == EEXIST)
				errno = ENOTDIR;
		}
		if (rc != 0) {
			rc = -errno;
			snprintf(err, errlen, "control socket %s: cannot create its directory %s: "
				 "%s (%s)", path, dir, strerror(-rc),
				 rc == -ENOTDIR ? "something that is not a directory is in the way; "
				 "choose another --socket" : rc == -EACCES || rc == -EPERM ?
				 "run uroced as root, or give a --socket in a directory you may "
				 "write" : "choose another --socket");
			return rc;
		}
		if (last)
			break;
		*p = '/';
	}
	return 0;
}

static void
check_socket(const struct uroce_dp_config *cfg, FILE *out, int *fails)
{
	char path[sizeof(cfg->socket_path)], dir[sizeof(cfg->socket_path)];
	char anc[sizeof(cfg->socket_path)];
	struct stat st;
	int live;

	snprintf(path, sizeof(path), "%s", cfg->socket_path);
	snprintf(dir, sizeof(dir), "%s", dirname(path));
	if (stat(dir, &st) != 0) {
		/* uroced creates it; will it be able to? */
		existing_ancestor(dir, anc, sizeof(anc));
		if (stat(anc, &st) != 0 || !S_ISDIR(st.st_mode))
			line(out, fails, "FAIL", "socket %s: directory %s cannot be created: %s is "
			     "not a directory; choose another [daemon] socket", cfg->socket_path,
			     dir, anc);
		else if (access(anc, W_OK | X_OK) != 0)
			line(out, fails, "FAIL", "socket %s: directory %s cannot be created: %s is "
			     "not writable by this user (run as root)", cfg->socket_path, dir, anc);
		else
			line(out, fails, "OK", "socket %s: directory %s does not exist; uroced "
			     "creates it (mode 0755)", cfg->socket_path, dir);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		line(out, fails, "FAIL", "socket %s: %s is not a directory; choose another "
		     "[daemon] socket", cfg->socket_path, dir);
		return;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		line(out, fails, "FAIL", "socket %s: directory %s is not writable by this user",
		     cfg->socket_path, dir);
		return;
	}
	if (lstat(cfg->socket_path, &st) != 0) {
		line(out, fails, "OK", "socket %s: free (mode %04o)", cfg->socket_path,
		     cfg->socket_mode);
		return;
	}
	if (!S_ISSOCK(st.st_mode)) {
		line(out, fails, "FAIL", "socket %s: exists and is not a socket; remove it or "
		     "choose another [daemon] socket", cfg->socket_path);
		return;
	}
	live = uroce_dp_socket_live(cfg->socket_path);
	if (live == 1)
		line(out, fails, "FAIL", "socket %s: address already in use: another uroced "
		     "listens there; stop it or choose another [daemon] socket",
		     cfg->socket_path);
	else if (live == 0)
		line(out, fails, "WARN", "socket %s: stale socket file (nobody listens); "
		     "uroced will replace it", cfg->socket_path);
	else if (live == -EPROTOTYPE)
		line(out, fails, "FAIL", "socket %s: something other than uroced listens there (a "
		     "socket of another type); stop it or choose another [daemon] socket",
		     cfg->socket_path);
	else
		line(out, fails, "WARN", "socket %s: cannot tell whether a daemon listens there: "
		     "%s", cfg->socket_path, strerror(-live));
}

/* Does the kernel hold @gid on some interface? Then two stacks would answer. */
static bool
kernel_has_addr(const uint8_t gid[16], bool v4, char *ifname, size_t len)
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa) != 0)
		return false;
	for (i = ifa; i != NULL && !found; i = i->ifa_next) {
		if (i->ifa_addr == NULL)
			continue;
		if (v4 && i->ifa_addr->sa_family == AF_INET)
			found = memcmp(&((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr,
				       gid + 12, 4) == 0;
		else if (!v4 && i->ifa_addr->sa_family == AF_INET6)
			found = memcmp(&((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr,
				       gid, 16) == 0;
		if (found)
			snprintf(ifname, len, "%s", i->ifa_name);
	}
	freeifaddrs(ifa);
	return found;
}

static void
check_port(struct uroce_dp *dp, struct dp_port *p, FILE *out, int *fails)
{
	const struct uroce_dp_port_cfg *c = &p->cfg;
	struct rte_eth_dev_info info;
	struct rte_eth_link link;
	char buf[64], ifn[64];
	uint64_t until;
	unsigned int i;

	rte_eth_dev_info_get(p->port_id, &info);
	line(out, fails, "OK", "[%s] %s: ethdev port %u, driver %s, NUMA node %d, %u RX/TX "
	     "queue pair(s) for %u worker(s)", c->section, c->device, p->port_id,
	     info.driver_name, p->socket, dp->n_workers, dp->n_workers);
	line(out, fails, "OK", "[%s] mtu %u (device range %u..%u)%s", c->section, p->mtu,
	     info.min_mtu, info.max_mtu,
	     p->mtu < 1024 + 64 ? "; below 1088 only path MTU 256 and 512 fit" : "");
	line(out, fails, "OK", "[%s] mac %02x:%02x:%02x:%02x:%02x:%02x%s", c->section,
	     p->mac[0], p->mac[1], p->mac[2], p->mac[3], p->mac[4], p->mac[5],
	     p->promisc ? " (device cannot change its MAC: promiscuous, filtered in software)"
			: "");
	if (rte_eth_dev_start(p->port_id) != 0) {
		line(out, fails, "FAIL", "[%s] %s: the device does not start; see the EAL log "
		     "above", c->section, c->device);
	} else {
		until = rte_get_tsc_cycles() + rte_get_tsc_hz() * 2;
		do {
			memset(&link, 0, sizeof(link));
			rte_eth_link_get_nowait(p->port_id, &link);
			if (link.link_status)
				break;
			rte_delay_ms(50);
		} while (rte_get_tsc_cycles() < until);
		if (link.link_status)
			line(out, fails, "OK", "[%s] link up, %u Mb/s", c->section,
			     link.link_speed);
		else
			line(out, fails, "WARN", "[%s] link down after 2 s: check the cable or "
			     "peer (memif: the other side must run; af_packet/tap: 'ip link set "
			     "<iface> up')", c->section);
		rte_eth_dev_stop(p->port_id);
	}
	if (c->has_ipv4 && kernel_has_addr(p->v4gid, true, ifn, sizeof(ifn)))
		line(out, fails, "WARN", "[%s] ipv4: the kernel also holds this address on %s; "
		     "both would answer ARP: remove it there (ip addr del)", c->section, ifn);
	if (c->has_ipv6 && kernel_has_addr(c->ipv6, false, ifn, sizeof(ifn)))
		line(out, fails, "WARN", "[%s] ipv6: the kernel also holds this address on %s; "
		     "remove it there (ip -6 addr del)", c->section, ifn);
	for (i = 0; i < p->n_gid; i++) {
		uroce_dp_gid_str(p->gid[i], buf, sizeof(buf));
		line(out, fails, "OK", "[%s] gid %u %s%s", c->section, i, buf,
		     i == 0 ? " (link-local, EUI-64 of the MAC)" : "");
	}
}

int
uroce_dp_check(const struct uroce_dp_config *cfg, bool eal_ok, FILE *out)
{
	struct uroce_dp *dp;
	char err[UROCE_DP_ERR_LEN];
	int fails = 0;
	unsigned int i;

	line(out, &fails, "OK", "config: %s, %u port(s)", cfg->file[0] ? cfg->file : "(none)",
	     cfg->n_ports);
	check_memory(cfg, out, &fails);
	check_socket(cfg, out, &fails);
	if (!eal_ok) {
		line(out, &fails, "FAIL", "EAL did not start: ports, links and GIDs not checked");
		return fails;
	}
	line(out, &fails, "OK", "lcores: main %u, %u worker(s)", rte_get_main_lcore(),
	     rte_lcore_count() - 1);
	if (cfg->n_ports == 0) {
		line(out, &fails, "WARN", "no [port.*] section: uroced serves loopback only; add "
		     "a port with device/vdev and ipv4/ipv6 to reach peers");
		return fails;
	}
	dp = uroce_dp_create(cfg, err, sizeof(err));
	if (dp == NULL) {
		line(out, &fails, "FAIL", "%s", err);
		return fails;
	}
	for (i = 0; i < dp->n_ports; i++)
		check_port(dp, &dp->ports[i], out, &fails);
	uroce_dp_destroy(dp);
	return fails;
}
