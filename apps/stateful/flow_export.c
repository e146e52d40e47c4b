/* IPFIX export of ended flows: the queue, the writer thread, libfixbuf.
 * See flow_export.h. */
#include "flow_export.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <fixbuf/public.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

/* What the hook copies out of an ended record: one ring element. */
struct export_elem {
	uint8_t src[16], dst[16]; /* initiator, responder (IPv4: mapped) */
	uint64_t first_tsc, last_tsc;
	uint64_t packets[2], bytes[2]; /* [0]: initiator -> responder */
	uint16_t sport, dport, vlan;
	uint16_t app_master, app_proto; /* detected application (--dpi) */
	uint8_t family, proto, dflags[2], reason, app_status, pad[2];
};
_Static_assert(sizeof(struct export_elem) % 4 == 0, "rte_ring elements are 4-byte multiples");

/* The application (--dpi): applicationId (IE 95, RFC 6759) is the
 * classification engine id 20 (PANA-L7-PEN), ntop's enterprise number 35632
 * (nDPI's registry) and a 4-byte selector: nDPI master id, nDPI app id (both
 * big-endian); applicationName (IE 96) is nDPI's "master.app" name, NUL
 * padded.  A flow nDPI did not inspect (no free state) has selector 0.0 and
 * the name "NotInspected". */
#define APP_ENGINE_PANA_L7_PEN 20
#define APP_PEN_NTOP 35632
#define APP_NAME_LEN 32
struct __attribute__((packed)) ipfix_app {
	uint8_t id[9]; /* engine, PEN, master, app */
	char name[APP_NAME_LEN];
};

/* The internal (and export) record layouts, in template order, packed:
 * libfixbuf copies fields by their template lengths, with no padding. */
struct __attribute__((packed)) ipfix_v4 {
	uint64_t flow_start_ms, flow_end_ms, packets, octets;
	uint32_t src, dst;
	uint16_t sport, dport, vlan, tcp_flags;
	uint8_t proto, end_reason;
	struct ipfix_app app; /* with --dpi only: the last fields */
};

struct __attribute__((packed)) ipfix_v6 {
	uint64_t flow_start_ms, flow_end_ms, packets, octets;
	uint8_t src[16], dst[16];
	uint16_t sport, dport, vlan, tcp_flags;
	uint8_t proto, end_reason;
	struct ipfix_app app; /* with --dpi only: the last fields */
};

#define SPEC_DPI 1 /* spec flag: only in the templates of a --dpi run */

