/* The analyzer app: the P stage decodes L2-L4, counts, runs the optional BPF
 * filter and hands fixed-size records (log lines, pcap copies) to the log
 * writer through one SP/SC ring per task.  A full ring never waits: the
 * record is counted as lost and the count is in the statistics. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek_zc.h>

#include "analyzer.h"
#include "filter.h"
#include "log_writer.h"
#include "pp_app.h"
#include "pp_outfile.h"

_Static_assert(
	sizeof(struct an_log_record) % 8 == 0, "ring elements must be a multiple of 8 bytes");

static const char *const drop_reasons[] = { "filter_unmatched" };

static const char *const l4_names[AN_L4_COUNT] = {
	[AN_L4_TCP] = "tcp",
	[AN_L4_UDP] = "udp",
	[AN_L4_ICMP] = "icmp",
	[AN_L4_ICMPV6] = "icmpv6",
	[AN_L4_OTHER] = "other",
	[AN_L4_NONE] = "none",
};

static const char USAGE[] =
	"  --filter EXPR        BPF expression in libpcap (tcpdump) syntax; only\n"
	"                       matching packets are logged (all are counted)\n"
	"  --drop-unmatched     drop packets the filter rejects (default: forward)\n"
	"  --log FILE           write one record per logged packet to FILE\n"
	"  --log-format F       csv (default) or jsonl\n"
	"  --pcap-out FILE      write logged packets to FILE (pcap, Ethernet)\n"
	"  --snaplen B          bytes of each packet kept in --pcap-out, 1..16384\n"
	"                       (default 2048)\n"
	"  --log-ring N         slots of each task's record ring (and pcap ring),\n"
	"                       power of two, 64..1048576 (default 4096); a record\n"
	"                       that finds its ring full is counted as lost\n"
	"Logging runs on a writer thread off the task contexts; the P task never\n"
	"waits for it.  Statistics (\"app_stats\"): packets by L3/L4, decode\n"
	"errors by kind, filter passed/failed, records written and lost.\n";

static int
parse_uint(const char *opt, const char *v, unsigned lo, unsigned hi, unsigned *out)
{
	uint64_t x;

	if (pp_parse_u64(opt, v, lo, hi, &x) < 0)
		return -1;
	*out = (unsigned)x;
	return 0;
}

static int
analyzer_parse_opt(void *cfgp, int argc, char **argv)
{
	struct an_cfg *cfg = cfgp;
	const char *o = argv[0];

	if (strcmp(o, "--drop-unmatched") == 0) {
		cfg->drop_unmatched = true;
		return 1;
	}
	static const char *const with_value[] = { "--filter", "--log", "--log-format", "--pcap-out",
		"--snaplen", "--log-ring", NULL };
	bool known = false;
	for (const char *const *w = with_value; *w != NULL; w++)
		known |= strcmp(o, *w) == 0;
	if (!known)
		return 0;
	if (argc < 2) {
		fprintf(stderr, "analyzer: %s needs a value\n", o);
		return -1;
	}
	const char *v = argv[1];
	if (strcmp(o, "--filter") == 0) {
		/* Compiled here to refuse a bad expression before EAL starts,
		 * and again in setup: nothing is left to free if the runtime
		 * gives up before setup. */
		char err[PCAP_ERRBUF_SIZE + 64];
		struct bpf_program prog;
		if (an_filter_compile(v, &prog, err, sizeof(err)) != 0) {
			fprintf(stderr, "analyzer: --filter '%s': %s\n", v, err);
			return -1;
		}
		pcap_freecode(&prog);
		cfg->filter_expr = v;
	} else if (strcmp(o, "--log") == 0) {
		cfg->log_path = v;
	} else if (strcmp(o, "--log-format") == 0) {
		if (strcmp(v, "csv") == 0) {
			cfg->log_format = AN_LOG_CSV;
		} else if (strcmp(v, "jsonl") == 0) {
			cfg->log_format = AN_LOG_JSONL;
		} else {
			fprintf(stderr,
				"analyzer: --log-format '%s': expected "
				"csv or jsonl\n",
				v);
			return -1;
		}
	} else if (strcmp(o, "--pcap-out") == 0) {
		cfg->pcap_path = v;
	} else if (strcmp(o, "--snaplen") == 0) {
		if (parse_uint(o, v, 1, AN_MAX_SNAPLEN, &cfg->snaplen) != 0)
			return -1;
	} else { /* --log-ring */
		if (parse_uint(o, v, 64, 1u << 20, &cfg->log_ring) != 0)
			return -1;
		if (cfg->log_ring & (cfg->log_ring - 1)) {
			fprintf(stderr,
				"analyzer: --log-ring '%s': expected a "
				"power of two\n",
				v);
			return -1;
		}
	}
	return 2;
}

