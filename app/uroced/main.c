/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroced: the uroce daemon's main. Options and config file, EAL start,
 * the control socket, the dataplane, signals and an orderly shutdown.
 * Everything that touches packets lives in lib/dataplane.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_pdump.h>

#include "uroce_cli.h"
#include "uroce_common.h"
#include "uroce_dataplane.h"
#include "uroce_net.h"
#include "uroced.h"

#define PROG "uroced"
#define EAL_ARGV_MAX 96
/* Longest wait of the idle control thread (ms): how late a neighbour timer
 * may run after idle, against 1000 wake-ups a second. */
#define CTL_IDLE_MAX_MS 100

/* CLOCK_MONOTONIC in ms: the control loop's idle time. */
static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static volatile sig_atomic_t quit_signal;

static void
on_signal(int sig)
{
	quit_signal = sig;
}

static void
usage(FILE *out)
{
	fprintf(out,
		"Usage: " PROG " [options] [-- EAL arguments]\n"
		"  -c, --config FILE      INI configuration file (see config/uroced.conf)\n"
		"      --check            preflight: hugepages, ports, link, MTU, addresses,\n"
		"                         GIDs and socket path; exit status = problems found\n"
		"  -l, --lcores LIST      EAL lcores; the first is the control thread, the\n"
		"                         others are workers (e.g. 0,1)\n"
		"      --vdev ARGS        add a virtual device (repeatable)\n"
		"  -a, --allow PCI        add a PCI device to the allow list (repeatable)\n"
		"      --file-prefix NAME EAL runtime-file prefix (one per daemon)\n"
		"      --no-huge          run without hugepages (ordinary memory)\n"
		"      --in-memory        no runtime files (no dpdk-dumpcap/telemetry socket)\n"
		"  -m, --memory MB        EAL memory\n"
		"      --socket PATH      control socket path\n"
		"      --log-level SPEC   EAL log level (e.g. 7 or lib.eal:debug)\n"
		"  -h, --help             this text\n"
		"  -V, --version          version\n"
		"Command-line options override the config file.\n");
}

enum {
	OPT_CHECK = 256,
	OPT_VDEV,
	OPT_FILE_PREFIX,
	OPT_NO_HUGE,
	OPT_IN_MEMORY,
	OPT_SOCKET,
	OPT_LOG_LEVEL,
};

