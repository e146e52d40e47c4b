/* What an app that serves TCP streams in R shares with every other such app
 * (netdedup, netstreamcluster, netferret): the server's options and their
 * parsing, the stack they open, a receipt written back to a client, the
 * test of a --streams run's end, and T's writes to its files.  The app
 * keeps its own protocol; its statistics' shared parts are in
 * pp_server_stats.h. */
#ifndef PP_SERVER_H
#define PP_SERVER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "pp_app.h"
#include "pp_stack.h"

#define PP_SERVER_STR_(x) #x
#define PP_SERVER_STR(x) PP_SERVER_STR_(x)

struct pp_server_opts {
	enum pp_stack_kind stack;
	uint32_t addr; /* host order */
	unsigned prefix_len;
	uint16_t listen_port;
	const char *out_dir;    /* NULL: results are made and counted, not written */
	uint64_t streams;       /* end the run after this many streams (0: no limit) */
	double linger_s;        /* then wait at most this long for the receipts */
	unsigned max_conns;     /* per instance */
	unsigned kernel_rcvbuf; /* --stack kernel: SO_RCVBUF (0: autotuned) */
};

/* The defaults: lwIP, addr ("A.B.C.D/N"), port, max_conns, a 10 s linger. */
void pp_server_opts_init(
	struct pp_server_opts *o, const char *addr, uint16_t port, unsigned max_conns);

/* parse_opt's share (pp_app.h): 2 when argv[0] is a server option and its
 * value argv[1] is good, -1 (said on stderr) when it is bad or missing, 0
 * when argv[0] is not a server option. */
int pp_server_opts_parse(struct pp_server_opts *o, int argc, char **argv);

/* For an app's own options: 1 when argv[0] is in the NULL-terminated list
 * known and has a value, -1 (said on stderr) when it has none, 0 when it
 * is not in the list. */
int pp_server_known_opt(int argc, char **argv, const char *const *known);

/* The help text of those options, for pp_app.usage; ADDR, PORT and CONNS
 * are the defaults as string literals, OUT what --out DIR writes. */
#define PP_SERVER_USAGE(ADDR, PORT, CONNS, OUT)                                         \
	"  --stack lwip|kernel  lwip (default): the user-level stack on the\n"          \
	"                       placement's DPDK port; kernel: kernel sockets (the\n"   \
	"                       anchor; the port is then unused, e.g. net_null)\n"      \
	"  --ip A.B.C.D/N       the server's address (lwip: its netif; kernel: the\n"   \
	"                       address bound, 0.0.0.0 for any) (" ADDR ")\n"           \
	"  --listen-port N      TCP port (" PORT ")\n"                                  \
	"  --out DIR            " OUT "\n"                                              \
	"  --streams N          end the run once N streams are done and their\n"        \
	"                       receipts acknowledged by the clients' TCP (or\n"        \
	"                       --linger later)\n"                                      \
	"  --linger S           with --streams: wait at most S s for the receipts\n"    \
	"                       after the last stream is done (10)\n"                   \
	"  --max-conns N        connections per instance (" CONNS "); more are reset\n" \
	"  --kernel-rcvbuf B    --stack kernel: SO_RCVBUF of its sockets (default:\n"   \
	"                       the kernel's autotuning); 65536 holds its window\n"     \
	"                       near Debian lwIP's 64 KiB\n"

/* The app's setup: opens the stack the options describe (*st).  0, or
 * -EINVAL said on stderr as "APP: why". */
int pp_server_stack_open(struct pp_stack **st, const struct pp_server_opts *o,
	const struct pp_setup_info *info, const char *app);

/* What became of the receipts R wrote back. */
struct pp_receipt_counters {
	uint64_t sent, peer_gone, no_room;
};

/* Writes a receipt to c, when same (the connection is the one the stream
 * came on) and c is not reset; counts what happened.  A client that does
 * not read fills its window and then the stack's send buffer: its later
 * receipts find no room. */
void pp_server_send_receipt(
	struct pp_conn *c, bool same, const void *rec, size_t len, struct pp_receipt_counters *ctr);

/* Whether slot k of the instance still owes its client something (data
 * being received, receipts not yet written). */
typedef bool (*pp_server_slot_busy)(const void *task, unsigned slot);

/* --streams N: false until N streams are done (streams_done, from every
 * instance) and this instance has no receipt left to write
 * (receipts_queued false); then true once every connection still up has
 * nothing busy and nothing unacknowledged, or --linger seconds later
 * (*end_tsc holds that deadline, 0 before). */
bool pp_server_input_ended(const struct pp_server_opts *o, uint64_t streams_done,
	bool receipts_queued, struct pp_stack_inst *si, unsigned n_slots, pp_server_slot_busy busy,
	const void *task, uint64_t *end_tsc);

/* Writes all of buf to fd (T's file of a stream), through EINTR and short
 * writes; false on an error. */
static inline bool
pp_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len != 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		len -= (size_t)w;
	}
	return true;
}

#endif
