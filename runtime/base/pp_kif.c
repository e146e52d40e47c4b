/* Kernel interfaces as DPDK ports: see pp_kif.h. */
#include "pp_kif.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#define NETNS_DIR "/run/netns" /* where `ip netns add` names namespaces */

static struct pp_kif kifs[PP_KIF_MAX];
static unsigned n_kifs;

int
pp_kif_parse_mode(const char *text, enum pp_kif_mode *mode)
{
	if (strcmp(text, "auto") == 0)
		*mode = PP_KIF_AUTO;
	else if (strcmp(text, "af_xdp") == 0)
		*mode = PP_KIF_AF_XDP;
	else if (strcmp(text, "af_packet") == 0)
		*mode = PP_KIF_AF_PACKET;
	else
		return -1;
	return 0;
}

static int
split_spec(const char *spec, char *netns, size_t nslen, char *iface, size_t iflen)
{
	const char *slash = strchr(spec, '/');
	const char *ifn = slash != NULL ? slash + 1 : spec;
	size_t nl = slash != NULL ? (size_t)(slash - spec) : 0;

	if (strchr(ifn, '/') != NULL || *ifn == '\0' || strlen(ifn) >= iflen ||
		strpbrk(ifn, " ,=:\t") != NULL)
		return -1;
	if (slash != NULL &&
		(nl == 0 || nl >= nslen || memchr(spec, ',', nl) != NULL ||
			(nl <= 2 && spec[0] == '.')))
		return -1;
	memcpy(netns, spec, nl);
	netns[nl] = '\0';
	strcpy(iface, ifn);
	return 0;
}

int
pp_kif_check_spec(const char *spec, char *err, size_t errlen)
{
	char ns[64], ifn[16];

	if (split_spec(spec, ns, sizeof(ns), ifn, sizeof(ifn)) < 0) {
		snprintf(err, errlen,
			"'%s' is not [NETNS/]IFACE (an interface name of 1-15 characters "
			"without '/', ',', '=', ':' or blanks, optionally after the name of a "
			"network namespace in " NETNS_DIR " and a '/')",
			spec);
		return -1;
	}
	return 0;
}

const struct pp_kif *
pp_kif_of(uint16_t port)
{
	for (unsigned i = 0; i < n_kifs; i++)
		if (kifs[i].port == port)
			return &kifs[i];
	return NULL;
}

const struct pp_kif *
pp_kif_all(unsigned *n)
{
	*n = n_kifs;
	return kifs;
}

static int
enter_fd(int ns_fd)
{
	int self;

	if (ns_fd < 0)
		return -1;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -1;
	if (setns(ns_fd, CLONE_NEWNET) != 0) {
		close(self);
		return -1;
	}
	return self;
}

int
pp_kif_enter(uint16_t port)
{
	const struct pp_kif *k = pp_kif_of(port);

	return k != NULL ? enter_fd(k->ns_fd) : -1;
}

void
pp_kif_leave(int handle)
{
	if (handle < 0)
		return;
	/* Back to where the caller was; failing that, the thread would go on
	 * in the interface's namespace, which every later call must not. */
	if (setns(handle, CLONE_NEWNET) != 0) {
		fprintf(stderr, "pp_kif: cannot return to the process's network namespace: %s\n",
			strerror(errno));
		_exit(1);
	}
	close(handle);
}

/* Probes vdev `name` with `args`; the port, or -1 with why in err. */
static int
probe(const char *name, const char *args, char *err, size_t errlen)
{
	uint16_t port;
	int rc = rte_eal_hotplug_add("vdev", name, args);

	if (rc != 0) {
		snprintf(err, errlen, "%s,%s: probe failed: %s (DPDK's messages above say why)",
			name, args, rte_strerror(rc < 0 ? -rc : rc));
		return -1;
	}
	if (rte_eth_dev_get_port_by_name(name, &port) != 0) {
		snprintf(err, errlen, "%s: probed, but no ethdev port by that name", name);
		rte_eal_hotplug_remove("vdev", name);
		return -1;
	}
	return port;
}

