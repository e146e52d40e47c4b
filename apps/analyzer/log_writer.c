/* Log writer thread; see log_writer.h.  Formatting and file I/O happen only
 * here, never on a P task. */
#include "log_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_memcpy.h>

#define WRITER_BURST 64u
#define WRITER_IDLE_NS 200000L /* 0.2 ms nap when every ring is empty */
#define WRITER_STOP_TIMEOUT_S 10

static struct an_task *
task_at(struct an_state *st, unsigned i)
{
	return __atomic_load_n(&st->tasks[i], __ATOMIC_ACQUIRE);
}

static int64_t
tsc_to_ns(const struct an_state *st, uint64_t tsc)
{
	int64_t d = (int64_t)(tsc - st->tsc0);
	return st->ns0 + (int64_t)((double)d * 1e9 / (double)st->hz);
}

static unsigned
drain_log(struct an_state *st, struct an_task *t)
{
	struct an_log_record recs[WRITER_BURST];
	char line[AN_LOG_LINE_MAX];
	unsigned n = rte_ring_sc_dequeue_burst_elem(
		t->log_ring, recs, sizeof(recs[0]), WRITER_BURST, NULL);
	uint64_t ok = 0, bad = 0;
	for (unsigned i = 0; i < n; i++) {
		recs[i].ts_ns = (uint64_t)tsc_to_ns(st, recs[i].tsc);
		size_t len = an_log_format_line(st->log_format, &recs[i], line, sizeof(line));
		if (len != 0 && fwrite(line, 1, len, st->log_file) == len)
			ok++;
		else
			bad++;
	}
	if (n != 0) {
		__atomic_fetch_add(&st->log_written, ok, __ATOMIC_RELAXED);
		__atomic_fetch_add(&st->log_write_errors, bad, __ATOMIC_RELAXED);
		__atomic_store_n(&t->log_dequeued, t->log_dequeued + n, __ATOMIC_RELEASE);
	}
	return n;
}

static unsigned
drain_pcap(struct an_state *st, struct an_task *t, uint8_t *buf)
{
	unsigned n = rte_ring_sc_dequeue_burst_elem(
		t->pcap_ring, buf, t->pcap_esize, WRITER_BURST, NULL);
	for (unsigned i = 0; i < n; i++) {
		const struct an_pcap_slot *s = (const void *)(buf + (size_t)i * t->pcap_esize);
		int64_t ns = tsc_to_ns(st, s->tsc);
		struct pcap_pkthdr h = {
			.ts = { .tv_sec = ns / 1000000000, .tv_usec = (ns % 1000000000) / 1000 },
			.caplen = s->cap_len,
			.len = s->wire_len,
		};
		pcap_dump((u_char *)st->pcap_dumper, &h, s->data);
	}
	if (n != 0) {
		/* pcap_dump reports no errors; ferror() at the end does. */
		__atomic_fetch_add(&st->pcap_written, n, __ATOMIC_RELAXED);
		__atomic_store_n(&t->pcap_dequeued, t->pcap_dequeued + n, __ATOMIC_RELEASE);
	}
	return n;
}

/* Flush both files; 0 when everything written so far reached them, -1 when
 * any write to them failed, now or earlier.  fflush() alone cannot tell:
 * when stdio's write(2) fails (EPIPE: the reader of a FIFO went away), it
 * drops the buffered bytes, so a later fflush() of the then empty buffer
 * returns 0.  Whether the last failure came before or after the last
 * record was buffered was down to timing; the stream's sticky error flag
 * (ferror) is not.  Only the writer thread calls this: a flush can block
 * (a full pipe), and SIGPIPE is blocked here. */
static int
flush_files(struct an_state *st)
{
	int rc = 0;
	if (st->log_file != NULL && (fflush(st->log_file) != 0 || ferror(st->log_file)))
		rc = -1;
	if (st->pcap_dumper != NULL &&
		(pcap_dump_flush(st->pcap_dumper) != 0 || ferror(pcap_dump_file(st->pcap_dumper))))
		rc = -1;
	return rc;
}

