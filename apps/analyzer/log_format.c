/* CSV and JSON-lines text of a log record.  Fields whose header was not
 * decoded are empty (CSV) or null (JSON) rather than zero, so a reader can
 * tell "port 0" from "no port".
 *
 * Hand-written appenders instead of snprintf/inet_ntop: the log writer's
 * throughput is bounded by this code (snprintf took ~2 us a record). */
#include "log_record.h"

#include <string.h>

static const char CSV_HEADER[] =
	"ts_ns,instance,wire_len,cap_len,status,mac_src,mac_dst,vlan,"
	"ethertype,l3,ttl,l4_proto,src,dst,sport,dport,icmp_type,icmp_code,"
	"fragment,tunnel,tunnel_id,inner_status,inner_mac_src,inner_mac_dst,"
	"inner_vlan,inner_ethertype,inner_l3,inner_ttl,inner_l4_proto,"
	"inner_src,inner_dst,inner_sport,inner_dport,inner_icmp_type,"
	"inner_icmp_code,inner_fragment\n";

const char *
an_log_header(enum an_log_format fmt)
{
	return fmt == AN_LOG_CSV ? CSV_HEADER : "";
}

static const char HEX[] = "0123456789abcdef";

/* The longest line: JSON with every field at its widest is under 420
 * bytes for the outer headers, as much again for the inner ones and under
 * 60 for the tunnel fields; AN_LOG_LINE_MAX leaves room, so appenders need
 * no checks. */
_Static_assert(AN_LOG_LINE_MAX >= 960, "AN_LOG_LINE_MAX too small");

static char *
w_str(char *o, const char *s)
{
	size_t n = strlen(s);
	memcpy(o, s, n);
	return o + n;
}

static char *
w_u64(char *o, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*o++ = tmp[--n];
	return o;
}

static char *
w_mac(char *o, const uint8_t *m)
{
	for (int i = 0; i < 6; i++) {
		if (i)
			*o++ = ':';
		*o++ = HEX[m[i] >> 4];
		*o++ = HEX[m[i] & 15];
	}
	return o;
}

static char *
w_ipv4(char *o, const uint8_t *a)
{
	for (int i = 0; i < 4; i++) {
		if (i)
			*o++ = '.';
		o = w_u64(o, a[i]);
	}
	return o;
}

static char *
w_hex16(char *o, unsigned v)
{
	int started = 0;
	for (int s = 12; s >= 0; s -= 4) {
		unsigned d = (v >> s) & 15;
		if (d || started || s == 0) {
			*o++ = HEX[d];
			started = 1;
		}
	}
	return o;
}

/* RFC 5952 text, written exactly as glibc's inet_ntop writes it (the
 * longest run of two or more zero groups becomes "::", the first of equal
 * runs; ::ffff:a.b.c.d and ::a.b.c.d keep the dotted quad). */
static char *
w_ipv6(char *o, const uint8_t *a)
{
	unsigned w[8];
	for (int i = 0; i < 8; i++)
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
	int best = -1, best_len = 0;
	for (int i = 0; i < 8;) {
		if (w[i] != 0) {
			i++;
			continue;
		}
		int j = i;
		while (j < 8 && w[j] == 0)
			j++;
		if (j - i > best_len) {
			best = i;
			best_len = j - i;
		}
		i = j;
	}
	if (best_len < 2)
		best = -1;
	for (int i = 0; i < 8; i++) {
		if (best >= 0 && i >= best && i < best + best_len) {
			if (i == best)
				*o++ = ':';
			continue;
		}
		if (i != 0)
			*o++ = ':';
		if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)))
			return w_ipv4(o, a + 12);
		o = w_hex16(o, w[i]);
	}
	if (best >= 0 && best + best_len == 8)
		*o++ = ':';
	return o;
}

/* Field separators and value wrappers for each format. */
struct style {
	int json;
};

static char *
begin(char *o, const struct style *st, const char *prefix, const char *key, int first)
{
	if (st->json) {
		if (!first)
			*o++ = ',';
		*o++ = '"';
		o = w_str(o, prefix);
		o = w_str(o, key);
		*o++ = '"';
		*o++ = ':';
	} else if (!first) {
		*o++ = ',';
	}
	return o;
}

/* An absent value: empty in CSV, null in JSON. */
static char *
absent(char *o, const struct style *st)
{
	return st->json ? w_str(o, "null") : o;
}

static char *
quote(char *o, const struct style *st)
{
	if (st->json)
		*o++ = '"';
	return o;
}

#define NUM(key, cond, val)                                   \
	do {                                                  \
		o = begin(o, st, pre, key, 0);                \
		o = (cond) ? w_u64(o, (val)) : absent(o, st); \
	} while (0)

#define STR(key, cond, val)                    \
	do {                                   \
		o = begin(o, st, pre, key, 0); \
		if (cond) {                    \
			o = quote(o, st);      \
			o = w_str(o, (val));   \
			o = quote(o, st);      \
		} else {                       \
			o = absent(o, st);     \
		}                              \
	} while (0)