int
pp_kif_attach(const char *spec, enum pp_kif_mode mode, const char *who)
{
	struct pp_kif *k;
	char err[256], args[96], path[PATH_MAX];
	int port = -1, h = -1;

	if (n_kifs == PP_KIF_MAX) {
		fprintf(stderr, "%s: --attach %s: at most %d interfaces\n", who, spec, PP_KIF_MAX);
		return -1;
	}
	k = &kifs[n_kifs];
	memset(k, 0, sizeof(*k));
	k->ns_fd = -1;
	snprintf(k->spec, sizeof(k->spec), "%s", spec);
	if (split_spec(spec, k->netns, sizeof(k->netns), k->iface, sizeof(k->iface)) < 0) {
		pp_kif_check_spec(spec, err, sizeof(err));
		fprintf(stderr, "%s: --attach %s\n", who, err);
		return -1;
	}
	if (k->netns[0] != '\0') {
		snprintf(path, sizeof(path), NETNS_DIR "/%s", k->netns);
		k->ns_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (k->ns_fd < 0) {
			fprintf(stderr, "%s: --attach %s: network namespace %s: %s\n", who, spec,
				path, strerror(errno));
			return -1;
		}
		h = enter_fd(k->ns_fd);
		if (h < 0) {
			fprintf(stderr, "%s: --attach %s: cannot enter network namespace %s: %s\n",
				who, spec, k->netns, strerror(errno));
			close(k->ns_fd);
			return -1;
		}
	}
	if (if_nametoindex(k->iface) == 0) {
		fprintf(stderr, "%s: --attach %s: no interface %s%s%s\n", who, spec, k->iface,
			k->netns[0] ? " in network namespace " : " in this network namespace",
			k->netns);
		goto fail;
	}
	if (mode != PP_KIF_AF_PACKET) {
		snprintf(k->vdev, sizeof(k->vdev), "net_af_xdp_pp%u", n_kifs);
		snprintf(args, sizeof(args), "iface=%s,start_queue=0,queue_count=1,busy_budget=0",
			k->iface);
		/* The kernel's refusal of XDP comes at queue set-up, not here:
		 * pp_port_configure falls back then (pp_kif_fallback). */
		port = probe(k->vdev, args, err, sizeof(err));
		if (port >= 0) {
			k->how = "af_xdp";
		} else if (mode == PP_KIF_AF_XDP) {
			fprintf(stderr, "%s: --attach %s with --attach-mode af_xdp: %s\n", who,
				spec, err);
			goto fail;
		} else {
			snprintf(k->why_not_xdp, sizeof(k->why_not_xdp), "%s", err);
		}
	}
	if (port < 0) {
		snprintf(k->vdev, sizeof(k->vdev), "net_af_packet_pp%u", n_kifs);
		/* 4096 frames a ring: the default 512 overflows under a burst */
		snprintf(args, sizeof(args), "iface=%s,qpairs=1,framecnt=4096", k->iface);
		port = probe(k->vdev, args, err, sizeof(err));
		if (port < 0) {
			fprintf(stderr, "%s: --attach %s: %s\n", who, spec, err);
			goto fail;
		}
		k->how = "af_packet";
	}
	pp_kif_leave(h);
	k->port = (uint16_t)port;
	k->mode = mode;
	n_kifs++;
	return 0;
fail:
	pp_kif_leave(h);
	if (k->ns_fd >= 0)
		close(k->ns_fd);
	return -1;
}

int
pp_kif_fallback(uint16_t port, const char *why)
{
	struct pp_kif *k = NULL;
	char err[256], args[96], name[32];
	int h, np;

	for (unsigned i = 0; i < n_kifs; i++)
		if (kifs[i].port == port)
			k = &kifs[i];
	if (k == NULL || k->mode != PP_KIF_AUTO || strcmp(k->how, "af_xdp") != 0)
		return -1;
	h = enter_fd(k->ns_fd);
	rte_eth_dev_close(port);
	rte_eal_hotplug_remove("vdev", k->vdev);
	snprintf(name, sizeof(name), "net_af_packet_pp%u", (unsigned)(k - kifs));
	snprintf(args, sizeof(args), "iface=%s,qpairs=1,framecnt=4096", k->iface);
	np = probe(name, args, err, sizeof(err));
	pp_kif_leave(h);
	if (np < 0) {
		fprintf(stderr, "--attach %s: af_xdp refused (%s), and af_packet: %s\n", k->spec,
			why, err);
		return -1;
	}
	if (np != port) { /* DPDK hands out the lowest free port id: the same one */
		fprintf(stderr, "--attach %s: af_packet came up as port %d, not %u\n", k->spec, np,
			port);
		return -1;
	}
	snprintf(k->vdev, sizeof(k->vdev), "%s", name);
	snprintf(k->why_not_xdp, sizeof(k->why_not_xdp), "%s", why);
	k->how = "af_packet";
	return 0;
}

void
pp_kif_close_all(void)
{
	for (unsigned i = 0; i < n_kifs; i++) {
		struct pp_kif *k = &kifs[i];
		int h = enter_fd(k->ns_fd);
		rte_eth_dev_stop(k->port); /* not started, or stopped already: no harm */
		rte_eth_dev_close(k->port);
		rte_eal_hotplug_remove("vdev", k->vdev);
		pp_kif_leave(h);
	}
}

json_t *
pp_kif_json(void)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < n_kifs; i++) {
		const struct pp_kif *k = &kifs[i];
		json_t *o = json_pack("{s:i, s:s, s:s, s:s}", "port", k->port, "iface", k->iface,
			"netns", k->netns, "attach", k->how);

		if (k->why_not_xdp[0] != '\0')
			json_object_set_new(o, "af_xdp_not_used", json_string(k->why_not_xdp));
		json_array_append_new(a, o);
	}
	return a;
}

void
pp_kif_report(const char *who)
{
	for (unsigned i = 0; i < n_kifs; i++) {
		const struct pp_kif *k = &kifs[i];

		fprintf(stderr, "%s: port %u: %s%s%s attached with %s%s%s%s\n", who, k->port,
			k->iface, k->netns[0] ? " in netns " : "", k->netns, k->how,
			k->why_not_xdp[0] ? " (af_xdp not used: " : "", k->why_not_xdp,
			k->why_not_xdp[0] ? ")" : "");
	}
}
