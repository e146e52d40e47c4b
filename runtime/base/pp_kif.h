/* Kernel interfaces (a veth end, a NIC the kernel drives) as DPDK ports:
 * `--attach [NETNS/]IFACE` hot-plugs one after EAL start through net_af_xdp,
 * or net_af_packet where the kernel refuses XDP (or when asked), and says
 * which it got.  An interface may live in another network namespace
 * (`ip netns` name): every control call on its port (probe, configure,
 * start, stop, close: the PMDs resolve the interface by name in the calling
 * thread's namespace) runs in that namespace, through pp_port.c. */
#ifndef PP_KIF_H
#define PP_KIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PP_KIF_MAX 8

enum pp_kif_mode {
	PP_KIF_AUTO,      /* af_xdp, af_packet where XDP is refused */
	PP_KIF_AF_XDP,    /* af_xdp or fail */
	PP_KIF_AF_PACKET, /* af_packet */
};

struct pp_kif {
	char spec[96];         /* as given */
	char iface[16];        /* IFNAMSIZ */
	char netns[64];        /* empty: the process's own */
	char vdev[32];         /* net_af_xdp_ppN / net_af_packet_ppN */
	const char *how;       /* "af_xdp" or "af_packet" */
	char why_not_xdp[256]; /* auto mode, af_packet: why af_xdp was not used */
	uint16_t port;
	enum pp_kif_mode mode;
	int ns_fd; /* -1: the process's own namespace */
};

/* "auto", "af_xdp" or "af_packet"; 0, or -1 (unknown). */
int pp_kif_parse_mode(const char *text, enum pp_kif_mode *mode);

/* Checks the form of "[NETNS/]IFACE" before EAL starts: 0, or -1 with a
 * message in err naming the value. */
int pp_kif_check_spec(const char *spec, char *err, size_t errlen);

/* Attaches one interface as the next DPDK port.  0, or -1 after printing
 * "who: --attach SPEC: why" on stderr.  The result is kept (pp_kif_of). */
int pp_kif_attach(const char *spec, enum pp_kif_mode mode, const char *who);

/* The attachment of a port, or NULL (not attached by pp_kif_attach). */
const struct pp_kif *pp_kif_of(uint16_t port);

/* Every attachment so far, in order; *n set. */
const struct pp_kif *pp_kif_all(unsigned *n);

/* Enters the namespace of `port`'s interface (no-op for other ports):
 * returns a handle for pp_kif_leave (-1: nothing to undo). */
int pp_kif_enter(uint16_t port);
void pp_kif_leave(int handle);

/* A port attached in auto mode with af_xdp whose queue set-up failed (the
 * kernel refused the AF_XDP socket or its XDP program): closed, and the
 * interface attached again with af_packet under the same port id, to be
 * configured afresh.  0, or -1 (not such a port, or af_packet failed too,
 * said on stderr). */
int pp_kif_fallback(uint16_t port, const char *why);

/* At the process's end: every attached port stopped and closed in its
 * namespace, so that af_xdp takes its XDP program off the interface (left
 * there, it would take the next program's place and the kernel's own
 * traffic on that interface). */
void pp_kif_close_all(void);

/* The attachments as a JSON array of {port, iface, netns, attach[,
 * af_xdp_not_used]} (a new reference; jansson's json_t). */
struct json_t;
struct json_t *pp_kif_json(void);

/* One line on `out` per attachment: "who: port P: IFACE [in netns NS]:
 * af_xdp" (or af_packet, with why af_xdp was not used). */
void pp_kif_report(const char *who);

#endif