static const struct option long_opts[] = {
	{"config", required_argument, NULL, 'c'},
	{"check", no_argument, NULL, OPT_CHECK},
	{"lcores", required_argument, NULL, 'l'},
	{"vdev", required_argument, NULL, OPT_VDEV},
	{"allow", required_argument, NULL, 'a'},
	{"file-prefix", required_argument, NULL, OPT_FILE_PREFIX},
	{"no-huge", no_argument, NULL, OPT_NO_HUGE},
	{"in-memory", no_argument, NULL, OPT_IN_MEMORY},
	{"memory", required_argument, NULL, 'm'},
	{"socket", required_argument, NULL, OPT_SOCKET},
	{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static int
die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(fmt, ap);
	va_end(ap);
	return EXIT_FAILURE;
}

static int
copy_opt(char *dst, size_t cap, const char *opt, const char *val)
{
	if (strlen(val) >= cap)
		return die("--%s \"%s\": too long (at most %zu characters)", opt, val, cap - 1);
	memcpy(dst, val, strlen(val) + 1);
	return 0;
}

/* Options override the file, so the file is read first (pass 1), then the rest. */
static int
parse_args(int argc, char **argv, struct uroce_dp_config *cfg, bool *check)
{
	char err[UROCE_DP_ERR_LEN];
	const char *file = NULL;
	uint64_t v;
	int c, i;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:l:a:m:hV", long_opts, NULL)) != -1) {
		if (c == 'c')
			file = optarg;
	}
	if (file != NULL && uroce_dp_config_load(cfg, file, err, sizeof(err)) != 0)
		return die("%s", err);

	optind = 0;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "c:l:a:m:hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			break;
		case OPT_CHECK:
			*check = true;
			break;
		case 'l':
			if (copy_opt(cfg->lcores, sizeof(cfg->lcores), "lcores", optarg))
				return EXIT_FAILURE;
			break;
		case OPT_VDEV:
			if (cfg->n_vdev >= UROCE_DP_MAX_EAL_ITEMS)
				return die("--vdev: at most %d", UROCE_DP_MAX_EAL_ITEMS);
			if (copy_opt(cfg->vdev[cfg->n_vdev], sizeof(cfg->vdev[0]), "vdev", optarg))
				return EXIT_FAILURE;
			cfg->n_vdev++;
			break;
		case 'a':
			if (cfg->n_allow >= UROCE_DP_MAX_EAL_ITEMS)
				return die("--allow: at most %d", UROCE_DP_MAX_EAL_ITEMS);
			if (copy_opt(cfg->allow[cfg->n_allow], sizeof(cfg->allow[0]), "allow",
				     optarg))
				return EXIT_FAILURE;
			cfg->n_allow++;
			break;
		case OPT_FILE_PREFIX:
			if (copy_opt(cfg->file_prefix, sizeof(cfg->file_prefix), "file-prefix",
				     optarg))
				return EXIT_FAILURE;
			break;
		case OPT_NO_HUGE:
			cfg->no_huge = true;
			break;
		case OPT_IN_MEMORY:
			cfg->in_memory = true;
			break;
		case 'm':
			if (cli_parse_u64(optarg, CLI_PLAIN, 1048576, &v) != 0 || v < 16)
				return die("--memory \"%s\": expected megabytes, 16..1048576",
					   optarg);
			cfg->memory_mb = (unsigned int)v;
			break;
		case OPT_SOCKET:
			if (optarg[0] != '/')
				return die("--socket \"%s\": must be an absolute path", optarg);
			if (copy_opt(cfg->socket_path, sizeof(cfg->socket_path), "socket", optarg))
				return EXIT_FAILURE;
			break;
		case OPT_LOG_LEVEL:
			if (copy_opt(cfg->log_level, sizeof(cfg->log_level), "log-level", optarg))
				return EXIT_FAILURE;
			break;
		case 'h':
			cli_help();
		case 'V':
			cli_version();
		default:
			usage(stderr);
			return EXIT_FAILURE;
		}
	}
	for (i = optind; i < argc; i++) {
		if (cfg->n_extra >= UROCE_DP_MAX_EAL_ITEMS)
			return die("too many EAL arguments after --");
		if (copy_opt(cfg->extra[cfg->n_extra], sizeof(cfg->extra[0]), "", argv[i]))
			return EXIT_FAILURE;
		cfg->n_extra++;
	}
	/* --file-prefix after -- names this daemon as much as before it. */
	if (uroce_dp_config_adopt_eal_args(cfg, err, sizeof(err)) != 0 ||
	    uroce_dp_config_validate(cfg, err, sizeof(err)) != 0)
		return die("%s", err);
	/* A CPU that is not there: say so in one line, before EAL does in 100. */
	if (uroce_dp_lcores_check(cfg->lcores, err, sizeof(err)) != 0)
		return die("%s", err);
	return 0;
}

/* Why EAL failed, in words, with what to do about it. */
static const char *
eal_advice(int err, const struct uroce_dp_config *cfg)
{
	switch (err) {
	case EACCES:
		return getuid() == 0 ? "EAL could not use hugepages or its runtime directory "
				       "(see the EAL message above)"
				     : "permission denied: run as root";
	case ENOMEM:
		return cfg->no_huge ? "not enough memory for -m"
				    : "no usable hugepages: run 'dpdk-hugepages.py -p 2M --setup "
				      "512M' as root, or start with --no-huge";
	case EALREADY:
		return "EAL is already initialised in this process";
	case EBUSY:
		return "another DPDK primary process uses this --file-prefix: give each daemon "
		       "its own";
	case EINVAL:
		return "invalid EAL argument (see the EAL message above)";
	case ENODEV:
		return "a --vdev or PCI device could not be probed (see the EAL message above)";
	default:
		return "see the EAL messages above";
	}
}

