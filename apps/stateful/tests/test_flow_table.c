/* Unit tests of the flow table library: key extraction, both hashes,
 * create/update/expire, the table-full path and the per-bucket locks.
 * Usage: test_flow_table NAME (one meson test per NAME). */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include "flow_hash.h"
#include "flow_key.h"
#include "flow_table.h"
#include "frame_build.h"

static int failures;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                              \
		}                                                                                \
	} while (0)

#define IP(a, b, c, d) \
	(((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

static struct flow_hasher nprobe_hasher;

static struct flow_pkt
pkt_v4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t sport, uint16_t dport, uint8_t flags)
{
	uint8_t frame[128];
	struct flow_pkt p;
	size_t len = build_ipv4(frame, sizeof(frame), -1, src, dst, proto, sport, dport, flags);

	if (flow_parse_frame(frame, len, &p) != FLOW_PARSE_OK) {
		fprintf(stderr, "frame did not parse\n");
		exit(2);
	}
	return p;
}

static void
test_key_extraction(void)
{
	uint8_t f[128], g[128];
	struct flow_pkt a, b;
	size_t len;
	char s[64];

	/* IPv4 TCP, both directions: one key, opposite dirs. */
	len = build_ipv4(
		f, sizeof(f), -1, IP(10, 0, 0, 2), IP(10, 0, 0, 1), 6, 1234, 80, TCP_FLAG_SYN);
	CHECK(flow_parse_frame(f, len, &a) == FLOW_PARSE_OK);
	len = build_ipv4(g, sizeof(g), -1, IP(10, 0, 0, 1), IP(10, 0, 0, 2), 6, 80, 1234,
		TCP_FLAG_SYN | TCP_FLAG_ACK);
	CHECK(flow_parse_frame(g, len, &b) == FLOW_PARSE_OK);
	CHECK(flow_key_equal(&a.key, &b.key));
	CHECK(a.dir != b.dir);
	CHECK(a.dir == 1); /* 10.0.0.2 is the hi endpoint */
	CHECK(a.key.port_lo == 80 && a.key.port_hi == 1234);
	CHECK(a.key.proto == 6 && a.key.family == FLOW_FAMILY_IPV4);
	CHECK(a.tcp_flags == TCP_FLAG_SYN);
	CHECK(b.tcp_flags == (TCP_FLAG_SYN | TCP_FLAG_ACK));
	CHECK(strcmp(flow_key_addr_str(&a.key, false, s, sizeof(s)), "10.0.0.1") == 0);
	CHECK(strcmp(flow_key_addr_str(&a.key, true, s, sizeof(s)), "10.0.0.2") == 0);

	/* VLAN tag: id in the key; same 5-tuple on another VLAN is another flow. */
	len = build_ipv4(
		g, sizeof(g), 42, IP(10, 0, 0, 2), IP(10, 0, 0, 1), 6, 1234, 80, TCP_FLAG_SYN);
	CHECK(flow_parse_frame(g, len, &b) == FLOW_PARSE_OK);
	CHECK(b.key.vlan == 42);
	CHECK(!flow_key_equal(&a.key, &b.key));

	/* UDP */
	len = build_ipv4(f, sizeof(f), -1, IP(192, 168, 1, 1), IP(8, 8, 8, 8), 17, 5353, 53, 0);
	CHECK(flow_parse_frame(f, len, &a) == FLOW_PARSE_OK);
	CHECK(a.key.proto == 17 && a.tcp_flags == 0);
	CHECK(a.key.port_lo == 53 && a.key.port_hi == 5353 && a.dir == 1);

	/* IPv4 fragment (offset != 0): keyed without ports. */
	len = build_ipv4(f, sizeof(f), -1, IP(1, 2, 3, 4), IP(5, 6, 7, 8), 17, 1000, 2000, 0);
	wr16(f + 14 + 6, 0x0010);
	CHECK(flow_parse_frame(f, len, &a) == FLOW_PARSE_OK);
	CHECK(a.key.port_lo == 0 && a.key.port_hi == 0 && a.key.proto == 17);

	/* ICMP: no ports */
	len = build_ipv4(f, sizeof(f), -1, IP(1, 2, 3, 4), IP(5, 6, 7, 8), 1, 0x0800, 0x1234, 0);
	CHECK(flow_parse_frame(f, len, &a) == FLOW_PARSE_OK);
	CHECK(a.key.port_lo == 0 && a.key.port_hi == 0 && a.key.proto == 1);

	/* Snap-length cut TCP header: ports known, flags not. */
	len = build_ipv4(
		f, sizeof(f), -1, IP(1, 2, 3, 4), IP(5, 6, 7, 8), 6, 1111, 2222, TCP_FLAG_SYN);
	CHECK(flow_parse_frame(f, 14 + 20 + 8, &a) == FLOW_PARSE_OK);
	CHECK(a.key.port_lo == 1111 && a.tcp_flags == 0);
	/* ... but less than the ports is malformed. */
	CHECK(flow_parse_frame(f, 14 + 20 + 3, &a) == FLOW_PARSE_MALFORMED);
	/* Truncated IPv4 header, bad IHL, bad version. */
	CHECK(flow_parse_frame(f, 14 + 19, &a) == FLOW_PARSE_MALFORMED);
	f[14] = 0x44;
	CHECK(flow_parse_frame(f, len, &a) == FLOW_PARSE_MALFORMED);
	f[14] = 0x55;
	CHECK(flow_parse_frame(f, len, &a) == FLOW_PARSE_MALFORMED);
	CHECK(flow_parse_frame(f, 10, &a) == FLOW_PARSE_MALFORMED);

	/* ARP is not IP. */
	memset(f, 0, sizeof(f));
	wr16(f + 12, 0x0806);
	CHECK(flow_parse_frame(f, 60, &a) == FLOW_PARSE_NOT_IP);

	/* IPv6 + hop-by-hop options + UDP. */
	memset(f, 0, sizeof(f));
	wr16(f + 12, 0x86dd);
	f[14] = 0x60;
	wr16(f + 14 + 4, 8 + 8);
	f[14 + 6] = 0; /* next: hop-by-hop */
	f[14 + 7] = 64;
	f[14 + 8] = 0x20; /* src 2001:db8::1 */
	f[14 + 9] = 0x01;
	f[14 + 10] = 0x0d;
	f[14 + 11] = 0xb8;
	f[14 + 23] = 1;
	f[14 + 24] = 0x20; /* dst 2001:db8::2 */
	f[14 + 25] = 0x01;
	f[14 + 26] = 0x0d;
	f[14 + 27] = 0xb8;
	f[14 + 39] = 2;
	f[54] = 17; /* hop-by-hop: next UDP, length 0 (8 bytes) */
	wr16(f + 62, 546);
	wr16(f + 64, 547);
	CHECK(flow_parse_frame(f, 14 + 40 + 16, &a) == FLOW_PARSE_OK);
	CHECK(a.key.family == FLOW_FAMILY_IPV6 && a.key.proto == 17);
	CHECK(a.key.port_lo == 546 && a.key.port_hi == 547 && a.dir == 0);
	CHECK(strcmp(flow_key_addr_str(&a.key, true, s, sizeof(s)), "2001:db8::2") == 0);
	/* Extension header running past the packet. */
	f[55] = 10;
	CHECK(flow_parse_frame(f, 14 + 40 + 16, &a) == FLOW_PARSE_MALFORMED);
}

static void
test_nprobe_hash(void)
{
	struct flow_pkt a = pkt_v4(IP(10, 0, 0, 1), IP(10, 0, 0, 2), 6, 1234, 80, 0);
	struct flow_pkt b = pkt_v4(IP(10, 0, 0, 2), IP(10, 0, 0, 1), 6, 80, 1234, 0);
	struct flow_pkt c = pkt_v4(IP(10, 0, 0, 0), IP(10, 0, 0, 2), 6, 1235, 80, 0);

	/* vlan 0 + proto 6 + 0x0a000001 + 0x0a000002 + 1234 + 80 */
	CHECK(flow_hash_nprobe(&a.key) == 0x14000003u + 6 + 1234 + 80);
	CHECK(flow_hash_nprobe(&a.key) == 0x1400052bu);
	CHECK(flow_hash(&nprobe_hasher, &a.key) == 0x1400052bu);
	/* symmetric */
	CHECK(flow_hash_nprobe(&b.key) == flow_hash_nprobe(&a.key));
	/* the flaw: src - 1 and sport + 1 keep the sum */
	CHECK(!flow_key_equal(&a.key, &c.key));
	CHECK(flow_hash_nprobe(&c.key) == flow_hash_nprobe(&a.key));
	/* VLAN id is part of the sum */
	a.key.vlan = 7;
	CHECK(flow_hash_nprobe(&a.key) == 0x1400052bu + 7);
}

static void
test_keyed_hash(void)
{
	struct flow_hasher h1, h2, h1_again, r1, r2;
	struct flow_pkt a = pkt_v4(IP(10, 0, 0, 1), IP(10, 0, 0, 2), 6, 1234, 80, 0);
	struct flow_pkt c = pkt_v4(IP(10, 0, 0, 0), IP(10, 0, 0, 2), 6, 1235, 80, 0);
	char err[256];
	unsigned differ = 0, i;

	CHECK(flow_hasher_init(
		      &h1, "keyed", "000102030405060708090a0b0c0d0e0f", err, sizeof(err)) == 0);
	CHECK(flow_hasher_init(&h1_again, "keyed", "000102030405060708090a0b0c0d0e0f", err,
		      sizeof(err)) == 0);
	CHECK(flow_hasher_init(
		      &h2, "keyed", "ff0102030405060708090a0b0c0d0e0f", err, sizeof(err)) == 0);
	CHECK(flow_hash(&h1, &a.key) == flow_hash(&h1_again, &a.key));
	CHECK(flow_hash(&h1, &a.key) != flow_hash(&h2, &a.key));
	/* nProbe's colliding pair does not collide under SipHash. */
	CHECK(flow_hash(&h1, &a.key) != flow_hash(&h1, &c.key));
	/* Random keys: two runs differ. */
	CHECK(flow_hasher_init(&r1, "keyed", NULL, err, sizeof(err)) == 0);
	CHECK(flow_hasher_init(&r2, "keyed", NULL, err, sizeof(err)) == 0);
	CHECK(memcmp(r1.key, r2.key, sizeof(r1.key)) != 0);
	/* Over many keys the hash of one flow key changes nearly every time. */
	for (i = 0; i < 100; i++) {
		CHECK(flow_hasher_init(&r2, "keyed", NULL, err, sizeof(err)) == 0);
		differ += flow_hash(&r1, &a.key) != flow_hash(&r2, &a.key);
	}
	CHECK(differ >= 99);
	/* Bad values are refused with a message naming them. */
	CHECK(flow_hasher_init(&r1, "keyed", "0011", err, sizeof(err)) == -1);
	CHECK(strstr(err, "0011") != NULL);
	CHECK(flow_hasher_init(
		      &r1, "keyed", "zz0102030405060708090a0b0c0d0e0f", err, sizeof(err)) == -1);
	CHECK(flow_hasher_init(&r1, "murmur", NULL, err, sizeof(err)) == -1);
	CHECK(strstr(err, "murmur") != NULL);
	CHECK(flow_hasher_init(
		      &r1, "nprobe", "000102030405060708090a0b0c0d0e0f", err, sizeof(err)) == -1);
}

struct find_arg {
	const struct flow_key *key;
	const struct flow_record *found;
};

static void
find_cb(const struct flow_record *r, void *arg)
{
	struct find_arg *f = arg;

	if (flow_key_equal(&r->key, f->key))
		f->found = r;
}

static const struct flow_record *
find(const struct flow_table *t, const struct flow_key *k)
{
	struct find_arg f = { k, NULL };

	flow_table_foreach(t, find_cb, &f);
	return f.found;
}

static enum flow_update
upd(struct flow_table *t, const struct flow_pkt *p, uint32_t len, uint64_t now,
	struct flow_counters *c)
{
	return flow_table_update(t, p, flow_hash(&t->hasher, &p->key), len, now, c);
}

static void
test_create_update_expire(void)
{
	struct flow_table *t = flow_table_create(1024, 1000, &nprobe_hasher, 0);
	struct flow_counters c = { 0 };
	const uint32_t cli = IP(10, 1, 0, 1), srv = IP(10, 2, 0, 1);
	struct flow_pkt syn = pkt_v4(cli, srv, 6, 40000, 443, TCP_FLAG_SYN);
	struct flow_pkt synack = pkt_v4(srv, cli, 6, 443, 40000, TCP_FLAG_SYN | TCP_FLAG_ACK);
	struct flow_pkt ack = pkt_v4(cli, srv, 6, 40000, 443, TCP_FLAG_ACK);
	struct flow_pkt fin1 = pkt_v4(srv, cli, 6, 443, 40000, TCP_FLAG_FIN | TCP_FLAG_ACK);
	struct flow_pkt fin2 = pkt_v4(cli, srv, 6, 40000, 443, TCP_FLAG_FIN | TCP_FLAG_ACK);
	struct flow_pkt udp = pkt_v4(cli, srv, 17, 5000, 53, 0);
	const struct flow_record *r;
	uint64_t hist[FLOW_CHAIN_HIST];
	uint32_t cursor = 0, swept, b;

	CHECK(t != NULL);
	if (t == NULL)
		return;
	CHECK(upd(t, &syn, 60, 10, &c) == FLOW_UPDATE_CREATED);
	r = find(t, &syn.key);
	CHECK(r != NULL && r->state == FLOW_STATE_NEW);
	CHECK(upd(t, &synack, 70, 20, &c) == FLOW_UPDATE_HIT);
	CHECK(r->state == FLOW_STATE_NEW);
	CHECK(upd(t, &ack, 80, 30, &c) == FLOW_UPDATE_HIT);
	CHECK(r->state == FLOW_STATE_ESTABLISHED);
	CHECK(upd(t, &fin1, 90, 40, &c) == FLOW_UPDATE_HIT);
	CHECK(r->state == FLOW_STATE_CLOSING);
	CHECK(upd(t, &fin2, 100, 50, &c) == FLOW_UPDATE_HIT);
	CHECK(r->state == FLOW_STATE_CLOSED);
	/* Direction is relative to the initiator (the SYN's sender). */
	CHECK(r->packets[0] == 3 && r->packets[1] == 2);
	CHECK(r->bytes[0] == 60 + 80 + 100 && r->bytes[1] == 70 + 90);
	CHECK(r->first_tsc == 10 && r->last_tsc == 50);
	CHECK(r->tcp_flags == (TCP_FLAG_SYN | TCP_FLAG_ACK | TCP_FLAG_FIN));

	CHECK(upd(t, &udp, 64, 60, &c) == FLOW_UPDATE_CREATED);
	CHECK(find(t, &udp.key)->state == FLOW_STATE_NONE);
	CHECK(c.created == 2 && c.hits == 4 && c.lookups == 6 && c.table_full == 0);
	CHECK(flow_table_chain_histogram(t, hist) == 1);
	CHECK(hist[1] == 2 && hist[0] == FLOW_TABLE_BUCKETS - 2);

	/* RST closes at once. */
	{
		struct flow_pkt s = pkt_v4(cli, srv, 6, 40001, 443, TCP_FLAG_SYN);
		struct flow_pkt rst = pkt_v4(srv, cli, 6, 443, 40001, TCP_FLAG_RST);

		CHECK(upd(t, &s, 60, 60, &c) == FLOW_UPDATE_CREATED);
		CHECK(upd(t, &rst, 60, 61, &c) == FLOW_UPDATE_HIT);
		CHECK(find(t, &s.key)->state == FLOW_STATE_CLOSED);
	}

	/* Sweep: nothing is idle at 500, everything (last seen <= 61) at 1100. */
	swept = 0;
	for (b = 0; b < FLOW_TABLE_BUCKETS; b += 256)
		swept += flow_table_sweep(t, &cursor, 256, 500, &c);
	CHECK(swept == 0 && c.expired == 0);
	CHECK(upd(t, &udp, 64, 700, &c) == FLOW_UPDATE_HIT); /* keeps UDP alive */
	for (b = 0; b < FLOW_TABLE_BUCKETS; b += 256)
		swept += flow_table_sweep(t, &cursor, 256, 1100, &c);
	CHECK(swept == 2 && c.expired == 2);
	CHECK(find(t, &syn.key) == NULL);
	CHECK(find(t, &udp.key) != NULL);

	/* Lazy expiry: an idle record with the packet's key is reclaimed and
	 * the packet starts a new flow. */
	CHECK(upd(t, &udp, 64, 5000, &c) == FLOW_UPDATE_CREATED);
	CHECK(c.expired == 3);
	r = find(t, &udp.key);
	CHECK(r != NULL && r->packets[0] == 1 && r->first_tsc == 5000);
	/* ... and so is an idle record met in the chain of another key. */
	{
		struct flow_pkt same_bucket = pkt_v4(cli + 1, srv, 17, 4999, 53, 0);

		CHECK(flow_hash_nprobe(&same_bucket.key) == flow_hash_nprobe(&udp.key));
		CHECK(upd(t, &same_bucket, 64, 9000, &c) == FLOW_UPDATE_CREATED);
		CHECK(c.expired == 4);
		CHECK(find(t, &udp.key) == NULL);
	}
	flow_table_free(t);

	/* idle_tsc 0: never expires. */
	t = flow_table_create(16, 0, &nprobe_hasher, 0);
	CHECK(upd(t, &udp, 64, 1, &c) == FLOW_UPDATE_CREATED);
	CHECK(flow_table_sweep(t, &cursor, FLOW_TABLE_BUCKETS, UINT64_MAX / 2, &c) == 0);
	CHECK(upd(t, &udp, 64, UINT64_MAX / 2, &c) == FLOW_UPDATE_HIT);
	flow_table_free(t);
}

static void
test_table_full(void)
{
	struct flow_table *t = flow_table_create(4, 1000, &nprobe_hasher, 0);
	struct flow_counters c = { 0 };
	struct flow_pkt p[6];
	uint32_t cursor = 0, i;

	CHECK(t != NULL);
	if (t == NULL)
		return;
	for (i = 0; i < 6; i++)
		p[i] = pkt_v4(IP(10, 0, 0, 1 + i), IP(10, 9, 9, 9), 17, 1000, 53, 0);
	for (i = 0; i < 4; i++)
		CHECK(upd(t, &p[i], 60, 10, &c) == FLOW_UPDATE_CREATED);
	CHECK(upd(t, &p[4], 60, 11, &c) == FLOW_UPDATE_FULL);
	CHECK(upd(t, &p[5], 60, 11, &c) == FLOW_UPDATE_FULL);
	CHECK(c.table_full == 2 && c.created == 4);
	/* existing flows are still updated while full */
	CHECK(upd(t, &p[0], 60, 12, &c) == FLOW_UPDATE_HIT);
	CHECK(find(t, &p[4].key) == NULL);
	/* once flows 1..3 expire their records are reused */
	CHECK(upd(t, &p[0], 60, 1005, &c) == FLOW_UPDATE_HIT);
	CHECK(flow_table_sweep(t, &cursor, FLOW_TABLE_BUCKETS, 1012, &c) == 3);
	CHECK(upd(t, &p[4], 60, 1013, &c) == FLOW_UPDATE_CREATED);
	CHECK(upd(t, &p[5], 60, 1013, &c) == FLOW_UPDATE_CREATED);
	CHECK(find(t, &p[0].key) != NULL && find(t, &p[5].key) != NULL);
	flow_table_free(t);

	CHECK(flow_table_create(0, 0, &nprobe_hasher, 0) == NULL);
}

#define HAMMER_FLOWS 8
#define HAMMER_ROUNDS 4000000

static pthread_barrier_t hammer_start;
/* The CPUs we may use, read before rte_eal_init pins this thread to lcore 0:
 * the hammer threads must run on different CPUs to really race. */
static cpu_set_t all_cpus;

struct hammer_arg {
	struct flow_table *t;
	struct flow_pkt pkts[2 * HAMMER_FLOWS]; /* both directions */
	struct flow_counters c;
};

static void *
hammer(void *argp)
{
	struct hammer_arg *a = argp;
	uint64_t i;

	/* Both threads start together so that their updates overlap. */
	pthread_barrier_wait(&hammer_start);
	for (i = 0; i < HAMMER_ROUNDS; i++) {
		const struct flow_pkt *p = &a->pkts[i % (2 * HAMMER_FLOWS)];

		flow_table_update(a->t, p, flow_hash(&a->t->hasher, &p->key), 100, i, &a->c);
	}
	return NULL;
}

struct sum_arg {
	uint64_t packets, bytes, records;
};

static void
sum_cb(const struct flow_record *r, void *arg)
{
	struct sum_arg *s = arg;

	s->packets += r->packets[0] + r->packets[1];
	s->bytes += r->bytes[0] + r->bytes[1];
	s->records++;
}

static void
test_lock_two_threads(void)
{
	struct flow_table *t = flow_table_create(64, 0, &nprobe_hasher, 0);
	struct hammer_arg args[2];
	struct sum_arg sum = { 0 };
	pthread_t th[2];
	pthread_attr_t attr;
	uint64_t hist[FLOW_CHAIN_HIST];
	unsigned i, k;

	CHECK(t != NULL);
	if (t == NULL)
		return;
	for (k = 0; k < 2; k++) {
		memset(&args[k], 0, sizeof(args[k]));
		args[k].t = t;
		/* All flows in ONE bucket (constant nProbe sum); both threads
		 * send the same packets, both directions, so they write the same
		 * counters of the same records. */
		for (i = 0; i < HAMMER_FLOWS; i++) {
			args[k].pkts[i] = pkt_v4(IP(10, 0, 0, 1 + i), IP(10, 0, 1, 1), 6,
				(uint16_t)(2000 - i), 80, TCP_FLAG_ACK);
			args[k].pkts[HAMMER_FLOWS + i] = pkt_v4(IP(10, 0, 1, 1),
				IP(10, 0, 0, 1 + i), 6, 80, (uint16_t)(2000 - i), TCP_FLAG_ACK);
		}
	}
	pthread_barrier_init(&hammer_start, NULL, 2);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(all_cpus), &all_cpus);
	for (k = 0; k < 2; k++)
		CHECK(pthread_create(&th[k], &attr, hammer, &args[k]) == 0);
	pthread_attr_destroy(&attr);
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	pthread_barrier_destroy(&hammer_start);

	flow_table_foreach(t, sum_cb, &sum);
	CHECK(sum.records == HAMMER_FLOWS);
	CHECK(sum.packets == 2ull * HAMMER_ROUNDS);
	CHECK(sum.bytes == 2ull * HAMMER_ROUNDS * 100);
	CHECK(args[0].c.created + args[1].c.created == HAMMER_FLOWS);
	CHECK(args[0].c.hits + args[1].c.hits + HAMMER_FLOWS == 2ull * HAMMER_ROUNDS);
	CHECK(flow_table_chain_histogram(t, hist) == HAMMER_FLOWS);
	CHECK(hist[HAMMER_FLOWS] == 1);
	fprintf(stderr, "two threads on %d CPUs: %" PRIu64 " packets in %" PRIu64 " records\n",
		CPU_COUNT(&all_cpus), sum.packets, sum.records);
	flow_table_free(t);
}

/* What the end hook saw: reason, packets and bytes both ways, first/last. */
struct ended {
	unsigned n;
	struct {
		enum flow_end_reason why;
		uint64_t packets, bytes, first, last;
		uint16_t port_lo;
	} e[16];
};

static void
record_end(
	const struct flow_record *r, enum flow_end_reason why, struct flow_counters *c, void *arg)
{
	struct ended *x = arg;

	(void)c;
	if (x->n < RTE_DIM(x->e)) {
		x->e[x->n].why = why;
		x->e[x->n].packets = r->packets[0] + r->packets[1];
		x->e[x->n].bytes = r->bytes[0] + r->bytes[1];
		x->e[x->n].first = r->first_tsc;
		x->e[x->n].last = r->last_tsc;
		x->e[x->n].port_lo = r->key.port_lo;
	}
	x->n++;
}

/* The export hook: every way a flow ends, on explicit timestamps. */
static void
test_end_hook(void)
{
	struct flow_table *t = flow_table_create(2, 1000, &nprobe_hasher, 0);
	struct flow_counters c = { 0 };
	struct ended x = { 0 };
	const uint32_t cli = IP(10, 1, 0, 1), srv = IP(10, 2, 0, 1);
	struct flow_pkt syn = pkt_v4(cli, srv, 6, 40000, 443, TCP_FLAG_SYN);
	struct flow_pkt fin1 = pkt_v4(srv, cli, 6, 443, 40000, TCP_FLAG_FIN | TCP_FLAG_ACK);
	struct flow_pkt fin2 = pkt_v4(cli, srv, 6, 40000, 443, TCP_FLAG_FIN | TCP_FLAG_ACK);
	struct flow_pkt rst = pkt_v4(cli, srv, 6, 40001, 443, TCP_FLAG_RST);
	struct flow_pkt udp = pkt_v4(cli, srv, 17, 5000, 53, 0);
	uint32_t cursor = 0, b;

	CHECK(t != NULL);
	if (t == NULL)
		return;
	flow_table_set_end_hook(t, 300, record_end, &x);

	/* FIN both ways: reported (end of flow) and removed at once. */
	CHECK(upd(t, &syn, 60, 10, &c) == FLOW_UPDATE_CREATED);
	CHECK(upd(t, &fin1, 70, 20, &c) == FLOW_UPDATE_HIT);
	CHECK(x.n == 0);
	CHECK(upd(t, &fin2, 80, 30, &c) == FLOW_UPDATE_HIT);
	CHECK(x.n == 1 && x.e[0].why == FLOW_END_EOF && x.e[0].packets == 3 &&
		x.e[0].bytes == 210 && x.e[0].first == 10 && x.e[0].last == 30);
	CHECK(find(t, &syn.key) == NULL && c.expired == 1);
	/* A later packet of the 5-tuple is a new flow. */
	CHECK(upd(t, &fin2, 80, 40, &c) == FLOW_UPDATE_CREATED);

	/* A lone RST: a one-packet flow, reported and never in the table. */
	CHECK(upd(t, &rst, 54, 41, &c) == FLOW_UPDATE_CREATED);
	CHECK(x.n == 2 && x.e[1].why == FLOW_END_EOF && x.e[1].packets == 1);
	CHECK(find(t, &rst.key) == NULL);

	/* Active timeout (300): reported, counts restart, the flow goes on. */
	CHECK(upd(t, &udp, 100, 50, &c) == FLOW_UPDATE_CREATED);
	CHECK(upd(t, &udp, 100, 200, &c) == FLOW_UPDATE_HIT);
	CHECK(x.n == 2);
	CHECK(upd(t, &udp, 100, 350, &c) == FLOW_UPDATE_HIT);
	CHECK(x.n == 3 && x.e[2].why == FLOW_END_ACTIVE && x.e[2].packets == 2 &&
		x.e[2].first == 50 && x.e[2].last == 200);
	CHECK(find(t, &udp.key) != NULL && find(t, &udp.key)->packets[0] == 1 &&
		find(t, &udp.key)->first_tsc == 350);

	/* Table pressure: 2 records (the FIN flow's successor and UDP); a
	 * third flow in UDP's bucket evicts it, one in an empty bucket is
	 * counted as table full. */
	{
		/* Same nProbe sum as udp: source + 1, source port - 1. */
		struct flow_pkt col = pkt_v4(cli + 1, srv, 17, 4999, 53, 0);
		struct flow_pkt lone = pkt_v4(IP(192, 0, 2, 9), srv, 17, 7, 9, 0);

		CHECK(upd(t, &col, 100, 360, &c) == FLOW_UPDATE_CREATED);
		CHECK(x.n == 4 && x.e[3].why == FLOW_END_LACK && x.e[3].port_lo == 5000);
		CHECK(c.evicted == 1 && c.table_full == 0);
		CHECK(upd(t, &lone, 100, 361, &c) == FLOW_UPDATE_FULL);
		CHECK(c.table_full == 1 && x.n == 4);
	}

	/* Idle (1000): the sweep reports both records left. */
	for (b = 0; b < FLOW_TABLE_BUCKETS; b += 256)
		flow_table_sweep(t, &cursor, 256, 2000, &c);
	CHECK(x.n == 6 && x.e[4].why == FLOW_END_IDLE && x.e[5].why == FLOW_END_IDLE);
	CHECK(c.ended[FLOW_END_EOF] == 2 && c.ended[FLOW_END_ACTIVE] == 1 &&
		c.ended[FLOW_END_LACK] == 1 && c.ended[FLOW_END_IDLE] == 2);
	CHECK(c.created - c.expired == 0);
	flow_table_free(t);
}

/* The inspector hooks: a fake detector that settles a flow on its third
 * packet; finish settles the rest when they end, before the end hook. */
struct inspector_log {
	unsigned packets, finished, settled_before_end, ended;
};
static struct inspector_log ilog;

static void
fake_packet(struct flow_record *r, const struct flow_pkt *p, uint64_t now, struct flow_counters *c)
{
	(void)p;
	(void)now;
	(void)c;
	ilog.packets++;
	r->app_status = FLOW_APP_INSPECTING;
	if (++r->app_packets == 3) {
		r->app_status = FLOW_APP_DONE;
		r->app_proto = 7;
	}
}

static void
fake_finish(struct flow_record *r, struct flow_counters *c)
{
	(void)c;
	ilog.finished++;
	r->app_status = FLOW_APP_DONE;
	r->app_proto = 1;
}

static void
inspected_end(
	const struct flow_record *r, enum flow_end_reason why, struct flow_counters *c, void *arg)
{
	(void)why;
	(void)c;
	(void)arg;
	ilog.ended++;
	ilog.settled_before_end += r->app_status == FLOW_APP_DONE;
}

static void
test_inspector(void)
{
	struct flow_table *t = flow_table_create(8, 1000, &nprobe_hasher, 0);
	struct flow_counters c = { 0 };
	struct flow_pkt a = pkt_v4(IP(10, 0, 0, 1), IP(10, 0, 0, 2), 17, 1000, 53, 0);
	struct flow_pkt b = pkt_v4(IP(10, 0, 0, 3), IP(10, 0, 0, 4), 17, 2000, 53, 0);
	uint32_t cursor = 0, k;

	CHECK(t != NULL);
	if (t == NULL)
		return;
	memset(&ilog, 0, sizeof(ilog));
	flow_table_set_inspector(t, fake_packet, fake_finish);
	flow_table_set_end_hook(t, 0, inspected_end, NULL);
	/* Flow a: five packets, the detector sees three, then no more. */
	for (k = 0; k < 5; k++)
		upd(t, &a, 60, 10 + k, &c);
	CHECK(ilog.packets == 3 && ilog.finished == 0);
	CHECK(find(t, &a.key)->app_proto == 7 && find(t, &a.key)->app_packets == 3);
	/* Flow b: one packet, still inspecting when it expires: finish settles
	 * it before the end hook reports it. */
	upd(t, &b, 60, 20, &c);
	CHECK(ilog.packets == 4);
	for (k = 0; k < FLOW_TABLE_BUCKETS; k += 256)
		flow_table_sweep(t, &cursor, 256, 5000, &c);
	CHECK(ilog.finished == 1 && ilog.ended == 2 && ilog.settled_before_end == 2);
	/* A new flow on a recycled record starts fresh. */
	upd(t, &b, 60, 6000, &c);
	CHECK(find(t, &b.key)->app_packets == 1 && find(t, &b.key)->app_proto == 0);
	flow_table_free(t);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "inspector", test_inspector },
	{ "key_extraction", test_key_extraction },
	{ "nprobe_hash", test_nprobe_hash },
	{ "keyed_hash", test_keyed_hash },
	{ "create_update_expire", test_create_update_expire },
	{ "table_full", test_table_full },
	{ "lock_two_threads", test_lock_two_threads },
	{ "end_hook", test_end_hook },
};

int
main(int argc, char **argv)
{
	char *eal_argv[] = { argv[0], "--no-shconf", "--no-huge", "-m", "128", "--no-pci",
		"--no-telemetry", "-l", "0", "--log-level=error", NULL };
	char err[128];
	size_t i;
	int ran = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s TEST\n", argv[0]);
		return 2;
	}
	sched_getaffinity(0, sizeof(all_cpus), &all_cpus);
	if (rte_eal_init(RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 2;
	}
	if (flow_hasher_init(&nprobe_hasher, "nprobe", NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	for (i = 0; i < RTE_DIM(tests); i++) {
		if (strcmp(argv[1], tests[i].name) == 0) {
			tests[i].fn();
			ran = 1;
		}
	}
	rte_eal_cleanup();
	if (!ran) {
		fprintf(stderr, "unknown test '%s'\n", argv[1]);
		return 2;
	}
	if (failures)
		fprintf(stderr, "%s: %d check(s) failed\n", argv[1], failures);
	return failures ? 1 : 0;
}
