/* ac-ids: rules mode's engine (ids.h) over capture files, without DPDK:
 * the same decoding, defragmentation, flows, TCP reassembly and rules as
 * the app, on a single-threaded flow table (flow_simple.h) with the
 * captures' own time.  Alerts as JSON lines, the reassembled streams
 * (--dump-streams), the counters (--stats).  The tests and the fuzzers run
 * the engine through it; users can replay a capture with it. */
#include <inttypes.h>
#include <math.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "alert_json.h"
#include "engine.h"
#include "flow_simple.h"
#include "ids.h"
#include "ids_opts.h"
#include "rule_opts.h"
#include "stats_json.h"

static const char usage[] =
	"usage: ac-ids [options] CAPTURE...\n"
	"Judge capture files with the rules as ahocorasick's rules mode does (IP\n"
	"defragmentation, flows, TCP reassembly, HTTP buffers), without DPDK; time is\n"
	"the captures' own.  Each capture starts with no flow.  Link types: Ethernet,\n"
	"raw IPv4/IPv6, Linux cooked (v1, v2), BSD loopback, PPP, Cisco HDLC, ARCNET.\n"
	"VXLAN and Geneve tunnels are decapsulated.\n" AC_RULE_OPTS_USAGE IDS_OPTS_USAGE
	"  --engine E            ac (default) or hs\n"
	"  --max-flows N         flow records (default 65536)\n"
	"  --flow-timeout S      a flow idle for S seconds of capture time ends (180)\n"
	"  --alerts FILE         alerts as JSON lines (default: stdout)\n"
	"  --dump-streams FILE   each PDU judged, a line: SRC SPORT DST DPORT GAP HEX\n"
	"                        (GAP 1: bytes were lost before it)\n"
	"  --stats FILE          the counters as JSON\n"
	"  -h, --help            this text\n";

struct tool {
	const struct ac_verifier *v;
	struct ids_task *task;
	FILE *alerts, *streams;
	struct timeval ts;
	uint64_t alerts_n;
};

static void
on_alert(void *ctx, const struct ids_alert *a)
{
	struct tool *tl = ctx;
	char ts[64];
	time_t sec = tl->ts.tv_sec;
	struct tm tm;
	gmtime_r(&sec, &tm);
	size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + n, sizeof(ts) - n, ".%06ld+0000", (long)tl->ts.tv_usec);
	char *s = ids_alert_json(tl->v, a, ts, false);
	if (s != NULL) {
		fprintf(tl->alerts, "%s\n", s);
		free(s);
	}
	tl->alerts_n++;
}

static void
on_pdu(void *ctx, const struct ac_pkt_meta *m, const uint8_t *p, uint32_t n, bool gap)
{
	struct tool *tl = ctx;
	char src[64], dst[64];
	ac_addr_str(m->src, src, sizeof(src));
	ac_addr_str(m->dst, dst, sizeof(dst));
	fprintf(tl->streams, "%s %u %s %u %d ", src, m->sport, dst, m->dport, gap ? 1 : 0);
	for (uint32_t i = 0; i < n; i++)
		fprintf(tl->streams, "%02x", p[i]);
	fputc('\n', tl->streams);
}

static void
on_end(void *ctx, void *state, const struct flow_key *k, uint64_t now)
{
	struct tool *tl = ctx;
	ids_flow_ended(tl->task, state, k, now);
}

/* PPP's protocol (RFC 1661, one byte when compressed), after the address
 * and control bytes 0xff 0x03 of HDLC-like framing (RFC 1662) if present,
 * as the Ethernet type of what it carries; 0 for anything else (LCP, IPCP,
 * ...).  *skip: the PPP header's length. */
static uint16_t
ppp_type(const uint8_t *pkt, uint32_t len, uint32_t *skip)
{
	uint32_t o = len >= 2 && pkt[0] == 0xff && pkt[1] == 0x03 ? 2 : 0;
	uint16_t proto;
	if (len < o + 1)
		return 0;
	if (pkt[o] & 1) { /* a compressed protocol field: its one byte is odd */
		proto = pkt[o];
		*skip = o + 1;
	} else {
		if (len < o + 2)
			return 0;
		proto = (uint16_t)(pkt[o] << 8 | pkt[o + 1]);
		*skip = o + 2;
	}
	switch (proto) {
	case 0x0021:
		return 0x0800;
	case 0x0057:
		return 0x86dd;
	case 0x0281: /* MPLS unicast */
		return 0x8847;
	case 0x0283: /* MPLS multicast */
		return 0x8848;
	default:
		return 0;
	}
}