static fbInfoElementSpec_t v4_spec[] = { { "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 }, { "packetDeltaCount", 8, 0 }, { "octetDeltaCount", 8, 0 },
	{ "sourceIPv4Address", 4, 0 }, { "destinationIPv4Address", 4, 0 },
	{ "sourceTransportPort", 2, 0 }, { "destinationTransportPort", 2, 0 }, { "vlanId", 2, 0 },
	{ "tcpControlBits", 2, 0 }, { "protocolIdentifier", 1, 0 }, { "flowEndReason", 1, 0 },
	{ "applicationId", 9, SPEC_DPI }, { "applicationName", APP_NAME_LEN, SPEC_DPI },
	FB_IESPEC_NULL };

static fbInfoElementSpec_t v6_spec[] = { { "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 }, { "packetDeltaCount", 8, 0 }, { "octetDeltaCount", 8, 0 },
	{ "sourceIPv6Address", 16, 0 }, { "destinationIPv6Address", 16, 0 },
	{ "sourceTransportPort", 2, 0 }, { "destinationTransportPort", 2, 0 }, { "vlanId", 2, 0 },
	{ "tcpControlBits", 2, 0 }, { "protocolIdentifier", 1, 0 }, { "flowEndReason", 1, 0 },
	{ "applicationId", 9, SPEC_DPI }, { "applicationName", APP_NAME_LEN, SPEC_DPI },
	FB_IESPEC_NULL };

#define TID_V4 256
#define TID_V6 257
#define MAX_SINKS 2
#define DRAIN_BURST 64

/* IPFIX messages to a UDP collector stay under a typical path MTU. */
#define UDP_MSG_MAX 1400

/* One destination.  libfixbuf runs in manual mode (fBufAppend says when a
 * message is full) so that every record is known to be in a message that
 * was sent, or counted as lost.  UDP: libfixbuf builds each message into
 * msg (fbExporterAllocBuffer) and we send it on our own connected socket,
 * because libfixbuf's UDP exporter only logs a refused send. */
struct sink {
	const char *what; /* "collector 127.0.0.1:4739 (UDP)" / "file x.ipfix" */
	fbSession_t *session;
	fbExporter_t *exp;
	fBuf_t *buf;
	int fd;           /* UDP socket, or -1 (file) */
	FILE *fp;         /* the file's stream, ours: libfixbuf neither flushes nor closes it */
	uint64_t pending; /* records appended since the last emit */
	bool failed;      /* first error printed */
	bool dirty;       /* the message being built holds a set */
	uint8_t msg[UDP_MSG_MAX];
};

struct flow_exporter {
	struct rte_ring *ring;
	fbInfoModel_t *model;
	struct sink sinks[MAX_SINKS];
	unsigned n_sinks;
	char what[MAX_SINKS][300];
	char host[256], port[16];
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	flow_app_name_fn app_name; /* NULL: no --dpi */
	void *app_name_arg;
	uint64_t tsc0, hz, epoch_ms0;
	double template_interval_s;
	/* Written by the writer, read by anyone (relaxed atomics). */
	atomic_uint_fast64_t flows_dequeued, records_exported, records_lost, templates_sent,
		forced_dropped;
	pthread_mutex_t err_lock; /* only around first_error (writer, off path) */
	char first_error[200];
};

void
flow_export_hook(
	const struct flow_record *r, enum flow_end_reason why, struct flow_counters *c, void *arg)
{
	struct flow_exporter *x = arg;
	struct export_elem e;
	bool hi = r->init_dir == 1; /* the initiator is the key's hi endpoint */

	memcpy(e.src, hi ? r->key.addr_hi : r->key.addr_lo, 16);
	memcpy(e.dst, hi ? r->key.addr_lo : r->key.addr_hi, 16);
	e.sport = hi ? r->key.port_hi : r->key.port_lo;
	e.dport = hi ? r->key.port_lo : r->key.port_hi;
	e.first_tsc = r->first_tsc;
	e.last_tsc = r->last_tsc;
	e.packets[0] = r->packets[0];
	e.packets[1] = r->packets[1];
	e.bytes[0] = r->bytes[0];
	e.bytes[1] = r->bytes[1];
	e.vlan = r->key.vlan;
	e.family = r->key.family;
	e.proto = r->key.proto;
	e.dflags[0] = r->dflags[0];
	e.dflags[1] = r->dflags[1];
	e.reason = (uint8_t)why;
	e.app_master = r->app_master;
	e.app_proto = r->app_proto;
	e.app_status = r->app_status;
	e.pad[0] = e.pad[1] = 0;
	if (rte_ring_mp_enqueue_elem(x->ring, &e, sizeof(e)) != 0)
		c->export_dropped++;
	else
		c->export_queued++;
}

static void
note_error_msg(struct flow_exporter *x, struct sink *s, const char *msg)
{
	if (!s->failed) {
		s->failed = true;
		fprintf(stderr,
			"stateful: IPFIX export to %s failed: %s (further failures only counted in "
			"records_lost)\n",
			s->what, msg);
		pthread_mutex_lock(&x->err_lock);
		if (x->first_error[0] == '\0')
			snprintf(x->first_error, sizeof(x->first_error), "%s: %s", s->what, msg);
		pthread_mutex_unlock(&x->err_lock);
	}
}

static void
note_error(struct flow_exporter *x, struct sink *s, GError *err)
{
	note_error_msg(x, s, err != NULL ? err->message : "unknown error");
}

/* Close the message being built and send it (force: even without records,
 * for templates).  Its records count as exported or lost.  true: sent. */
static bool
flush_sink(struct flow_exporter *x, struct sink *s, bool force)
{
	GError *err = NULL;
	bool ok = true;

	if (s->pending == 0 && !force)
		return true;
	if (!fBufEmit(s->buf, &err)) {
		note_error(x, s, err);
		g_clear_error(&err);
		ok = false;
	} else if (s->fd >= 0) {
		size_t len = fbExporterGetMsgLen(s->exp);

		if (len > 0 && send(s->fd, s->msg, len, 0) != (ssize_t)len) {
			char m[128];

			snprintf(m, sizeof(m), "send: %s", strerror(errno));
			note_error_msg(x, s, m);
			ok = false;
		}
	}
	atomic_fetch_add(ok ? &x->records_exported : &x->records_lost, s->pending);
	s->pending = 0;
	s->dirty = false;
	return ok;
}

static void
send_templates(struct flow_exporter *x)
{
	unsigned i;

	for (i = 0; i < x->n_sinks; i++) {
		struct sink *s = &x->sinks[i];
		GError *err = NULL;
		bool ok;

		/* Templates start a message of their own in manual mode. */
		if (s->pending != 0 || s->dirty)
			flush_sink(x, s, true);
		/* libfixbuf starts a template message by itself only in
		 * automatic mode; they fit in one message, so nothing is
		 * emitted behind our back. */
		fBufSetAutomaticMode(s->buf, TRUE);
		ok = fbSessionExportTemplates(s->session, &err);
		fBufSetAutomaticMode(s->buf, FALSE);
		if (!ok) {
			note_error(x, s, err);
			g_clear_error(&err);
			continue;
		}
		if (flush_sink(x, s, true))
			atomic_fetch_add(&x->templates_sent, 1);
	}
}

static void
emit_all(struct flow_exporter *x)
{
	unsigned i;

	for (i = 0; i < x->n_sinks; i++)
		flush_sink(x, &x->sinks[i], false);
}

static uint64_t
tsc_to_ms(const struct flow_exporter *x, uint64_t tsc)
{
	int64_t d = (int64_t)(tsc - x->tsc0);

	return (uint64_t)((int64_t)x->epoch_ms0 + (d / (int64_t)x->hz) * 1000 +
		((d % (int64_t)x->hz) * 1000) / (int64_t)x->hz);
}

static uint32_t
v4_addr(const uint8_t a[16])
{
	return (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
}

static void
append_one(struct flow_exporter *x, const struct export_elem *e, unsigned dir)
{
	struct ipfix_v4 v4;
	struct ipfix_v6 v6;
	const uint8_t *rec;
	size_t len;
	uint16_t tid;
	unsigned i;
	const uint8_t *src = dir ? e->dst : e->src, *dst = dir ? e->src : e->dst;
	uint64_t start = tsc_to_ms(x, e->first_tsc), end = tsc_to_ms(x, e->last_tsc);
	struct ipfix_app app = { .id = { 0 } };
	size_t app_len = 0;

	if (x->app_name != NULL) {
		bool inspected = e->app_status == FLOW_APP_DONE;
		uint16_t m = inspected ? e->app_master : 0, a = inspected ? e->app_proto : 0;

		app.id[0] = APP_ENGINE_PANA_L7_PEN;
		app.id[1] = (uint8_t)(APP_PEN_NTOP >> 24);
		app.id[2] = (uint8_t)(APP_PEN_NTOP >> 16);
		app.id[3] = (uint8_t)(APP_PEN_NTOP >> 8);
		app.id[4] = (uint8_t)APP_PEN_NTOP;
		app.id[5] = (uint8_t)(m >> 8);
		app.id[6] = (uint8_t)m;
		app.id[7] = (uint8_t)(a >> 8);
		app.id[8] = (uint8_t)a;
		if (inspected)
			x->app_name(x->app_name_arg, m, a, app.name, sizeof(app.name));
		else
			snprintf(app.name, sizeof(app.name), "NotInspected");
		app_len = sizeof(app);
	}

	if (e->family == 4) {
		v4 = (struct ipfix_v4){
			.flow_start_ms = start,
			.flow_end_ms = end,
			.packets = e->packets[dir],
			.octets = e->bytes[dir],
			.src = v4_addr(src),
			.dst = v4_addr(dst),
			.sport = dir ? e->dport : e->sport,
			.dport = dir ? e->sport : e->dport,
			.vlan = e->vlan,
			.tcp_flags = e->dflags[dir],
			.proto = e->proto,
			.end_reason = e->reason,
		};
		v4.app = app;
		rec = (const uint8_t *)&v4;
		len = sizeof(v4) - sizeof(app) + app_len;
		tid = TID_V4;
	} else {
		v6 = (struct ipfix_v6){
			.flow_start_ms = start,
			.flow_end_ms = end,
			.packets = e->packets[dir],
			.octets = e->bytes[dir],
			.sport = dir ? e->dport : e->sport,
			.dport = dir ? e->sport : e->dport,
			.vlan = e->vlan,
			.tcp_flags = e->dflags[dir],
			.proto = e->proto,
			.end_reason = e->reason,
		};
		memcpy(v6.src, src, 16);
		memcpy(v6.dst, dst, 16);
		v6.app = app;
		rec = (const uint8_t *)&v6;
		len = sizeof(v6) - sizeof(app) + app_len;
		tid = TID_V6;
	}
	for (i = 0; i < x->n_sinks; i++) {
		struct sink *s = &x->sinks[i];
		GError *err = NULL;

		bool ok = fBufSetInternalTemplate(s->buf, tid, &err) &&
			fBufSetExportTemplate(s->buf, tid, &err) &&
			fBufAppend(s->buf, (uint8_t *)(uintptr_t)rec, len, &err);

		if (!ok && g_error_matches(err, FB_ERROR_DOMAIN, FB_ERROR_EOM)) {
			/* Message full: send it, then start the next one. */
			g_clear_error(&err);
			flush_sink(x, s, false);
			ok = fBufSetInternalTemplate(s->buf, tid, &err) &&
				fBufSetExportTemplate(s->buf, tid, &err) &&
				fBufAppend(s->buf, (uint8_t *)(uintptr_t)rec, len, &err);
		}
		if (!ok) {
			note_error(x, s, err);
			g_clear_error(&err);
			atomic_fetch_add(&x->records_lost, 1);
			continue;
		}
		s->pending++;
		s->dirty = true;
	}
}

static void *
writer_main(void *arg)
{
	struct flow_exporter *x = arg;
	struct export_elem e[DRAIN_BURST];
	uint64_t next_templates = rte_rdtsc() + (uint64_t)(x->template_interval_s * (double)x->hz);
	const struct timespec nap = { .tv_sec = 0, .tv_nsec = 1000000 };

	for (;;) {
		unsigned n =
			rte_ring_sc_dequeue_burst_elem(x->ring, e, sizeof(e[0]), DRAIN_BURST, NULL);
		unsigned i;

		for (i = 0; i < n; i++) {
			append_one(x, &e[i], 0);
			if (e[i].packets[1] != 0)
				append_one(x, &e[i], 1);
		}
		atomic_fetch_add(&x->flows_dequeued, n);
		if (rte_rdtsc() >= next_templates) {
			send_templates(x);
			next_templates =
				rte_rdtsc() + (uint64_t)(x->template_interval_s * (double)x->hz);
		}
		if (n == DRAIN_BURST)
			continue;
		/* Queue empty for now: send what is buffered, then nap. */
		emit_all(x);
		if (atomic_load(&x->stop) && rte_ring_count(x->ring) == 0)
			break;
		if (n == 0)
			nanosleep(&nap, NULL);
	}
	emit_all(x);
	return NULL;
}

static int
sink_open(struct flow_exporter *x, int fd, FILE *fp, const char *what, uint32_t domain, char *err,
	size_t errlen)
{
	uint32_t flags = x->app_name != NULL ? SPEC_DPI : 0;
	struct sink *s = &x->sinks[x->n_sinks];
	fbExporter_t *exp;
	fbTemplate_t *t4, *t6;
	GError *gerr = NULL;

	snprintf(x->what[x->n_sinks], sizeof(x->what[0]), "%s", what);
	s->what = x->what[x->n_sinks];
	s->session = fbSessionAlloc(x->model);
	fbSessionSetDomain(s->session, domain); /* before the templates: they are per domain */
	t4 = fbTemplateAlloc(x->model);
	t6 = fbTemplateAlloc(x->model);
	if (!fbTemplateAppendSpecArray(t4, v4_spec, flags, &gerr) ||
		!fbTemplateAppendSpecArray(t6, v6_spec, flags, &gerr) ||
		!fbSessionAddTemplate(s->session, TRUE, TID_V4, t4, &gerr) ||
		!fbSessionAddTemplate(s->session, FALSE, TID_V4, t4, &gerr) ||
		!fbSessionAddTemplate(s->session, TRUE, TID_V6, t6, &gerr) ||
		!fbSessionAddTemplate(s->session, FALSE, TID_V6, t6, &gerr)) {
		snprintf(err, errlen, "IPFIX templates for %s: %s", what, gerr->message);
		g_clear_error(&gerr);
		return -1;
	}
	s->fd = fd;
	s->fp = fp;
	exp = fd >= 0 ? fbExporterAllocBuffer(s->msg, sizeof(s->msg)) : fbExporterAllocFP(fp);
	s->exp = exp;
	s->buf = fBufAllocForExport(s->session, exp);
	fBufSetAutomaticMode(s->buf, FALSE);
	x->n_sinks++;
	return 0;
}

static int
parse_collector(struct flow_exporter *x, const char *spec, int *fd, char *err, size_t errlen)
{
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai = NULL;
	char *end;
	unsigned long port;
	size_t hl;
	int rc;

	if (colon == NULL || colon == spec || colon[1] == '\0') {
		snprintf(err, errlen, "--ipfix-collector '%s': expected HOST:PORT", spec);
		return -1;
	}
	hl = (size_t)(colon - spec);
	if (spec[0] == '[' && hl >= 2 && spec[hl - 1] == ']') { /* [v6]:port */
		spec++;
		hl -= 2;
	}
	if (hl >= sizeof(x->host)) {
		snprintf(err, errlen, "--ipfix-collector '%s': host name too long", spec);
		return -1;
	}
	memcpy(x->host, spec, hl);
	x->host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port == 0 || port > 65535) {
		snprintf(err, errlen, "--ipfix-collector '%s': port '%s' is not 1..65535", spec,
			colon + 1);
		return -1;
	}
	snprintf(x->port, sizeof(x->port), "%lu", port);
	rc = getaddrinfo(x->host, x->port, &hints, &ai);
	if (rc != 0) {
		snprintf(err, errlen, "--ipfix-collector '%s': cannot resolve '%s': %s", spec,
			x->host, gai_strerror(rc));
		return -1;
	}
	*fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (*fd < 0 || connect(*fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		snprintf(err, errlen, "--ipfix-collector '%s': cannot open a UDP socket to it: %s",
			spec, strerror(errno));
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	return 0;
}

struct flow_exporter *
flow_export_create(const struct flow_export_cfg *cfg, int socket_id, char *err, size_t errlen)
{
	static atomic_uint serial;
	struct flow_exporter *x;
	char name[RTE_RING_NAMESIZE], what[300];
	struct timespec now;

	if (cfg->collector == NULL && cfg->file == NULL) {
		snprintf(err, errlen, "IPFIX export needs --ipfix-collector or --ipfix-file");
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL) {
		snprintf(err, errlen, "out of memory for the IPFIX exporter");
		return NULL;
	}
	pthread_mutex_init(&x->err_lock, NULL);
	x->template_interval_s = cfg->template_interval_s;
	x->app_name = cfg->app_name;
	x->app_name_arg = cfg->app_name_arg;
	x->hz = rte_get_tsc_hz();
	clock_gettime(CLOCK_REALTIME, &now);
	x->tsc0 = rte_rdtsc();
	x->epoch_ms0 = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
	snprintf(name, sizeof(name), "flow_export_%u", atomic_fetch_add(&serial, 1));
	x->ring = rte_ring_create_elem(name, sizeof(struct export_elem), cfg->queue_size, socket_id,
		RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (x->ring == NULL) {
		snprintf(err, errlen, "cannot allocate the IPFIX export queue (--export-queue %u)",
			cfg->queue_size);
		goto fail;
	}
	x->model = fbInfoModelAlloc();
	x->sinks[0].fd = x->sinks[1].fd = -1;
	if (cfg->collector != NULL) {
		int fd;

		if (parse_collector(x, cfg->collector, &fd, err, errlen) < 0)
			goto fail;
		snprintf(what, sizeof(what), "collector %s (UDP)", cfg->collector);
		if (sink_open(x, fd, NULL, what, cfg->observation_domain, err, errlen) < 0) {
			close(fd);
			goto fail;
		}
	}
	if (cfg->file != NULL) {
		/* opened here, not by libfixbuf: a bad path fails now, and the last
		 * buffered bytes' write error is ours to see (flow_export_finish) */
		FILE *fp = fopen(cfg->file, "wb");

		if (fp == NULL) {
			snprintf(err, errlen, "--ipfix-file '%s': %s", cfg->file, strerror(errno));
			goto fail;
		}
		snprintf(what, sizeof(what), "file %s", cfg->file);
		if (sink_open(x, -1, fp, what, cfg->observation_domain, err, errlen) < 0) {
			fclose(fp);
			goto fail;
		}
	}
	send_templates(x);
	if (pthread_create(&x->thread, NULL, writer_main, x) != 0) {
		snprintf(err, errlen, "cannot start the IPFIX writer thread");
		goto fail;
	}
	x->thread_started = true;
	return x;
fail:
	flow_export_free(x);
	return NULL;
}

struct finish_ctx {
	struct flow_exporter *x;
	struct flow_counters c;
};

static void
finish_one(const struct flow_record *r, void *arg)
{
	struct finish_ctx *f = arg;
	uint64_t dropped = f->c.export_dropped;
	unsigned tries;

	/* Off the fast path: wait (bounded) for room rather than drop. */
	for (tries = 0; tries < 10000; tries++) {
		flow_export_hook(r, FLOW_END_FORCED, &f->c, f->x);
		if (f->c.export_dropped == dropped)
			return;
		f->c.export_dropped = dropped;
		if (atomic_load(&f->x->stop))
			break;
		rte_delay_us_sleep(1000);
	}
	atomic_fetch_add(&f->x->forced_dropped, 1);
}

void
flow_export_finish(struct flow_exporter *x, const struct flow_table *t)
{
	struct finish_ctx f = { .x = x };

	if (x == NULL || !x->thread_started || atomic_load(&x->stop))
		return;
	flow_table_foreach(t, finish_one, &f);
	atomic_store(&x->stop, true);
	pthread_join(x->thread, NULL);
	x->thread_started = false;
	send_templates(x); /* a file reader needs them; a late collector too */
	for (unsigned i = 0; i < x->n_sinks; i++)
		if (x->sinks[i].fp != NULL && fflush(x->sinks[i].fp) != 0) {
			char msg[160];

			snprintf(msg, sizeof(msg),
				"writing the last buffered messages: %s (the file misses them)",
				strerror(errno));
			note_error_msg(x, &x->sinks[i], msg);
		}
}

void
flow_export_get_stats(const struct flow_exporter *x, struct flow_export_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->flows_dequeued = atomic_load(&x->flows_dequeued);
	s->records_exported = atomic_load(&x->records_exported);
	s->records_lost = atomic_load(&x->records_lost);
	s->templates_sent = atomic_load(&x->templates_sent);
	s->forced_dropped = atomic_load(&x->forced_dropped);
	s->finished = atomic_load(&x->stop) && !x->thread_started;
	pthread_mutex_lock((pthread_mutex_t *)(uintptr_t)&x->err_lock);
	snprintf(s->first_error, sizeof(s->first_error), "%s", x->first_error);
	pthread_mutex_unlock((pthread_mutex_t *)(uintptr_t)&x->err_lock);
}

bool
flow_export_file_failed(const struct flow_exporter *x)
{
	for (unsigned i = 0; x != NULL && i < x->n_sinks; i++)
		if (x->sinks[i].fd < 0 && x->sinks[i].failed)
			return true;
	return false;
}

void
flow_export_free(struct flow_exporter *x)
{
	unsigned i;

	if (x == NULL)
		return;
	if (x->thread_started) {
		atomic_store(&x->stop, true);
		pthread_join(x->thread, NULL);
	}
	for (i = 0; i < x->n_sinks; i++) {
		fBufFree(x->sinks[i].buf); /* frees the session and exporter */
		if (x->sinks[i].fd >= 0)
			close(x->sinks[i].fd);
		if (x->sinks[i].fp != NULL)
			fclose(x->sinks[i].fp); /* flushed and checked in flow_export_finish */
	}
	if (x->model != NULL)
		fbInfoModelFree(x->model);
	rte_ring_free(x->ring);
	pthread_mutex_destroy(&x->err_lock);
	free(x);
}
