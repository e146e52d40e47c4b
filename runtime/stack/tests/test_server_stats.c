/* pp_server_stats: the latency histogram's buckets and quantiles (every
 * value below the upper edge its quantile reports, at most a quarter
 * octave above it; buckets in the order of the values), the keys of the
 * shared objects in their order (an app's own keys where they belong),
 * and the counter sums. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pp_server.h"
#include "pp_server_stats.h"

static int failures;

static void
check(bool ok, const char *what, unsigned long long v)
{
	if (!ok) {
		fprintf(stderr, "test_server_stats: %s (value %llu)\n", what, v);
		failures++;
	}
}

static void
test_buckets(void)
{
	unsigned last = 0;
	for (uint64_t ns = 0; ns < 1u << 20; ns++) {
		unsigned b = pp_latency_bucket(ns);
		check(b >= last && b < PP_LATENCY_BUCKETS, "buckets follow the values", ns);
		last = b;
	}
	check(pp_latency_bucket(UINT64_MAX) == PP_LATENCY_BUCKETS - 1, "the largest value fits", 0);
	static const uint64_t some[] = { 1, 2, 3, 4, 5, 7, 8, 1000, 1023, 1024, 1279, 1280, 999999,
		1000000, 123456789, 1ull << 40, (1ull << 40) + 1 };
	for (size_t i = 0; i < sizeof(some) / sizeof(some[0]); i++) {
		struct pp_latency l = { 0 };
		uint64_t max = 0;
		pp_latency_add(&l, &max, some[i]);
		double up = pp_latency_quantile_us(&l, 0.5) * 1000.0;
		check(max == some[i] && l.n == 1 && l.sum_ns == some[i], "one value counted",
			some[i]);
		check(up >= (double)some[i], "the upper edge is at the value or above", some[i]);
		check(some[i] < 4 || (up > (double)some[i] && up <= (double)some[i] * 1.25 + 1),
			"the upper edge within a quarter octave", some[i]);
	}
	struct pp_latency l = { 0 };
	uint64_t max = 0;
	check(pp_latency_quantile_us(&l, 0.99) == 0, "an empty histogram's quantile is 0", 0);
	for (uint64_t v = 1; v <= 100; v++)
		pp_latency_add(&l, &max, v * 1000);
	check(max == 100000, "the maximum", max);
	double p50 = pp_latency_quantile_us(&l, 0.50), p99 = pp_latency_quantile_us(&l, 0.99);
	check(p50 > 50.0 && p50 <= 64.0, "p50 of 1..100 us", (unsigned long long)p50);
	check(p99 > 99.0 && p99 <= 128.0, "p99 of 1..100 us", (unsigned long long)p99);
	check(pp_latency_quantile_us(&l, 1.0) >= 100.0, "the largest value's quantile", 0);
}

/* o's keys are keys[0..n-1], in that order */
static void
check_keys(json_t *o, const char *const *keys, size_t n, const char *what)
{
	size_t k = 0;
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v)
	{
		check(k < n && strcmp(key, keys[k]) == 0, what, k);
		k++;
	}
	check(k == n, what, k);
}

static void
test_json(void)
{
	struct pp_latency l = { 0 };
	uint64_t max = 0;
	pp_latency_add(&l, &max, 3000);
	pp_latency_add(&l, &max, 5000);
	json_t *o = pp_latency_json(
		&l, max, "what it times", "chunks", (const unsigned[]){ 50, 90, 99, 0 });
	static const char *const keys[] = { "what", "chunks", "mean", "p50", "p90", "p99", "max" };
	check_keys(o, keys, 7, "latency keys in their order");
	check(json_integer_value(json_object_get(o, "chunks")) == 2, "the count", 2);
	check(json_real_value(json_object_get(o, "mean")) == 4.0, "the mean in us", 4);
	check(json_real_value(json_object_get(o, "max")) == 5.0, "the maximum in us", 5);
	check(json_real_value(json_object_get(o, "p50")) > 3.0, "p50 above the smaller value", 3);
	json_decref(o);

	const struct pp_stream_counters r = { 1, 2, 3, 4, 5, 6 };
	const struct pp_store_counters t = { 7, 8, 9, 10, 11, 12, 13 };
	const struct pp_json_count own[] = { { "mine", 14 }, { "also_mine", 15 } };
	o = pp_streams_json(&r, own, 2, &t);
	static const char *const sk[] = { "started", "complete", "short", "reset", "cut_by_run_end",
		"mine", "also_mine", "truncated_header", "stored", "store_failed" };
	static const uint64_t sv[] = { 1, 2, 3, 4, 5, 14, 15, 6, 7, 8 };
	check_keys(o, sk, 10, "streams keys in their order");
	for (size_t i = 0; i < 10; i++)
		check(json_integer_value(json_object_get(o, sk[i])) == (json_int_t)sv[i],
			"streams values", i);
	json_decref(o);
	o = pp_store_json(NULL, &t);
	static const char *const ok[] = { "dir", "bytes", "files", "open_errors", "write_errors",
		"sequence_gaps" };
	check_keys(o, ok, 6, "output keys in their order");
	check(json_is_null(json_object_get(o, "dir")), "no --out: dir null", 0);
	check(json_integer_value(json_object_get(o, "bytes")) == 12 &&
			json_integer_value(json_object_get(o, "files")) == 13,
		"output values", 0);
	json_decref(o);
	const struct pp_receipt_counters rc = { 1, 2, 3 };
	o = pp_receipts_json(&rc);
	static const char *const rk[] = { "sent", "not_sent_peer_gone", "not_sent_no_room" };
	check_keys(o, rk, 3, "receipts keys in their order");
	check(json_integer_value(json_object_get(o, "not_sent_no_room")) == 3, "receipts values",
		0);
	json_decref(o);
	check(pp_store_report("test", NULL, 3, "x") == 0 &&
			pp_store_report("test", "/d", 0, "x") == 0,
		"nothing to report", 0);
}

/* The teardown's line, as the apps printed it themselves before. */
static void
test_report(void)
{
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	if (f == NULL || saved < 0) {
		check(false, "a temporary file for stderr", 0);
		return;
	}
	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	int rc = pp_store_report("netdedup", "/out", 2, "stream(s) not written whole");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	char line[256] = "";
	rewind(f);
	check(fgets(line, sizeof(line), f) != NULL, "a line said", 0);
	fclose(f);
	check(rc == -1 &&
			strcmp(line,
				"netdedup: 2 stream(s) not written whole to /out (see "
				"app_stats.output)\n") == 0,
		"the store failures said", (unsigned long long)rc);
}

static void
test_counters(void)
{
	struct {
		uint64_t a, b;
		struct pp_latency l;
	} sum = { 1, 2, { { 0 }, 0, 0 } }, add = { 10, 20, { { 0 }, 5, 1 } };
	add.l.hist[7] = 3;
	pp_counters_add(&sum, &add, sizeof(sum));
	check(sum.a == 11 && sum.b == 22, "counters summed", sum.a);
	check(sum.l.hist[7] == 3 && sum.l.sum_ns == 5 && sum.l.n == 1, "histograms summed", 0);
}

int
main(void)
{
	test_buckets();
	test_json();
	test_counters();
	test_report();
	if (failures == 0)
		printf("test_server_stats: all checks passed\n");
	return failures != 0;
}
