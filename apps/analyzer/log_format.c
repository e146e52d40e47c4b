/* CSV and JSON-lines text of a log record.  Fields whose header was not
 * decoded are empty (CSV) or null (JSON) rather than zero, so a reader can
 * tell "port 0" from "no port". */
#include "log_record.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static const char CSV_HEADER[] =
	"ts_ns,instance,wire_len,cap_len,status,mac_src,mac_dst,vlan,"
	"ethertype,l3,ttl,l4_proto,src,dst,sport,dport,icmp_type,icmp_code,"
	"fragment\n";

const char *an_log_header(enum an_log_format fmt)
{
	return fmt == AN_LOG_CSV ? CSV_HEADER : "";
}

/* Appends to a bounded buffer; remembers overflow instead of failing at
 * each call. */
struct sbuf {
	char *b;
	size_t cap, len;
	int overflow;
};

__attribute__((format(printf, 2, 3)))
static void put(struct sbuf *s, const char *fmt, ...)
{
	if (s->overflow)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(s->b + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= s->cap - s->len)
		s->overflow = 1;
	else
		s->len += (size_t)n;
}

static void mac_str(const uint8_t *m, char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
}

size_t an_log_format_line(enum an_log_format fmt,
			  const struct an_log_record *r, char *buf, size_t cap)
{
	const struct an_packet *p = &r->pkt;
	struct sbuf s = {.b = buf, .cap = cap};
	char msrc[18] = "", mdst[18] = "", vlan[16] = "", et[8] = "";
	char src[INET6_ADDRSTRLEN] = "", dst[INET6_ADDRSTRLEN] = "";
	char ttl[4] = "", l4[4] = "", sp[6] = "", dp[6] = "", it[4] = "",
	     ic[4] = "";
	const char *frag = (p->flags & AN_FLAG_LATER_FRAG) ? "later"
			   : (p->flags & AN_FLAG_FRAGMENT) ? "first"
							   : "no";

	if (p->have & AN_HAVE_ETH) {
		mac_str(p->mac_src, msrc);
		mac_str(p->mac_dst, mdst);
		snprintf(et, sizeof(et), "0x%04x", p->ethertype);
	}
	/* VLAN IDs, outer first, '.'-separated (QinQ: "100.200"). */
	if (p->n_vlan == 1)
		snprintf(vlan, sizeof(vlan), "%u", p->vlan_tci[0] & 0xfffu);
	else if (p->n_vlan == 2)
		snprintf(vlan, sizeof(vlan), "%u.%u", p->vlan_tci[0] & 0xfffu,
			 p->vlan_tci[1] & 0xfffu);
	if (p->have & AN_HAVE_IP) {
		int af = p->l3 == AN_L3_IPV6 ? AF_INET6 : AF_INET;
		inet_ntop(af, p->src, src, sizeof(src));
		inet_ntop(af, p->dst, dst, sizeof(dst));
		snprintf(ttl, sizeof(ttl), "%u", p->ttl);
	}
	if (p->have & AN_HAVE_L4PROTO)
		snprintf(l4, sizeof(l4), "%u", p->l4_proto);
	if (p->have & AN_HAVE_PORTS) {
		snprintf(sp, sizeof(sp), "%u", p->sport);
		snprintf(dp, sizeof(dp), "%u", p->dport);
	}
	if (p->have & AN_HAVE_ICMP) {
		snprintf(it, sizeof(it), "%u", p->icmp_type);
		snprintf(ic, sizeof(ic), "%u", p->icmp_code);
	}
	const char *status = an_status_names[p->status];
	const char *l3 = an_l3_names[p->l3];

	if (fmt == AN_LOG_CSV) {
		put(&s, "%llu,%u,%u,%u,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n",
		    (unsigned long long)r->ts_ns, r->instance, r->wire_len,
		    r->cap_len, status, msrc, mdst, vlan, et, l3, ttl, l4, src,
		    dst, sp, dp, it, ic, frag);
	} else {
		/* Every string here is hex, digits, dots or colons: no JSON
		 * escaping is needed. Absent values are null. */
#define JS(name, v) put(&s, ",\"" name "\":%s%s%s", *(v) ? "\"" : "", \
			*(v) ? (v) : "null", *(v) ? "\"" : "")
#define JN(name, v) put(&s, ",\"" name "\":%s", *(v) ? (v) : "null")
		put(&s, "{\"ts_ns\":%llu,\"instance\":%u,\"wire_len\":%u,"
			"\"cap_len\":%u,\"status\":\"%s\"",
		    (unsigned long long)r->ts_ns, r->instance, r->wire_len,
		    r->cap_len, status);
		JS("mac_src", msrc);
		JS("mac_dst", mdst);
		JS("vlan", vlan);
		JS("ethertype", et);
		put(&s, ",\"l3\":\"%s\"", l3);
		JN("ttl", ttl);
		JN("l4_proto", l4);
		JS("src", src);
		JS("dst", dst);
		JN("sport", sp);
		JN("dport", dp);
		JN("icmp_type", it);
		JN("icmp_code", ic);
		put(&s, ",\"fragment\":\"%s\"}\n", frag);
#undef JS
#undef JN
	}
	return s.overflow ? 0 : s.len;
}