/* An ARCNET protocol id as an Ethernet type (RFC 1051's old IP, RFC 1201's
 * IP, IPv6), 0 for anything else. */
static uint16_t
arcnet_type(uint8_t t)
{
	return t == 0xf0 || t == 0xd4 ? 0x0800 : t == 0xc4 ? 0x86dd : 0;
}

static bool
link_read(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_RAW:
	case 228: /* DLT_IPV4 */
	case 229: /* DLT_IPV6 */
	case DLT_LINUX_SLL:
	case 276: /* DLT_LINUX_SLL2 */
	case DLT_PPP:
	case DLT_PPP_SERIAL:
	case DLT_C_HDLC:
	case DLT_ARCNET_LINUX:
	case DLT_ARCNET:
	case DLT_NULL:
	case DLT_LOOP:
		return true;
	default:
		return false;
	}
}

/* The frame as Ethernet: the link header rewritten into buf when needed.
 * 0: a link type or frame not handled. */
static uint32_t
as_ethernet(int dlt, const uint8_t *pkt, uint32_t len, uint8_t *buf, const uint8_t **out)
{
	uint32_t skip;
	uint16_t type;
	switch (dlt) {
	case DLT_EN10MB:
		*out = pkt;
		return len;
	case DLT_RAW:
	case 228: /* DLT_IPV4 */
	case 229: /* DLT_IPV6 */
		if (len < 1)
			return 0;
		skip = 0;
		type = pkt[0] >> 4 == 6 ? 0x86dd : 0x0800;
		break;
	case DLT_LINUX_SLL:
		if (len < 16)
			return 0;
		skip = 16;
		type = (uint16_t)(pkt[14] << 8 | pkt[15]);
		break;
	case 276: /* DLT_LINUX_SLL2 */
		if (len < 20)
			return 0;
		skip = 20;
		type = (uint16_t)(pkt[0] << 8 | pkt[1]);
		break;
	case DLT_PPP:
		type = ppp_type(pkt, len, &skip);
		if (type == 0)
			return 0;
		break;
	case DLT_PPP_SERIAL: /* PPP in HDLC-like framing, or Cisco HDLC */
	case DLT_C_HDLC:
		if (dlt == DLT_PPP_SERIAL && len >= 1 && pkt[0] == 0xff) {
			type = ppp_type(pkt, len, &skip);
		} else {
			/* Cisco HDLC: address (0x0f unicast, 0x8f broadcast),
			 * control, an Ethernet type */
			if (len < 4)
				return 0;
			skip = 4;
			type = (uint16_t)(pkt[2] << 8 | pkt[3]);
		}
		if (type == 0)
			return 0;
		break;
	case DLT_ARCNET_LINUX:
		/* Linux's header: source, destination, offset (2), protocol id,
		 * then for RFC 1201's ids a split flag and a sequence number (2);
		 * Linux hands over packets whole. */
		if (len < 5)
			return 0;
		skip = pkt[4] == 0xf0 || pkt[4] == 0xf1 || pkt[4] == 0x80 ? 5 : 8;
		type = arcnet_type(pkt[4]);
		if (type == 0 || len < skip)
			return 0;
		break;
	case DLT_ARCNET:
		/* ATA 878.1: source, destination, protocol id, then for RFC
		 * 1201's ids a split flag and a sequence number (2), or for an
		 * exception packet 0xff and those again.  A piece of a split
		 * packet is not put back together: skipped. */
		if (len < 3)
			return 0;
		type = arcnet_type(pkt[2]);
		if (type == 0)
			return 0;
		skip = 3;
		if (pkt[2] == 0xd4 || pkt[2] == 0xc4) {
			skip = len >= 4 && pkt[3] == 0xff ? 10 : 6;
			if (len < skip || pkt[skip - 3] != 0)
				return 0;
		}
		break;
	case DLT_NULL:
	case DLT_LOOP: {
		if (len < 4)
			return 0;
		uint32_t af = dlt == DLT_LOOP
			? (uint32_t)pkt[0] << 24 | pkt[1] << 16 | pkt[2] << 8 | pkt[3]
			: (uint32_t)pkt[3] << 24 | pkt[2] << 16 | pkt[1] << 8 | pkt[0];
		skip = 4;
		type = af == 2                                           ? 0x0800
			: (af == 10 || af == 24 || af == 28 || af == 30) ? 0x86dd
									 : 0;
		if (type == 0)
			return 0;
		break;
	}
	default:
		return 0;
	}
	if (len - skip > IDS_MAX_FRAME - 14)
		len = IDS_MAX_FRAME - 14 + skip;
	memset(buf, 0, 12);
	buf[12] = (uint8_t)(type >> 8);
	buf[13] = (uint8_t)type;
	memcpy(buf + 14, pkt + skip, len - skip);
	*out = buf;
	return len - skip + 14;
}

