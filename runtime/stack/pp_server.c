/* pp_server.h: the options and the run's end of a TCP-serving app. */
#include "pp_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cycles.h>

static int
parse_addr(struct pp_server_opts *o, const char *opt, const char *v)
{
	char buf[64];
	unsigned prefix = 32;
	snprintf(buf, sizeof(buf), "%s", v);
	char *slash = strchr(buf, '/');
	if (slash != NULL) {
		char *end;
		unsigned long p = strtoul(slash + 1, &end, 10);
		if (*end != '\0' || slash[1] == '\0' || p > 32) {
			fprintf(stderr, "%s %s: expected an IPv4 address with /0..32\n", opt, v);
			return -1;
		}
		prefix = (unsigned)p;
		*slash = '\0';
	}
	struct in_addr a;
	if (inet_pton(AF_INET, buf, &a) != 1) {
		fprintf(stderr, "%s %s: not an IPv4 address\n", opt, v);
		return -1;
	}
	o->addr = ntohl(a.s_addr);
	o->prefix_len = prefix;
	return 0;
}

void
pp_server_opts_init(struct pp_server_opts *o, const char *addr, uint16_t port, unsigned max_conns)
{
	memset(o, 0, sizeof(*o));
	o->stack = PP_STACK_LWIP;
	o->listen_port = port;
	o->max_conns = max_conns;
	o->linger_s = 10.0;
	if (parse_addr(o, "--ip", addr) < 0)
		abort(); /* a default of the app's own */
}

int
pp_server_known_opt(int argc, char **argv, const char *const *known)
{
	bool found = false;
	for (const char *const *k = known; *k != NULL; k++)
		found |= strcmp(argv[0], *k) == 0;
	if (!found)
		return 0;
	if (argc < 2) {
		fprintf(stderr, "%s: missing value\n", argv[0]);
		return -1;
	}
	return 1;
}

int
pp_server_opts_parse(struct pp_server_opts *o, int argc, char **argv)
{
	static const char *const known[] = { "--stack", "--ip", "--listen-port", "--out",
		"--streams", "--linger", "--max-conns", "--kernel-rcvbuf", NULL };
	int r = pp_server_known_opt(argc, argv, known);
	if (r <= 0)
		return r;
	const char *opt = argv[0], *v = argv[1];
	uint64_t u;
	if (strcmp(opt, "--stack") == 0) {
		if (strcmp(v, "lwip") == 0)
			o->stack = PP_STACK_LWIP;
		else if (strcmp(v, "kernel") == 0)
			o->stack = PP_STACK_KERNEL;
		else {
			fprintf(stderr, "--stack %s: expected lwip or kernel\n", v);
			return -1;
		}
	} else if (strcmp(opt, "--ip") == 0) {
		if (parse_addr(o, opt, v) < 0)
			return -1;
	} else if (strcmp(opt, "--out") == 0) {
		struct stat st;
		if (stat(v, &st) != 0 || !S_ISDIR(st.st_mode) || access(v, W_OK) != 0) {
			fprintf(stderr, "--out %s: not a directory this process can write\n", v);
			return -1;
		}
		o->out_dir = v;
	} else if (strcmp(opt, "--linger") == 0) {
		if (pp_parse_seconds(opt, v, 3600, &o->linger_s) < 0)
			return -1;
	} else if (strcmp(opt, "--listen-port") == 0) {
		if (pp_parse_u64(opt, v, 1, 65535, &u) < 0)
			return -1;
		o->listen_port = (uint16_t)u;
	} else if (strcmp(opt, "--streams") == 0) {
		if (pp_parse_u64(opt, v, 1, UINT64_MAX / 2, &o->streams) < 0)
			return -1;
	} else if (strcmp(opt, "--max-conns") == 0) {
		if (pp_parse_u64(opt, v, 1, 1024, &u) < 0)
			return -1;
		o->max_conns = (unsigned)u;
	} else {
		if (pp_parse_u64(opt, v, 1024, 1u << 30, &u) < 0)
			return -1;
		o->kernel_rcvbuf = (unsigned)u;
	}
	return 2;
}

int
pp_server_stack_open(struct pp_stack **st, const struct pp_server_opts *o,
	const struct pp_setup_info *info, const char *app)
{
	const struct pp_stack_conf conf = {
		.kind = o->stack,
		.addr = o->addr,
		.prefix_len = o->prefix_len,
		.listen_port = o->listen_port,
		.max_conns = o->max_conns,
		.n_instances = info->n_instances,
		.queues = info->queues,
		.socket_id = (int)info->socket_id,
		.kernel_rcvbuf = o->kernel_rcvbuf,
	};
	char err[512];
	if (pp_stack_open(st, &conf, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", app, err);
		return -EINVAL;
	}
	return 0;
}

void
pp_server_send_receipt(
	struct pp_conn *c, bool same, const void *rec, size_t len, struct pp_receipt_counters *ctr)
{
	if (!same || c->state == PP_CONN_RESET)
		ctr->peer_gone++;
	else if (pp_conn_write(c, rec, len) == 0)
		ctr->sent++;
	else
		ctr->no_room++;
}

bool
pp_server_input_ended(const struct pp_server_opts *o, uint64_t streams_done, bool receipts_queued,
	struct pp_stack_inst *si, unsigned n_slots, pp_server_slot_busy busy, const void *task,
	uint64_t *end_tsc)
{
	if (o->streams == 0 || streams_done < o->streams || receipts_queued)
		return false;
	uint64_t now = rte_rdtsc();
	if (*end_tsc == 0)
		*end_tsc = now + (uint64_t)(o->linger_s * (double)rte_get_tsc_hz());
	if (now >= *end_tsc)
		return true;
	for (unsigned k = 0; k < n_slots; k++) {
		struct pp_conn *c = pp_stack_conn(si, k);
		if (c->state == PP_CONN_FREE || c->state == PP_CONN_RESET)
			continue;
		if (busy(task, k) || pp_conn_unacked(c))
			return false;
	}
	return true;
}