/* 0, or -1 when closing a file failed (what it left is lost; printed). */
static int
close_outputs(struct an_state *st)
{
	int rc = 0;
	/* Closing writes what a failed flush left: on a pipe without a
	 * reader that raises SIGPIPE, which must fail the close, not kill
	 * the process.  Block it here and discard it if it came. */
	sigset_t pipe_sig, old_mask;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, &old_mask);
	if (st->log_file != NULL && fclose(st->log_file) != 0) {
		fprintf(stderr, "analyzer: --log %s: %s\n", st->cfg->log_path, strerror(errno));
		rc = -1;
	}
	st->log_file = NULL;
	if (st->pcap_dumper != NULL) {
		if (pcap_dump_flush(st->pcap_dumper) != 0) {
			fprintf(stderr, "analyzer: --pcap-out %s: write error\n",
				st->cfg->pcap_path);
			rc = -1;
		}
		pcap_dump_close(st->pcap_dumper);
		st->pcap_dumper = NULL;
	}
	if (st->pcap_dead != NULL)
		pcap_close(st->pcap_dead);
	st->pcap_dead = NULL;
	const struct timespec zero = { 0, 0 };
	while (sigtimedwait(&pipe_sig, NULL, &zero) == SIGPIPE)
		;
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	return rc;
}

/* fopen(path, "w" or "a"), except that a FIFO with no reader is refused
 * (ENXIO) instead of blocking start-up until one comes. */