/* status ... fragment of one header stack, each key prefixed with pre;
 * every value absent when !present (no tunnel: no inner headers). */
static char *
w_layers(char *o, const struct style *st, const char *pre, const struct an_layers *p, int present)
{
	int eth = present && (p->have & AN_HAVE_ETH) != 0;
	int ip = present && (p->have & AN_HAVE_IP) != 0;

	STR("status", present, an_status_names[p->status < AN_STATUS_COUNT ? p->status : 0]);
	static const char *const macs[2] = { "mac_src", "mac_dst" };
	for (int k = 0; k < 2; k++) {
		o = begin(o, st, pre, macs[k], 0);
		if (eth) {
			o = quote(o, st);
			o = w_mac(o, k == 0 ? p->mac_src : p->mac_dst);
			o = quote(o, st);
		} else {
			o = absent(o, st);
		}
	}
	/* VLAN IDs, outer first, '.'-separated (QinQ: "100.200"). */
	o = begin(o, st, pre, "vlan", 0);
	if (present && p->n_vlan > 0) {
		o = quote(o, st);
		for (unsigned k = 0; k < p->n_vlan && k < AN_MAX_VLAN; k++) {
			if (k)
				*o++ = '.';
			o = w_u64(o, p->vlan_tci[k] & 0xfffu);
		}
		o = quote(o, st);
	} else {
		o = absent(o, st);
	}
	o = begin(o, st, pre, "ethertype", 0);
	if (eth) {
		o = quote(o, st);
		*o++ = '0';
		*o++ = 'x';
		for (int s = 12; s >= 0; s -= 4)
			*o++ = HEX[(p->ethertype >> s) & 15];
		o = quote(o, st);
	} else {
		o = absent(o, st);
	}
	STR("l3", present, an_l3_names[p->l3 < AN_L3_COUNT ? p->l3 : 0]);
	NUM("ttl", ip, p->ttl);
	NUM("l4_proto", present && (p->have & AN_HAVE_L4PROTO), p->l4_proto);

	static const char *const addrs[2] = { "src", "dst" };
	for (int k = 0; k < 2; k++) {
		o = begin(o, st, pre, addrs[k], 0);
		if (ip) {
			const uint8_t *a = k == 0 ? p->src : p->dst;
			o = quote(o, st);
			o = p->l3 == AN_L3_IPV6 ? w_ipv6(o, a) : w_ipv4(o, a);
			o = quote(o, st);
		} else {
			o = absent(o, st);
		}
	}
	NUM("sport", present && (p->have & AN_HAVE_PORTS), p->sport);
	NUM("dport", present && (p->have & AN_HAVE_PORTS), p->dport);
	NUM("icmp_type", present && (p->have & AN_HAVE_ICMP), p->icmp_type);
	NUM("icmp_code", present && (p->have & AN_HAVE_ICMP), p->icmp_code);
	STR("fragment", present,
		(p->flags & AN_FLAG_LATER_FRAG)         ? "later"
			: (p->flags & AN_FLAG_FRAGMENT) ? "first"
							: "no");
	return o;
}

size_t
an_log_format_line(enum an_log_format fmt, const struct an_log_record *r, char *buf, size_t cap)
{
	if (cap < AN_LOG_LINE_MAX)
		return 0;
	const struct an_packet *p = &r->pkt;
	const struct style style = { .json = fmt == AN_LOG_JSONL };
	const struct style *st = &style;
	const char *pre = "";
	char *o = buf;

	if (st->json)
		*o++ = '{';
	o = begin(o, st, pre, "ts_ns", 1);
	o = w_u64(o, r->ts_ns);
	NUM("instance", 1, r->instance);
	NUM("wire_len", 1, r->wire_len);
	NUM("cap_len", 1, r->cap_len);
	o = w_layers(o, st, "", &p->outer, 1);

	/* Tunnels, outer first, '.'-separated ("gre.vxlan"). */
	unsigned n_tun = p->n_tunnel < AN_MAX_TUNNEL ? p->n_tunnel : AN_MAX_TUNNEL;
	o = begin(o, st, pre, "tunnel", 0);
	if (n_tun > 0) {
		o = quote(o, st);
		for (unsigned k = 0; k < n_tun; k++) {
			if (k)
				*o++ = '.';
			o = w_str(
				o, an_tunnel_names[p->tunnel[k] < AN_TUN_COUNT ? p->tunnel[k] : 0]);
		}
		o = quote(o, st);
	} else {
		o = absent(o, st);
	}
	NUM("tunnel_id", n_tun > 0 && p->have_tunnel_id, p->tunnel_id);
	o = w_layers(o, st, "inner_", &p->inner, n_tun > 0);

	if (st->json)
		*o++ = '}';
	*o++ = '\n';
	*o = '\0';
	return (size_t)(o - buf);
}