static void *
writer_main(void *arg)
{
	struct an_state *st = arg;
	for (;;) {
		/* Read the stop flag before draining: after it is seen, one
		 * more full pass empties the rings of the stopped tasks. */
		int stopping = __atomic_load_n(&st->writer_stop, __ATOMIC_ACQUIRE);
		uint64_t flush_req = __atomic_load_n(&st->flush_req, __ATOMIC_ACQUIRE);
		if (flush_req != st->flush_done) {
			if (flush_files(st) != 0)
				__atomic_store_n(&st->flush_failed, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&st->flush_done, flush_req, __ATOMIC_RELEASE);
		}
		unsigned moved = 0;
		for (unsigned i = 0; i < st->n_tasks; i++) {
			struct an_task *t = task_at(st, i);
			if (t == NULL)
				continue;
			if (t->log_ring != NULL)
				moved += drain_log(st, t);
			if (t->pcap_ring != NULL)
				moved += drain_pcap(st, t, st->pcap_buf);
		}
		if (moved == 0) {
			if (stopping)
				break;
			struct timespec nap = { 0, WRITER_IDLE_NS };
			nanosleep(&nap, NULL);
		}
	}
	if (flush_files(st) != 0)
		__atomic_store_n(&st->flush_failed, 1, __ATOMIC_RELAXED);
	return NULL;
}

int
an_writer_start(struct an_state *st)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	long n_cpu = sysconf(_SC_NPROCESSORS_ONLN);
	for (long c = 0; c < n_cpu && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, &set);
	cpu_set_t free_set = set;
	unsigned lc;
	RTE_LCORE_FOREACH_WORKER(lc)
	{
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
				sizeof(st->writer_cpus) - off, "%s%d", off ? "," : "", c);

	if (st->pcap_dumper != NULL) {
		st->pcap_buf = malloc((size_t)WRITER_BURST * st->pcap_esize);
		if (st->pcap_buf == NULL)
			return -ENOMEM;
	}
	/* The writer starts with SIGPIPE blocked (the mask is inherited): a
	 * log written to a pipe whose reader went away must not kill the
	 * process; the write fails and is counted instead. */
	sigset_t pipe_sig, old_mask;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, &old_mask);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	int rc = pthread_create(&st->writer, &attr, writer_main, st);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	if (rc != 0) {
		free(st->pcap_buf);
		st->pcap_buf = NULL;
		return -rc;
	}
	pthread_setname_np(st->writer, "an-writer");
	st->writer_running = true;
	return 0;
}

int
an_writer_sync(struct an_state *st, unsigned timeout_ms)
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
				__atomic_load_n(&t->pcap_dequeued, __ATOMIC_ACQUIRE) <
					target[2 * i + 1])
				behind = true;
		}
		if (!behind)
			break;
		if (waited >= timeout_ms) {
			rc = -ETIMEDOUT;
			break;
		}
		struct timespec ms = { 0, 1000000L };
		nanosleep(&ms, NULL);
	}
	free(target);
	if (rc != 0)
		return rc;
	/* Then have the writer flush what it wrote (a flush may block, so it
	 * is never done on this thread). */
	uint64_t req = __atomic_add_fetch(&st->flush_req, 1, __ATOMIC_ACQ_REL);
	for (unsigned waited = 0; __atomic_load_n(&st->flush_done, __ATOMIC_ACQUIRE) < req;
		waited++) {
		if (waited >= timeout_ms)
			return -ETIMEDOUT;
		struct timespec ms = { 0, 1000000L };
		nanosleep(&ms, NULL);
	}
	return __atomic_load_n(&st->flush_failed, __ATOMIC_RELAXED) ? -EIO : 0;
}

void
an_writer_stop(struct an_state *st)
{
	if (!st->writer_running)
		return;
	__atomic_store_n(&st->writer_stop, 1, __ATOMIC_RELEASE);
	/* A writer blocked for good (a FIFO nobody reads) must not keep the
	 * process from ending: give it 10 s, then leave it blocked, detached,
	 * with everything it can reach kept alive (writer_stuck); closing
	 * its files would block the same way. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WRITER_STOP_TIMEOUT_S;
	if (pthread_timedjoin_np(st->writer, NULL, &until) != 0) {
		fprintf(stderr,
			"analyzer: the log writer is still blocked writing "
			"after %d s; giving up on the log files (records not "
			"written are missing from them)\n",
			WRITER_STOP_TIMEOUT_S);
		pthread_detach(st->writer);
		st->writer_stuck = true;
		/* exit() flushes every stdio stream: point the files at
		 * /dev/null so that flush cannot block on the same pipe. */
		int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null_fd >= 0) {
			if (st->log_file != NULL)
				dup2(null_fd, fileno(st->log_file));
			if (st->pcap_dumper != NULL)
				dup2(null_fd, fileno(pcap_dump_file(st->pcap_dumper)));
			close(null_fd);
		}
		st->writer_running = false;
		return;
	}
	st->writer_running = false;
	free(st->pcap_buf);
	st->pcap_buf = NULL;
}