static FILE *
open_output(const char *path, bool append)
{
	int fd = open(path,
		O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0666);
	if (fd < 0)
		return NULL;
	/* The writer thread may block on a slow reader: that is its job. */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	FILE *f = fdopen(fd, append ? "a" : "w");
	if (f == NULL) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

static int
analyzer_setup(void *cfgp, const struct pp_setup_info *info, void **out)
{
	struct an_cfg *cfg = cfgp;
	if (cfg->snaplen == 0)
		cfg->snaplen = AN_DEFAULT_SNAPLEN;
	if (cfg->log_ring == 0)
		cfg->log_ring = AN_DEFAULT_LOG_RING;

	struct an_state *st = calloc(1, sizeof(*st));
	if (st == NULL)
		return -ENOMEM;
	st->cfg = cfg;
	st->log_format = cfg->log_format;
	st->n_tasks = info->n_instances;
	st->tasks = calloc(info->n_instances, sizeof(st->tasks[0]));
	if (st->tasks == NULL) {
		free(st);
		return -ENOMEM;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	st->tsc0 = rte_rdtsc();
	st->ns0 = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	st->hz = rte_get_tsc_hz();

	int rc = 0;
	if (cfg->filter_expr != NULL) {
		char err[PCAP_ERRBUF_SIZE + 64];
		if (an_filter_compile(cfg->filter_expr, &cfg->filter, err, sizeof(err)) != 0) {
			fprintf(stderr, "analyzer: --filter '%s': %s\n", cfg->filter_expr, err);
			rc = -EINVAL;
			goto fail;
		}
		cfg->filter_compiled = true;
	}
	/* --serve runs setup once per placement: later runs append, so no
	 * run's records overwrite an earlier one's. */
	bool append = cfg->runs++ > 0;
	if (cfg->log_path != NULL) {
		st->log_file = open_output(cfg->log_path, append);
		if (st->log_file == NULL) {
			rc = -errno;
			fprintf(stderr, "analyzer: --log %s: %s\n", cfg->log_path,
				errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
			goto fail;
		}
		/* Fully buffered, stdio's default off a terminal: glibc's
		 * buffer is st_blksize bytes, 4 KiB on a pipe. */
		if (!append)
			fputs(an_log_header(cfg->log_format), st->log_file);
	}
	if (cfg->pcap_path != NULL) {
		st->pcap_dead = pcap_open_dead(DLT_EN10MB, (int)cfg->snaplen);
		if (st->pcap_dead == NULL) {
			fprintf(stderr,
				"analyzer: --pcap-out %s: pcap_open_dead "
				"failed\n",
				cfg->pcap_path);
			rc = -ENOMEM;
			goto fail;
		}
		const char *why = NULL;
		if (append) {
			/* libpcap checks the existing file's header */
			st->pcap_dumper = pcap_dump_open_append(st->pcap_dead, cfg->pcap_path);
		} else {
			FILE *f = open_output(cfg->pcap_path, false);
			if (f == NULL)
				why = errno == ENXIO ? "a FIFO with no reader" : strerror(errno);
			else if ((st->pcap_dumper = pcap_dump_fopen(st->pcap_dead, f)) == NULL)
				fclose(f);
		}
		if (st->pcap_dumper == NULL) {
			fprintf(stderr, "analyzer: --pcap-out %s: %s\n", cfg->pcap_path,
				why != NULL ? why : pcap_geterr(st->pcap_dead));
			rc = -EIO;
			goto fail;
		}
		st->pcap_esize =
			(unsigned)RTE_ALIGN_CEIL(sizeof(struct an_pcap_slot) + cfg->snaplen, 8);
	}
	if (st->log_file != NULL || st->pcap_dumper != NULL) {
		rc = an_writer_start(st);
		if (rc != 0) {
			fprintf(stderr,
				"analyzer: cannot start the log writer "
				"thread: %s\n",
				strerror(-rc));
			goto fail;
		}
	}
	*out = st;
	return 0;
fail:
	(void)close_outputs(st); /* set-up failed: nothing was written yet */
	if (cfg->filter_compiled) {
		pcap_freecode(&cfg->filter);
		cfg->filter_compiled = false;
	}
	free(st->tasks);
	free(st);
	return rc;
}

/* The record rings and task state live on the C heap, not in DPDK memory:
 * a log writer left blocked on a dead pipe (writer_stuck) may still touch
 * them after rte_eal_cleanup(), so they must outlive it.  rte_ring_init
 * does not record the element size; the memory is sized for it here. */
static struct rte_ring *
make_ring(const char *kind, unsigned instance, unsigned esize, unsigned slots)
{
	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "an_%s%u", kind, instance);
	ssize_t bytes = rte_ring_get_memsize_elem(esize, slots);
	void *mem = NULL;
	if (bytes < 0 || posix_memalign(&mem, RTE_CACHE_LINE_SIZE, (size_t)bytes) != 0) {
		fprintf(stderr,
			"analyzer: instance %u: cannot allocate the %s "
			"ring (%u slots of %u bytes; see --log-ring, --snaplen)\n",
			instance, kind, slots, esize);
		return NULL;
	}
	struct rte_ring *r = mem;
	if (rte_ring_init(r, name, slots, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0) {
		fprintf(stderr,
			"analyzer: instance %u: cannot set up the %s "
			"ring\n",
			instance, kind);
		free(mem);
		return NULL;
	}
	return r;
}

static int
analyzer_task_init(void *app_state, unsigned instance, void **out)
{
	struct an_state *st = app_state;
	struct an_cfg *cfg = st->cfg;
	struct an_task *t = NULL;
	if (posix_memalign((void **)&t, RTE_CACHE_LINE_SIZE, sizeof(*t)) != 0)
		return -ENOMEM;
	memset(t, 0, sizeof(*t));
	t->instance = instance;
	t->filter = cfg->filter_compiled ? cfg->filter.bf_insns : NULL;
	t->snaplen = cfg->snaplen;
	t->drop_unmatched = cfg->drop_unmatched;
	t->pcap_esize = st->pcap_esize;
	if (st->log_file != NULL) {
		t->log_ring =
			make_ring("log", instance, sizeof(struct an_log_record), cfg->log_ring);
		if (t->log_ring == NULL)
			goto fail;
	}
	if (st->pcap_dumper != NULL) {
		t->pcap_ring = make_ring("pcap", instance, st->pcap_esize, cfg->log_ring);
		if (t->pcap_ring == NULL)
			goto fail;
	}
	*out = t;
	__atomic_store_n(&st->tasks[instance], t, __ATOMIC_RELEASE);
	return 0;
fail:
	free(t->log_ring);
	free(t);
	return -ENOMEM;
}

static inline enum an_l4_class
l4_class(const struct an_packet *p)
{
	if (!(p->have & AN_HAVE_L4PROTO))
		return AN_L4_NONE;
	switch (p->l4_proto) {
	case 6:
		return AN_L4_TCP;
	case 17:
		return AN_L4_UDP;
	case 1:
		return AN_L4_ICMP;
	case 58:
		return AN_L4_ICMPV6;
	default:
		return AN_L4_OTHER;
	}
}

static inline void *
zc_slot(const struct rte_ring_zc_data *z, unsigned k, unsigned esize)
{
	return k < z->n1 ? (uint8_t *)z->ptr1 + (size_t)k * esize
			 : (uint8_t *)z->ptr2 + (size_t)(k - z->n1) * esize;
}

static void
analyzer_process(void *task_state, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	struct an_task *t = task_state;
	struct an_packet dec[PP_BURST];
	uint8_t sel[PP_BURST];
	unsigned n_sel = 0;
	uint64_t tsc = rte_rdtsc();

	/* The runtime has prefetched every packet's first line already. */
	for (unsigned i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];
		const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t caplen = rte_pktmbuf_data_len(m);
		an_decode(data, caplen, &dec[i]);
		t->by_l3[dec[i].l3]++;
		t->by_l4[l4_class(&dec[i])]++;
		t->by_status[dec[i].status]++;
		t->by_tunnel[dec[i].tunnel[0]]++;
		if (t->filter == NULL ||
			bpf_filter(t->filter, data, rte_pktmbuf_pkt_len(m), caplen)) {
			sel[n_sel++] = (uint8_t)i;
			verdict[i] = PP_VERDICT_FORWARD;
		} else {
			t->filter_failed++;
			verdict[i] = t->drop_unmatched ? 1 : PP_VERDICT_FORWARD;
		}
	}
	t->packets += n;
	t->filter_passed += n_sel;
	if (n_sel == 0)
		return;

	struct rte_ring_zc_data z;
	if (t->log_ring != NULL) {
		unsigned got = rte_ring_enqueue_zc_burst_elem_start(
			t->log_ring, sizeof(struct an_log_record), n_sel, &z, NULL);
		for (unsigned k = 0; k < got; k++) {
			struct an_log_record *r = zc_slot(&z, k, sizeof(struct an_log_record));
			const struct rte_mbuf *m = pkts[sel[k]];
			r->ts_ns = 0;
			r->tsc = tsc;
			r->wire_len = rte_pktmbuf_pkt_len(m);
			r->cap_len = rte_pktmbuf_data_len(m);
			r->instance = t->instance;
			r->pad_ = 0;
			r->pkt = dec[sel[k]];
		}
		rte_ring_enqueue_zc_elem_finish(t->log_ring, got);
		t->log_lost += n_sel - got;
		__atomic_store_n(&t->log_enqueued, t->log_enqueued + got, __ATOMIC_RELEASE);
	}
	if (t->pcap_ring != NULL) {
		unsigned got = rte_ring_enqueue_zc_burst_elem_start(
			t->pcap_ring, t->pcap_esize, n_sel, &z, NULL);
		for (unsigned k = 0; k < got; k++) {
			struct an_pcap_slot *s = zc_slot(&z, k, t->pcap_esize);
			const struct rte_mbuf *m = pkts[sel[k]];
			uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(m), t->snaplen);
			s->tsc = tsc;
			s->wire_len = rte_pktmbuf_pkt_len(m);
			s->cap_len = len;
			/* Copies across segments when the packet has several. */
			const void *d = rte_pktmbuf_read(m, 0, len, s->data);
			if (d != s->data)
				rte_memcpy(s->data, d, len);
		}
		rte_ring_enqueue_zc_elem_finish(t->pcap_ring, got);
		t->pcap_lost += n_sel - got;
		__atomic_store_n(&t->pcap_enqueued, t->pcap_enqueued + got, __ATOMIC_RELEASE);
	}
}

static json_t *
counts(const char *const *names, const uint64_t *sum, unsigned n)
{
	json_t *o = json_object();
	for (unsigned i = 0; i < n; i++)
		json_object_set_new(o, names[i], json_integer((json_int_t)sum[i]));
	return o;
}

static void
analyzer_stats(void *app_state, void *const *task_states, unsigned n_tasks, json_t *out)
{
	struct an_state *st = app_state;
	struct an_cfg *cfg = st->cfg;
	/* Records the tasks handed over before now are written (or counted
	 * as write errors) before they are reported. */
	int sync = an_writer_sync(st, 5000);
	bool synced = sync != -ETIMEDOUT;
	bool flushed = sync == 0;

	uint64_t l3[AN_L3_COUNT] = { 0 }, l4[AN_L4_COUNT] = { 0 }, status[AN_STATUS_COUNT] = { 0 },
		 tunnel[AN_TUN_COUNT] = { 0 };
	uint64_t pkts = 0, passed = 0, failed = 0, log_enq = 0, log_lost = 0, pcap_enq = 0,
		 pcap_lost = 0;
	json_t *per = json_array();
	for (unsigned i = 0; i < n_tasks; i++) {
		const struct an_task *t = task_states[i];
		if (t == NULL)
			continue;
		for (unsigned k = 0; k < AN_L3_COUNT; k++)
			l3[k] += t->by_l3[k];
		for (unsigned k = 0; k < AN_L4_COUNT; k++)
			l4[k] += t->by_l4[k];
		for (unsigned k = 0; k < AN_STATUS_COUNT; k++)
			status[k] += t->by_status[k];
		for (unsigned k = 0; k < AN_TUN_COUNT; k++)
			tunnel[k] += t->by_tunnel[k];
		pkts += t->packets;
		passed += t->filter_passed;
		failed += t->filter_failed;
		uint64_t le = __atomic_load_n(&t->log_enqueued, __ATOMIC_ACQUIRE);
		uint64_t pe = __atomic_load_n(&t->pcap_enqueued, __ATOMIC_ACQUIRE);
		log_enq += le;
		log_lost += t->log_lost;
		pcap_enq += pe;
		pcap_lost += t->pcap_lost;
		json_array_append_new(per,
			json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "index",
				(json_int_t)t->instance, "packets", (json_int_t)t->packets,
				"filter_passed", (json_int_t)t->filter_passed, "log_records_lost",
				(json_int_t)t->log_lost, "pcap_records_lost",
				(json_int_t)t->pcap_lost, "log_records_enqueued", (json_int_t)le));
	}
	uint64_t errors = pkts - status[AN_OK];
	json_object_set_new(out, "kind", json_string("measured"));
	/* For turning the runtime's per-task busy cycles into seconds. */
	json_object_set_new(out, "tsc_hz", json_integer((json_int_t)st->hz));
	json_object_set_new(out, "packets", json_integer((json_int_t)pkts));
	json_object_set_new(out, "by_l3", counts(an_l3_names, l3, AN_L3_COUNT));
	json_object_set_new(out, "by_l4", counts(l4_names, l4, AN_L4_COUNT));
	json_object_set_new(out, "by_tunnel", counts(an_tunnel_names, tunnel, AN_TUN_COUNT));
	json_object_set_new(out, "decode_errors", json_integer((json_int_t)errors));
	json_object_set_new(out, "decode_status", counts(an_status_names, status, AN_STATUS_COUNT));
	json_object_set_new(out, "filter",
		json_pack("{s:s?, s:I, s:I, s:s}", "expression", cfg->filter_expr, "passed",
			(json_int_t)passed, "failed", (json_int_t)failed, "unmatched",
			cfg->drop_unmatched ? "dropped" : "forwarded"));
	json_object_set_new(out, "log",
		cfg->log_path == NULL
			? json_null()
			: json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "path", cfg->log_path,
				  "format", cfg->log_format == AN_LOG_CSV ? "csv" : "jsonl",
				  "ring_slots", (json_int_t)cfg->log_ring, "records_enqueued",
				  (json_int_t)log_enq, "records_written",
				  (json_int_t)__atomic_load_n(&st->log_written, __ATOMIC_ACQUIRE),
				  "records_lost", (json_int_t)log_lost, "write_errors",
				  (json_int_t)__atomic_load_n(
					  &st->log_write_errors, __ATOMIC_ACQUIRE)));
	json_object_set_new(out, "pcap",
		cfg->pcap_path == NULL
			? json_null()
			: json_pack("{s:s, s:I, s:I, s:I, s:I}", "path", cfg->pcap_path, "snaplen",
				  (json_int_t)cfg->snaplen, "records_enqueued",
				  (json_int_t)pcap_enq, "records_written",
				  (json_int_t)__atomic_load_n(&st->pcap_written, __ATOMIC_ACQUIRE),
				  "records_lost", (json_int_t)pcap_lost));
	json_object_set_new(out, "writer",
		json_pack("{s:s, s:b, s:b}", "cpus", st->writer_cpus, "synced", synced, "flushed",
			flushed));
	json_object_set_new(out, "instances", per);
}

