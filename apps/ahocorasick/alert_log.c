/* Alert log writer thread (see alert_log.h).  Formatting and file I/O
 * happen only here, never on a P task. */
#include "alert_log.h"

#include <stdlib.h>

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "alert_json.h"

#include <rte_cycles.h>
#include <rte_errno.h>

#define WRITER_BURST 64u
#define WRITER_IDLE_NS 200000L

static void
write_rec(struct ac_alert_log *l, const struct ac_alert_rec *a)
{
	char ts[64];
	int64_t ns = l->ns0 + (int64_t)((double)(int64_t)(a->tsc - l->tsc0) * 1e9 / (double)l->hz);
	time_t sec = (time_t)(ns / 1000000000);
	struct tm tm;
	gmtime_r(&sec, &tm);
	size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + n, sizeof(ts) - n, ".%06ld+0000", (long)(ns % 1000000000) / 1000);
	char *s = ids_alert_json(l->v, &a->a, ts, a->action != 0);
	if (s != NULL && fprintf(l->f, "%s\n", s) > 0)
		__atomic_fetch_add(&l->written, 1, __ATOMIC_RELAXED);
	else {
		if (s != NULL && l->write_errno == 0)
			l->write_errno = errno;
		__atomic_fetch_add(&l->write_errs, 1, __ATOMIC_RELAXED);
	}
	free(s);
}

static unsigned
drain_once(struct ac_alert_log *l)
{
	struct ac_alert_rec recs[WRITER_BURST];
	unsigned moved = 0;
	unsigned n_rings = __atomic_load_n(&l->n_rings, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; i < n_rings; i++) {
		struct rte_ring *r = __atomic_load_n(&l->rings[i], __ATOMIC_ACQUIRE);
		if (r == NULL)
			continue;
		unsigned n = rte_ring_sc_dequeue_burst_elem(
			r, recs, sizeof(recs[0]), WRITER_BURST, NULL);
		for (unsigned k = 0; k < n; k++)
			write_rec(l, &recs[k]);
		moved += n;
	}
	return moved;
}

/* Writer thread only: the first failure's errno is kept for the message at
 * the stop (the stream's error flag keeps none). */
static void
flush_log(struct ac_alert_log *l)
{
	if (fflush(l->f) != 0 && l->write_errno == 0)
		l->write_errno = errno;
}

static void *
writer_main(void *arg)
{
	struct ac_alert_log *l = arg;
	for (;;) {
		int stopping = __atomic_load_n(&l->stop, __ATOMIC_ACQUIRE);
		if (drain_once(l) == 0) {
			if (stopping)
				break;
			flush_log(l);
			struct timespec nap = { 0, WRITER_IDLE_NS };
			nanosleep(&nap, NULL);
		}
	}
	flush_log(l);
	return NULL;
}

int
ac_alert_log_start(struct ac_alert_log *l, const char *path, const struct ac_verifier *v)
{
	struct timespec now;

	memset(l, 0, sizeof(*l));
	l->v = v;
	l->path = path;
	l->f = fopen(path, "w");
	if (l->f == NULL) {
		fprintf(stderr, "--alert-log '%s': %s\n", path, strerror(errno));
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	l->tsc0 = rte_get_tsc_cycles();
	l->hz = rte_get_tsc_hz();
	l->ns0 = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	sigset_t pipe_sig, old;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
	int rc = pthread_create(&l->thread, NULL, writer_main, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		fprintf(stderr, "--alert-log: cannot start the writer thread: %s\n", strerror(rc));
		fclose(l->f);
		l->f = NULL;
		return -1;
	}
	pthread_setname_np(l->thread, "ac-alerts");
	l->running = true;
	return 0;
}

struct rte_ring *
ac_alert_log_ring(struct ac_alert_log *l, unsigned instance, int socket)
{
	char name[RTE_RING_NAMESIZE];

	if (instance >= AC_ALERT_MAX_TASKS) {
		fprintf(stderr, "--alert-log: more than %d P tasks\n", AC_ALERT_MAX_TASKS);
		return NULL;
	}
	snprintf(name, sizeof(name), "ac_alert_%u_%p", instance, (void *)l);
	struct rte_ring *r = rte_ring_create_elem(name, sizeof(struct ac_alert_rec), AC_ALERT_RING,
		socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (r == NULL) {
		fprintf(stderr, "--alert-log: ring for task %u: %s\n", instance,
			rte_strerror(rte_errno));
		return NULL;
	}
	__atomic_store_n(&l->rings[instance], r, __ATOMIC_RELEASE);
	if (instance + 1 > l->n_rings)
		__atomic_store_n(&l->n_rings, instance + 1, __ATOMIC_RELEASE);
	return r;
}

void
ac_alert_log_drain(struct ac_alert_log *l, unsigned timeout_ms)
{
	if (!l->running)
		return;
	for (unsigned waited = 0; waited < timeout_ms; waited++) {
		bool empty = true;
		for (unsigned i = 0; i < l->n_rings; i++)
			if (l->rings[i] != NULL && rte_ring_count(l->rings[i]) > 0)
				empty = false;
		if (empty)
			break;
		struct timespec ms = { 0, 1000000L };
		nanosleep(&ms, NULL);
	}
}

int
ac_alert_log_stop(struct ac_alert_log *l)
{
	int rc = 0;
	if (l->running) {
		__atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
		pthread_join(l->thread, NULL);
		l->running = false;
	}
	if (l->f != NULL) {
		/* fprintf only fills stdio's buffer: a write that failed (a full
		 * disk) shows in the stream's sticky error flag or at the close. */
		bool bad =
			ferror(l->f) != 0 || __atomic_load_n(&l->write_errs, __ATOMIC_RELAXED) != 0;
		int e = l->write_errno; /* the writer has been joined */
		if (fclose(l->f) != 0) {
			bad = true;
			e = e != 0 ? e : errno;
		}
		if (bad) {
			fprintf(stderr,
				"ahocorasick: --alert-log '%s': cannot write: %s; the log is "
				"incomplete\n",
				l->path, strerror(e != 0 ? e : EIO));
			rc = -1;
		}
	}
	l->f = NULL;
	for (unsigned i = 0; i < l->n_rings; i++) {
		rte_ring_free(l->rings[i]);
		l->rings[i] = NULL;
	}
	l->n_rings = 0;
	return rc;
}