/*
 * EAL locks <runtime dir>/<prefix>/config while a primary process runs, and
 * reports a second one only as "Cannot init config". Find the holder first.
 */
static int
prefix_in_use(const struct uroce_dp_config *cfg, pid_t *holder)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char path[512];
	struct flock fl;
	int fd, busy = 0;

	if (cfg->in_memory)
		return 0;
	if (getuid() == 0 || xdg == NULL)
		snprintf(path, sizeof(path), "/var/run/dpdk/%s/config", cfg->file_prefix);
	else
		snprintf(path, sizeof(path), "%s/dpdk/%s/config", xdg, cfg->file_prefix);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_RDLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK) {
		*holder = fl.l_pid;
		busy = 1;
	}
	close(fd);
	return busy;
}

/*
 * rte_eal_init() with stdout closed for its duration: after a bad argument
 * EAL prints its whole usage (over 100 lines) there, when the reason is
 * already on stderr. uroced prints nothing on stdout before this.
 */
static int
eal_init_quiet(int argc, char **argv)
{
	int saved, null, rc;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved >= 0 && null >= 0)
		dup2(null, STDOUT_FILENO);
	rc = rte_eal_init(argc, argv);
	fflush(stdout);
	if (saved >= 0 && null >= 0)
		dup2(saved, STDOUT_FILENO);
	if (saved >= 0)
		close(saved);
	if (null >= 0)
		close(null);
	return rc;
}

static void
log_to_rte(enum uroce_log_level level, const char *msg)
{
	rte_log((uint32_t)level + 1, RTE_LOGTYPE_USER1, PROG ": %s\n", msg);
}

/*
 * Refuse to start over a live daemon's socket: the daemon core replaces a
 * socket file nobody listens on, so find out first whether somebody does.
 * Create the socket's directory if it is missing.
 */
static int
control_socket_check(const struct uroce_dp_config *cfg)
{
	char err[UROCE_DP_ERR_LEN];

	/* Its directory first: /run/uroce exists on no fresh machine. */
	if (uroce_dp_socket_dir(cfg->socket_path, err, sizeof(err)) != 0)
		return die("%s", err);
	if (uroce_dp_socket_live(cfg->socket_path) == 1)
		return die("control socket %s: address already in use: another uroced is "
			   "running (stop it, or give this one --socket and --file-prefix of its "
			   "own)", cfg->socket_path);
	return 0;
}