static json_t *
stats_json(struct ids_task *t, const struct ids_engine *e, uint64_t frames, uint64_t skipped)
{
	const struct ids_task_stats *s = ids_task_stats(t);
	json_t *o = json_object(), *un = json_object(), *ev = json_object();
	json_object_set_new(o, "kind", json_string("measured"));
	json_object_set_new(o, "frames", json_integer((json_int_t)frames));
	json_object_set_new(o, "frames_link_type_unhandled", json_integer((json_int_t)skipped));
	json_object_set_new(o, "packets_judged", json_integer((json_int_t)s->packets_judged));
	for (int r = 1; r < IDS_PKT_N_STATUS; r++)
		json_object_set_new(
			un, ids_status_name[r], json_integer((json_int_t)s->unscanned[r]));
	json_object_set_new(un, "fragment_held", json_integer((json_int_t)s->fragments_held));
	json_object_set_new(un, "ttl_insertion", json_integer((json_int_t)s->ttl_insertions));
	json_object_set_new(o, "packets_unscanned", un);
	json_object_set_new(o, "tunnels", ids_tunnels_json(s));
	json_object_set_new(o, "raw_skipped", json_integer((json_int_t)s->raw_skipped));
	json_object_set_new(o, "fragments_held", json_integer((json_int_t)s->fragments_held));
	json_object_set_new(o, "datagrams_reassembled", json_integer((json_int_t)s->datagrams));
	json_object_set_new(o, "ttl_insertions", json_integer((json_int_t)s->ttl_insertions));
	json_object_set_new(o, "alerts", json_integer((json_int_t)s->alerts));
	json_object_set_new(o, "alerts_stream", json_integer((json_int_t)s->alerts_stream));
	json_object_set_new(o, "alerts_events", json_integer((json_int_t)s->alerts_events));
	json_object_set_new(o, "pdus", json_integer((json_int_t)s->pdus));
	json_object_set_new(o, "pdu_bytes", json_integer((json_int_t)s->pdu_bytes));
	json_object_set_new(o, "pdus_rescanned", json_integer((json_int_t)s->pdus_rescanned));
	json_object_set_new(o, "straddles", json_integer((json_int_t)s->straddles));
	json_object_set_new(o, "dedup_skipped", json_integer((json_int_t)s->dedup_skipped));
	json_object_set_new(o, "untracked", json_integer((json_int_t)s->untracked));
	for (int k = 0; k < IDS_EV_N; k++)
		json_object_set_new(
			ev, ids_event_info[k].name, json_integer((json_int_t)s->events[k]));
	json_object_set_new(o, "events", ev);
	json_object_set_new(o, "stream",
		json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "segments",
			(json_int_t)s->stream.segments, "bytes_in_order",
			(json_int_t)s->stream.bytes_in_order, "retransmitted",
			(json_int_t)s->stream.retransmitted, "overlaps",
			(json_int_t)s->stream.overlaps, "beyond_window",
			(json_int_t)s->stream.beyond_window, "no_slot",
			(json_int_t)s->stream.no_slot, "shed", (json_int_t)s->stream.shed,
			"lost_bytes", (json_int_t)s->stream.lost_bytes));
	json_object_set_new(o, "http",
		json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "requests",
			(json_int_t)s->http_requests, "responses", (json_int_t)s->http_responses,
			"dechunked", (json_int_t)s->http.dechunked, "decompressed",
			(json_int_t)s->http.decompressed, "decode_errors",
			(json_int_t)s->http.decode_errors, "decompression_bound_hit",
			(json_int_t)s->http.bound_hit));
	const struct ids_defrag_stats *d = ids_task_defrag_stats(t);
	if (d != NULL)
		json_object_set_new(o, "defrag",
			json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "fragments",
				(json_int_t)d->fragments, "reassembled", (json_int_t)d->reassembled,
				"timeouts", (json_int_t)d->timeouts, "evicted_full",
				(json_int_t)d->evicted_full, "evicted_memcap",
				(json_int_t)d->evicted_memcap, "dropped", (json_int_t)d->dropped,
				"bytes_held_max", (json_int_t)d->bytes_held_max));
	const struct ids_slot_pool *pool = ids_engine_pool(e);
	if (pool != NULL)
		json_object_set_new(o, "stream_pool",
			json_pack("{s:I, s:I}", "slots", (json_int_t)ids_slot_pool_slots(pool),
				"bytes", (json_int_t)ids_slot_pool_bytes(pool)));
	return o;
}

