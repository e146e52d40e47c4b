/* Log writer thread; see log_writer.h.  Formatting and file I/O happen only
 * here, never on a P task. */
#include "log_writer.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_memcpy.h>

#define WRITER_BURST 64u
#define WRITER_IDLE_NS 200000L /* 0.2 ms nap when every ring is empty */

static struct an_task *task_at(struct an_state *st, unsigned i)
{
	return __atomic_load_n(&st->tasks[i], __ATOMIC_ACQUIRE);
}

static int64_t tsc_to_ns(const struct an_state *st, uint64_t tsc)
{
	int64_t d = (int64_t)(tsc - st->tsc0);
	return st->ns0 + (int64_t)((double)d * 1e9 / (double)st->hz);
}

static unsigned drain_log(struct an_state *st, struct an_task *t)
{
	struct an_log_record recs[WRITER_BURST];
	char line[AN_LOG_LINE_MAX];
	unsigned n = rte_ring_sc_dequeue_burst_elem(t->log_ring, recs,
						    sizeof(recs[0]),
						    WRITER_BURST, NULL);
	uint64_t ok = 0, bad = 0;
	for (unsigned i = 0; i < n; i++) {
		recs[i].ts_ns = (uint64_t)tsc_to_ns(st, recs[i].tsc);
		size_t len = an_log_format_line(st->cfg->log_format, &recs[i],
						line, sizeof(line));
		if (len != 0 && fwrite(line, 1, len, st->log_file) == len)
			ok++;
		else
			bad++;
	}
	if (n != 0) {
		__atomic_fetch_add(&st->log_written, ok, __ATOMIC_RELAXED);
		__atomic_fetch_add(&st->log_write_errors, bad, __ATOMIC_RELAXED);
		__atomic_store_n(&t->log_dequeued, t->log_dequeued + n,
				 __ATOMIC_RELEASE);
	}
	return n;
}

static unsigned drain_pcap(struct an_state *st, struct an_task *t,
			   uint8_t *buf)
{
	unsigned n = rte_ring_sc_dequeue_burst_elem(t->pcap_ring, buf,
						    t->pcap_esize,
						    WRITER_BURST, NULL);
	for (unsigned i = 0; i < n; i++) {
		const struct an_pcap_slot *s =
			(const void *)(buf + (size_t)i * t->pcap_esize);
		int64_t ns = tsc_to_ns(st, s->tsc);
		struct pcap_pkthdr h = {
			.ts = {.tv_sec = ns / 1000000000,
			       .tv_usec = (ns % 1000000000) / 1000},
			.caplen = s->cap_len,
			.len = s->wire_len,
		};
		pcap_dump((u_char *)st->pcap_dumper, &h, s->data);
	}
	if (n != 0) {
		/* pcap_dump reports no errors; ferror() at the end does. */
		__atomic_fetch_add(&st->pcap_written, n, __ATOMIC_RELAXED);
		__atomic_store_n(&t->pcap_dequeued, t->pcap_dequeued + n,
				 __ATOMIC_RELEASE);
	}
	return n;
}

static void *writer_main(void *arg)
{
	struct an_state *st = arg;
	uint8_t *pcap_buf = st->pcap_dumper != NULL
				    ? malloc((size_t)WRITER_BURST * st->pcap_esize)
				    : NULL;

	for (;;) {
		/* Read the stop flag before draining: after it is seen, one
		 * more full pass empties the rings of the stopped tasks. */
		int stopping = __atomic_load_n(&st->writer_stop, __ATOMIC_ACQUIRE);
		unsigned moved = 0;
		for (unsigned i = 0; i < st->n_tasks; i++) {
			struct an_task *t = task_at(st, i);
			if (t == NULL)
				continue;
			if (t->log_ring != NULL)
				moved += drain_log(st, t);
			if (t->pcap_ring != NULL && pcap_buf != NULL)
				moved += drain_pcap(st, t, pcap_buf);
		}
		if (moved == 0) {
			if (stopping)
				break;
			struct timespec nap = {0, WRITER_IDLE_NS};
			nanosleep(&nap, NULL);
		}
	}
	free(pcap_buf);
	return NULL;
}

int an_writer_start(struct an_state *st)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	long n_cpu = sysconf(_SC_NPROCESSORS_ONLN);
	for (long c = 0; c < n_cpu && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, &set);
	cpu_set_t free_set = set;
	unsigned lc;
	RTE_LCORE_FOREACH_WORKER(lc) {
		rte_cpuset_t cs = rte_lcore_cpuset(lc);
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &cs))
				CPU_CLR(c, &free_set);
	}
	if (CPU_COUNT(&free_set) > 0)
		set = free_set;
	/* Record the set as a list for the statistics. */
	size_t off = 0;
	st->writer_cpus[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && off + 8 < sizeof(st->writer_cpus); c++)
		if (CPU_ISSET(c, &set))
			off += (size_t)snprintf(st->writer_cpus + off,
						sizeof(st->writer_cpus) - off,
						"%s%d", off ? "," : "", c);

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	int rc = pthread_create(&st->writer, &attr, writer_main, st);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return -rc;
	pthread_setname_np(st->writer, "an-writer");
	st->writer_running = true;
	return 0;
}

int an_writer_sync(struct an_state *st, unsigned timeout_ms)
{
	if (!st->writer_running)
		return 0;
	/* Wait for what was enqueued now, not for a target that moves while
	 * the tasks run (SIGUSR1 snapshots). */
	uint64_t *target = calloc(2 * (size_t)st->n_tasks, sizeof(uint64_t));
	if (target == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < st->n_tasks; i++) {
		struct an_task *t = task_at(st, i);
		if (t == NULL)
			continue;
		target[2 * i] = __atomic_load_n(&t->log_enqueued, __ATOMIC_ACQUIRE);
		target[2 * i + 1] = __atomic_load_n(&t->pcap_enqueued, __ATOMIC_ACQUIRE);
	}
	int rc = 0;
	for (unsigned waited = 0;; waited++) {
		bool behind = false;
		for (unsigned i = 0; i < st->n_tasks; i++) {
			struct an_task *t = task_at(st, i);
			if (t == NULL)
				continue;
			if (__atomic_load_n(&t->log_dequeued, __ATOMIC_ACQUIRE) < target[2 * i] ||
			    __atomic_load_n(&t->pcap_dequeued, __ATOMIC_ACQUIRE) < target[2 * i + 1])
				behind = true;
		}
		if (!behind)
			break;
		if (waited >= timeout_ms) {
			rc = -ETIMEDOUT;
			break;
		}
		struct timespec ms = {0, 1000000L};
		nanosleep(&ms, NULL);
	}
	free(target);
	return rc;
}

void an_writer_stop(struct an_state *st)
{
	if (!st->writer_running)
		return;
	__atomic_store_n(&st->writer_stop, 1, __ATOMIC_RELEASE);
	pthread_join(st->writer, NULL);
	st->writer_running = false;
}