/* The log and the pcap output hold every record the P tasks enqueued, or
 * the exit status says they do not (records lost to a full ring are the
 * documented exception: counted, and the packet path never waits). */
static int
logs_incomplete(const struct an_state *st)
{
	uint64_t errs = __atomic_load_n(&st->log_write_errors, __ATOMIC_ACQUIRE);
	bool failed = __atomic_load_n(&st->flush_failed, __ATOMIC_ACQUIRE) != 0;
	if (!failed && errs == 0)
		return 0;
	fprintf(stderr,
		"analyzer: the output is incomplete: %" PRIu64 " records failed to write%s "
		"(\"log\", \"pcap\" and \"writer\" in the statistics)\n",
		errs, failed ? ", and a flush of the files failed" : "");
	return -1;
}

static int
analyzer_teardown(void *app_state, void **task_states, unsigned n_tasks)
{
	struct an_state *st = app_state;
	an_writer_stop(st);
	if (st->cfg->filter_compiled) {
		pcap_freecode(&st->cfg->filter);
		st->cfg->filter_compiled = false;
	}
	if (st->writer_stuck)
		return -1; /* said by an_writer_stop; it still points at all the rest */
	int rc = logs_incomplete(st);
	if (close_outputs(st) != 0)
		rc = -1;
	for (unsigned i = 0; i < n_tasks; i++) {
		struct an_task *t = task_states[i];
		if (t == NULL)
			continue;
		free(t->log_ring);
		free(t->pcap_ring);
		free(t);
	}
	free(st->tasks);
	free(st);
	return rc;
}