int
main(int argc, char **argv)
{
	struct ac_rule_opts ro = { 0 };
	struct ids_opts io;
	const char *engine_name = "ac", *alerts_path = NULL, *streams_path = NULL,
		   *stats_path = NULL;
	uint64_t max_flows = 65536;
	double flow_timeout = 180;
	const char **caps = calloc((size_t)argc, sizeof(*caps));
	int n_caps = 0;
	char err[512];

	ids_opts_init(&io);
	for (int i = 1; i < argc;) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		if (a[0] != '-') {
			caps[n_caps++] = a;
			i++;
			continue;
		}
		int n = ac_rule_opt_parse(&ro, argc - i, argv + i);
		if (n == 0)
			n = ids_opt_parse(&io, argc - i, argv + i);
		if (n < 0)
			return 2;
		if (n > 0) {
			i += n;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "ac-ids: unknown option '%s' (or it needs a value)\n%s", a,
				usage);
			return 2;
		}
		const char *v = argv[i + 1];
		if (strcmp(a, "--engine") == 0)
			engine_name = v;
		else if (strcmp(a, "--alerts") == 0)
			alerts_path = v;
		else if (strcmp(a, "--dump-streams") == 0)
			streams_path = v;
		else if (strcmp(a, "--stats") == 0)
			stats_path = v;
		else if (strcmp(a, "--max-flows") == 0)
			max_flows = strtoull(v, NULL, 10);
		else if (strcmp(a, "--flow-timeout") == 0)
			flow_timeout = strtod(v, NULL);
		else {
			fprintf(stderr, "ac-ids: unknown option '%s'\n%s", a, usage);
			return 2;
		}
		i += 2;
	}
	int kind = ac_engine_kind_parse(engine_name);
	if (kind < 0 || max_flows == 0 || max_flows > (1u << 24) || !(flow_timeout >= 0)) {
		fprintf(stderr, "ac-ids: bad --engine '%s', --max-flows or --flow-timeout\n",
			engine_name);
		return 2;
	}
	if ((ro.stateless || ro.no_reassembly) && io.any) {
		fprintf(stderr, "ac-ids: reassembly options given with %s\n",
			ro.stateless ? "--stateless" : "--no-reassembly");
		return 2;
	}
	ro.keep_all = true;
	struct ac_ruleset rs;
	struct ac_vars vars;
	struct ac_verifier ver;
	if (ac_rule_opts_load(&ro, &rs) < 0)
		return 2;
	if (ac_rule_opts_build_verifier(&ro, &rs, &vars, &ver) < 0)
		return 2;
	struct ids_engine_cfg c = { .ver = &ver, .flows = !ro.stateless };
	c.reassembly = !ro.stateless && !ro.no_reassembly;
	struct ids_target_policy tp;
	if (ids_opts_apply(&io, &vars, 1e6, &tp, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "ac-ids: %s\n", err);
		return 2;
	}
	if (ver.n_fp > 0) {
		c.engine = ac_engine_build_opt((enum ac_engine_kind)kind, ver.fp, ver.n_fp, true,
			1u << 20, err, sizeof(err));
		if (c.engine == NULL) {
			fprintf(stderr, "ac-ids: %s\n", err);
			return 1;
		}
	}
	struct ids_engine *e = ids_engine_new(&c, err, sizeof(err));
	if (e == NULL) {
		fprintf(stderr, "ac-ids: %s\n", err);
		return 2;
	}
	struct tool tl = { .v = &ver, .alerts = stdout };
	if (alerts_path != NULL && (tl.alerts = fopen(alerts_path, "w")) == NULL) {
		perror(alerts_path);
		return 1;
	}
	if (streams_path != NULL && (tl.streams = fopen(streams_path, "w")) == NULL) {
		perror(streams_path);
		return 1;
	}
	struct flow_simple *fl = NULL;
	if (c.flows) {
		fl = flow_simple_new((uint32_t)max_flows, ids_engine_state_bytes(e),
			(uint64_t)(flow_timeout * 1e6), on_end, &tl);
		if (fl == NULL) {
			fprintf(stderr, "ac-ids: out of memory for the flow table\n");
			return 1;
		}
	}
	tl.task = ids_task_new(e, fl, &flow_simple_ops, NULL, on_alert, &tl, err, sizeof(err));
	if (tl.task == NULL) {
		fprintf(stderr, "ac-ids: %s\n", err);
		return 1;
	}
	if (tl.streams != NULL)
		ids_task_set_pdu_hook(tl.task, on_pdu, &tl);
	uint8_t *buf = malloc(IDS_MAX_FRAME);
	uint64_t frames = 0, skipped = 0, now = 0;
	int rc = 0;
	for (int f = 0; f < n_caps; f++) {
		char perr[PCAP_ERRBUF_SIZE];
		pcap_t *pc = pcap_open_offline(caps[f], perr);
		if (pc == NULL) {
			fprintf(stderr, "ac-ids: %s: %s\n", caps[f], perr);
			rc = 1;
			continue;
		}
		int dlt = pcap_datalink(pc);
		if (!link_read(dlt)) {
			const char *name = pcap_datalink_val_to_name(dlt);
			fprintf(stderr,
				"ac-ids: %s: link type %d (%s) is not one ac-ids reads (see "
				"--help): "
				"its frames are counted in frames_link_type_unhandled, not "
				"judged\n",
				caps[f], dlt, name != NULL ? name : "unknown");
		}
		struct pcap_pkthdr *h;
		const u_char *pkt;
		int r;
		while ((r = pcap_next_ex(pc, &h, &pkt)) == 1) {
			frames++;
			uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000u + (uint64_t)h->ts.tv_usec;
			if (ts > now)
				now = ts; /* the flows' clock never goes back */
			tl.ts = h->ts;
			const uint8_t *frame;
			uint32_t len = as_ethernet(dlt, pkt, h->caplen, buf, &frame);
			if (len == 0) {
				skipped++;
				continue;
			}
			if (len > IDS_MAX_FRAME)
				len = IDS_MAX_FRAME;
			uint32_t l3;
			ids_process(tl.task, frame, len, now, &l3);
		}
		if (r == -1) {
			fprintf(stderr, "ac-ids: %s: %s\n", caps[f], pcap_geterr(pc));
			rc = 1;
		}
		pcap_close(pc);
		if (fl != NULL)
			flow_simple_end_all(fl, now);
	}
	if (stats_path != NULL) {
		json_t *o = stats_json(tl.task, e, frames, skipped);
		if (json_dump_file(o, stats_path, JSON_INDENT(1)) < 0) {
			fprintf(stderr, "ac-ids: cannot write %s\n", stats_path);
			rc = 1;
		}
		json_decref(o);
	}
	if (tl.streams != NULL && fclose(tl.streams) != 0)
		rc = 1;
	if (tl.alerts != stdout && fclose(tl.alerts) != 0)
		rc = 1;
	ids_task_free(tl.task);
	flow_simple_free(fl);
	ids_engine_free(e);
	ac_engine_free(c.engine);
	ids_target_policy_free(&tp);
	ac_verifier_free(&ver);
	ac_vars_free(&vars);
	ac_ruleset_free(&rs);
	free(buf);
	free(caps);
	return rc;
}
