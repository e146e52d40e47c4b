/* pp_stack on the kernel's TCP sockets: the same connection slots as the
 * lwIP backend, for the anchor that runs the same pipeline on the host's
 * stack.  Non-blocking sockets polled from R: one SO_REUSEPORT listener
 * per instance (the kernel spreads connections over them), accept tried at
 * most once a millisecond, recv() straight into the app's buffer (the
 * kernel's one copy). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "pp_stack_backend.h"

static int
pp_stack_kernel_open(struct pp_stack *s, char *err, size_t errlen)
{
	const struct pp_stack_conf *conf = &s->conf;
	struct sockaddr_in sa = { .sin_family = AF_INET,
		.sin_port = htons(conf->listen_port),
		.sin_addr.s_addr = htonl(conf->addr) };
	for (unsigned i = 0; i < conf->n_instances; i++) {
		int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
			setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
			(conf->kernel_rcvbuf != 0 &&
				setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &conf->kernel_rcvbuf,
					sizeof(conf->kernel_rcvbuf)) < 0) ||
			bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
			char a[INET_ADDRSTRLEN] = "?";
			inet_ntop(AF_INET, &sa.sin_addr, a, sizeof(a));
			snprintf(err, errlen, "stack: kernel socket cannot listen on %s:%u: %s", a,
				conf->listen_port, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		s->inst[i].listen_fd = fd;
	}
	return 0;
}

static void
reset_close(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)); /* close sends a RST */
	close(fd);
}

static void
pp_stack_kernel_close(struct pp_stack *s)
{
	for (unsigned i = 0; i < s->conf.n_instances; i++) {
		struct pp_stack_inst *si = &s->inst[i];
		for (unsigned k = 0; k < s->conf.max_conns; k++) {
			if (si->impl[k].fd >= 0)
				reset_close(si->impl[k].fd);
			si->impl[k].fd = -1;
			si->conns[k].state = PP_CONN_FREE;
		}
		if (si->listen_fd >= 0)
			close(si->listen_fd);
		si->listen_fd = -1;
	}
}

static void
pp_stack_kernel_begin(struct pp_stack_inst *si, bool input)
{
	uint64_t now = rte_rdtsc();
	if (!input || now < si->next_accept_tsc)
		return;
	si->next_accept_tsc = now + rte_get_tsc_hz() / 1000;
	for (;;) {
		int fd = accept4(si->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct pp_conn *c = pp_stack_take_slot(si);
		if (c == NULL) {
			reset_close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->impl->fd = fd;
	}
}

static size_t
pp_stack_kernel_read(struct pp_conn *c, void *dst, size_t max)
{
	int fd = c->impl->fd;
	if (max == 0 || fd < 0 || c->state != PP_CONN_OPEN)
		return 0;
	ssize_t n = recv(fd, dst, max, MSG_DONTWAIT);
	if (n > 0)
		return (size_t)n;
	if (n == 0)
		c->state = PP_CONN_PEER_CLOSED;
	else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		c->state = PP_CONN_RESET;
	return 0;
}

/* A small write either fits the socket's send buffer whole or is refused
 * (the kernel admits a write while the buffer is below its limit).  Should
 * it take only part, the peer would read a cut message: the connection is
 * then reset. */
static int
pp_stack_kernel_write(struct pp_conn *c, const void *buf, size_t len)
{
	int fd = c->impl->fd;
	if (fd < 0 || c->state == PP_CONN_RESET)
		return -1;
	ssize_t n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n > 0 && n < (ssize_t)len)
		c->state = PP_CONN_RESET;
	return n == (ssize_t)len ? 0 : -1;
}

static bool
pp_stack_kernel_unacked(struct pp_conn *c)
{
	int queued = 0;
	return c->impl->fd >= 0 && ioctl(c->impl->fd, SIOCOUTQ, &queued) == 0 && queued > 0;
}

static uint64_t
pp_stack_kernel_release(struct pp_conn *c)
{
	int fd = c->impl->fd;
	c->impl->fd = -1;
	if (fd < 0)
		return 0;
	/* Unread bytes in the kernel are not counted here; close() with
	 * unread data sends a RST, as the lwIP backend does. */
	if (c->state == PP_CONN_RESET)
		reset_close(fd);
	else
		close(fd);
	return 0;
}

/* Nothing waits for the poll's end: the kernel sent what was written. */
static void
pp_stack_kernel_end(struct pp_stack_inst *si)
{
	(void)si;
}

const struct pp_stack_ops pp_stack_kernel_ops = {
	.describe = "kernel sockets",
	.counts_frames = false,
	.mem_mb = 0,
	.open = pp_stack_kernel_open,
	.close = pp_stack_kernel_close,
	.poll_begin = pp_stack_kernel_begin,
	.poll_end = pp_stack_kernel_end,
	.read = pp_stack_kernel_read,
	.write = pp_stack_kernel_write,
	.unacked = pp_stack_kernel_unacked,
	.release = pp_stack_kernel_release,
};