int
main(int argc, char **argv)
{
	struct uroce_dp_config cfg;
	char *eal_argv[EAL_ARGV_MAX];
	char err[UROCE_DP_ERR_LEN];
	struct uroce_dp *dp = NULL;
	struct uroced_core core;
	struct sigaction sa;
	bool check = false, pdump_ok = false, core_ok = false, dp_started = false;
	unsigned int flushed;
	int eal_argc, rc, ctl_wait_ms = 1;
	uint64_t idle_since, idle_ms;
	pid_t holder = 0;

	cli_init(PROG, usage);
	/* drivers/net's steering and PMD quirks, before the config asks them. */
	rc = uroce_net_register();
	if (rc != 0)
		return die("cannot register drivers/net: %s", strerror(-rc));
	uroce_dp_config_defaults(&cfg);
	rc = parse_args(argc, argv, &cfg, &check);
	if (rc != 0)
		return rc;
	eal_argc = uroce_dp_eal_args(&cfg, argv[0], eal_argv, EAL_ARGV_MAX);
	if (eal_argc < 0)
		return die("too many EAL arguments");

	if (prefix_in_use(&cfg, &holder))
		return die("file prefix \"%s\" is in use by another DPDK process (pid %d): give "
			   "each daemon its own --file-prefix", cfg.file_prefix, (int)holder);

	if (!check && uroce_dp_memory_precheck(&cfg, err, sizeof(err)) != 0)
		return die("%s", err);

	rc = eal_init_quiet(eal_argc, eal_argv);
	if (rc < 0) {
		int e = rte_errno;

		if (check) {
			uroce_dp_check(&cfg, false, stdout);
			return EXIT_FAILURE;
		}
		if (e == 0)
			return die("EAL init failed: see the EAL messages above");
		return die("EAL init failed: %s: %s", rte_strerror(e), eal_advice(e, &cfg));
	}
	uroce_log_set(log_to_rte, UROCE_LOG_INFO);

	if (check) {
		rc = uroce_dp_check(&cfg, true, stdout);
		printf("%s: %d problem(s)\n", rc == 0 ? "PASS" : "FAIL", rc);
		uroce_dp_hugepages_release(&cfg);
		rte_eal_cleanup();
		return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
	}

	rc = EXIT_FAILURE;
	if (control_socket_check(&cfg) != 0)
		goto out;
	dp = uroce_dp_create(&cfg, err, sizeof(err));
	if (dp == NULL) {
		die("%s", err);
		goto out;
	}
	pdump_ok = rte_pdump_init() == 0;
	if (!pdump_ok)
		fprintf(stderr, PROG ": warning: rte_pdump_init failed (%s): dpdk-dumpcap will "
			"not attach\n", rte_strerror(rte_errno));
	if (uroce_dp_telemetry_register(dp) != 0)
		fprintf(stderr, PROG ": warning: telemetry commands not registered\n");
	if (uroced_core_start(&core, dp, &cfg, err, sizeof(err)) != 0) {
		die("%s", err);
		goto out;
	}
	core_ok = true;
	if (uroced_core_telemetry_register(&core) != 0)
		fprintf(stderr, PROG ": warning: /uroce/daemon telemetry not registered\n");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (uroce_dp_start(dp, err, sizeof(err)) != 0) {
		die("%s", err);
		goto out;
	}
	dp_started = true;
	printf(PROG ": ready: %u port(s), %u worker(s), socket %s, file prefix %s\n",
	       uroce_dp_port_count(dp), uroce_dp_worker_count(dp), cfg.socket_path,
	       cfg.in_memory ? "(in-memory)" : cfg.file_prefix);
	fflush(stdout);

	if (core.d != NULL && uroce_daemon_watch_fd(core.d, uroce_dp_ctl_fd(dp)) != 0)
		fprintf(stderr, PROG ": warning: the control loop will not wake on the "
			"workers' neighbour news (it looks every millisecond)\n");
	idle_since = mono_ms();
	while (quit_signal == 0) {
		/* Neighbour timers get a turn every millisecond while there is
		 * work; idle, the control plane waits in epoll for an eighth of
		 * the time it has been idle, CTL_IDLE_MAX_MS at most: a
		 * client's request, a worker's neighbour news or a signal ends
		 * the wait. */
		uroce_dp_poll(dp);
		if (uroced_core_main_poll(&core, ctl_wait_ms) != 0)
			idle_since = mono_ms();
		idle_ms = (mono_ms() - idle_since) / 8;
		ctl_wait_ms = idle_ms < 1 ? 1 : idle_ms > CTL_IDLE_MAX_MS ? CTL_IDLE_MAX_MS :
									   (int)idle_ms;
	}
	printf(PROG ": signal %d: stopping\n", (int)quit_signal);
	fflush(stdout);
	rc = EXIT_SUCCESS;
out:
	if (core_ok) {
		flushed = uroced_core_stop(&core, dp, dp_started);
		printf(PROG ": %u QP(s) moved to ERR with their work flushed; clients told\n",
		       flushed);
	}
	uroce_dp_destroy(dp);
	if (pdump_ok)
		rte_pdump_uninit();
	/* EAL 22.11 would leave the hugepages held after we exit. */
	uroce_dp_hugepages_release(&cfg);
	rte_eal_cleanup();
	if (rc == EXIT_SUCCESS)
		printf(PROG ": stopped\n");
	return rc;
}