/* The files the command line names for writing, checked before EAL
 * starts so that a path that cannot be written is a usage error (exit
 * status 2, README.md "Exit status"); set-up opens them for every run.  No
 * DPDK memory of the app's own beyond what the runtime sizes. */
static int64_t
analyzer_options_check(const void *cfgp)
{
	const struct an_cfg *cfg = cfgp;
	const char *const opts[2] = { "--log", "--pcap-out" };
	const char *const paths[2] = { cfg->log_path, cfg->pcap_path };
	char err[256];

	for (unsigned i = 0; i < 2; i++)
		if (paths[i] != NULL && pp_outfile_check(paths[i], err, sizeof(err)) != 0) {
			/* errno's text, as set-up words it */
			fprintf(stderr, "analyzer: %s %s: %s\n", opts[i], paths[i],
				strerror(errno));
			return -1;
		}
	return 0;
}

static const struct pp_app analyzer_app = {
	.name = "analyzer",
	.variants = NULL,
	.drop_reasons = drop_reasons,
	.n_drop_reasons = 1,
	.usage = USAGE,
	.cfg_size = sizeof(struct an_cfg),
	.parse_opt = analyzer_parse_opt,
	.setup = analyzer_setup,
	.task_init = analyzer_task_init,
	.process = analyzer_process,
	.stats = analyzer_stats,
	.teardown = analyzer_teardown,
	.dpdk_mem_mb = analyzer_options_check,
};

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, &analyzer_app);
}
