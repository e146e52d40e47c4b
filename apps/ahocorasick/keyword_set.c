/* The keyword set: a rules file read through the Snort rule parser,
 * filtered by classtype, its content strings merged into distinct keywords
 * with the rules that contain each, and what was left out and why. */
#include "keyword_set.h"
#include "errbuf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ac_dos_classtypes[] = {
	"attempted-dos",
	"denial-of-service",
	"successful-dos",
};
const unsigned ac_n_dos_classtypes = 3;

struct kw_index {
	uint32_t *slot; /* keyword index + 1; 0 = empty */
	uint32_t cap;   /* power of two */
};

static uint64_t
kw_hash(const uint8_t *b, uint32_t len, bool nocase)
{
	uint64_t h = 1469598103934665603ull ^ (nocase ? 0x9e37u : 0);
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h ^ len;
}

/* Room for element n of an array holding n: capacity doubles (8, 16, 32,
 * ...) and is implied by n, so the structs keep no capacity field.  One
 * realloc per element made loading community.rules quadratic under ASan
 * (3 s of copying per serve placement). */
static void *
grow_for(void *a, uint32_t n, size_t size)
{
	if (n != 0 && (n < 8 || (n & (n - 1)) != 0))
		return a;
	return realloc(a, (size_t)(n == 0 ? 8 : 2 * (size_t)n) * size);
}

static int push_skip(struct ac_ruleset *rs, unsigned line, uint32_t sid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int
push_skip(struct ac_ruleset *rs, unsigned line, uint32_t sid, const char *fmt, ...)
{
	struct ac_skip *s = grow_for(rs->skipped, rs->n_skipped, sizeof(*s));
	va_list ap;

	if (s == NULL)
		return -1;
	rs->skipped = s;
	s = &rs->skipped[rs->n_skipped++];
	s->line = line;
	s->sid = sid;
	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
	return 0;
}

static bool
class_selected(const struct ac_filter *f, const struct ac_rule *r)
{
	if (f == NULL || f->classtypes == NULL)
		return true;
	for (unsigned i = 0; i < f->n_classtypes; i++)
		if (strcmp(f->classtypes[i], r->classtype) == 0)
			return true;
	return false;
}

static int
index_grow(struct kw_index *ix, const struct ac_ruleset *rs)
{
	uint32_t cap = ix->cap ? ix->cap * 2 : 1024;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (slot == NULL)
		return -1;
	for (uint32_t k = 0; k < rs->n_keywords; k++) {
		const struct ac_keyword *kw = &rs->keywords[k];
		uint32_t h = (uint32_t)kw_hash(kw->bytes, kw->len, kw->nocase) & (cap - 1);
		while (slot[h])
			h = (h + 1) & (cap - 1);
		slot[h] = k + 1;
	}
	free(ix->slot);
	ix->slot = slot;
	ix->cap = cap;
	return 0;
}

/* Keyword for (bytes, nocase), created if new; the rule is added to its map. */
static int
add_keyword(
	struct ac_ruleset *rs, struct kw_index *ix, const struct ac_content *c, uint32_t rule_idx)
{
	if ((rs->n_keywords + 1) * 2 > ix->cap && index_grow(ix, rs) < 0)
		return -1;
	uint32_t h = (uint32_t)kw_hash(c->bytes, c->len, c->nocase) & (ix->cap - 1);
	struct ac_keyword *kw = NULL;
	for (; ix->slot[h]; h = (h + 1) & (ix->cap - 1)) {
		struct ac_keyword *k = &rs->keywords[ix->slot[h] - 1];
		if (k->len == c->len && k->nocase == c->nocase &&
			memcmp(k->bytes, c->bytes, c->len) == 0) {
			kw = k;
			break;
		}
	}
	if (kw == NULL) {
		struct ac_keyword *nk = grow_for(rs->keywords, rs->n_keywords, sizeof(*nk));
		if (nk == NULL)
			return -1;
		rs->keywords = nk;
		kw = &rs->keywords[rs->n_keywords];
		memset(kw, 0, sizeof(*kw));
		kw->bytes = malloc(c->len);
		if (kw->bytes == NULL)
			return -1;
		memcpy(kw->bytes, c->bytes, c->len);
		kw->len = c->len;
		kw->nocase = c->nocase;
		ix->slot[h] = ++rs->n_keywords;
	}
	/* A rule naming the same keyword twice is listed once. */
	if (kw->n_rules > 0 && kw->rules[kw->n_rules - 1] == rule_idx)
		return 0;
	uint32_t *nr = grow_for(kw->rules, kw->n_rules, sizeof(*nr));
	if (nr == NULL)
		return -1;
	kw->rules = nr;
	kw->rules[kw->n_rules++] = rule_idx;
	return 0;
}

/* Account for one parsed rule: filter it, then keep it or say why not. */
static int
take_rule(struct ac_ruleset *rs, struct kw_index *ix, const struct ac_filter *f, struct ac_rule *r)
{
	char buf[96];
	unsigned used = 0;

	rs->rules_seen++;
	if ((f != NULL && f->enabled_only && r->disabled) || !class_selected(f, r)) {
		rs->rules_filtered++;
		ac_rule_free(r);
		return 0;
	}
	for (unsigned i = 0; i < r->n_contents; i++)
		used += !r->contents[i].negated;
	if (used == 0 && !(f != NULL && f->keep_all)) {
		rs->rules_unusable++;
		int e = push_skip(rs, r->line, r->sid, "%s",
			r->n_contents ? "only negated content (nothing to search for)"
				      : "no content keyword");
		ac_rule_free(r);
		return e;
	}
	struct ac_rule *nr = grow_for(rs->rules, rs->n_rules, sizeof(*nr));
	if (nr == NULL) {
		ac_rule_free(r);
		return -1;
	}
	rs->rules = nr;
	uint32_t idx = rs->n_rules++;
	rs->rules[idx] = *r;
	for (unsigned i = 0; i < r->n_contents; i++) {
		const struct ac_content *c = &r->contents[i];
		if (c->negated) {
			rs->contents_negated++;
			if (push_skip(rs, r->line, r->sid,
				    "negated content !\"%s\" ignored (rule kept)",
				    ac_format_bytes(c->bytes, c->len, buf, sizeof(buf))) < 0)
				return -1;
			continue;
		}
		rs->contents_used++;
		if (add_keyword(rs, ix, c, idx) < 0)
			return -1;
	}
	return 0;
}

int
ac_ruleset_load(const char *path, const struct ac_filter *filter, struct ac_ruleset *rs, char *err,
	size_t errlen)
{
	FILE *f;
	char *line = NULL, *joined = NULL;
	size_t cap = 0, jlen = 0, jcap = 0;
	ssize_t n;
	unsigned lineno = 0, start_line = 0;
	struct kw_index ix = { 0 };
	char perr[192];
	int ret = -1;

	memset(rs, 0, sizeof(*rs));
	f = fopen(path, "r");
	if (f == NULL) {
		ac_set_err(err, errlen, "cannot read rules file '%s': %s", path, strerror(errno));
		return -1;
	}
	rs->path = strdup(path);
	if (rs->path == NULL)
		goto oom;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		if (jlen == 0)
			start_line = lineno;
		bool cont = n > 0 && line[n - 1] == '\\';
		if (cont)
			n--;
		if (jlen + (size_t)n + 1 > jcap) {
			size_t nc = (jlen + (size_t)n + 1) * 2;
			char *nj = realloc(joined, nc);
			if (nj == NULL)
				goto oom;
			joined = nj;
			jcap = nc;
		}
		memcpy(joined + jlen, line, (size_t)n);
		jlen += (size_t)n;
		if (cont)
			continue;
		struct ac_rule r;
		enum ac_line_kind k = ac_rule_parse_line(joined, jlen, &r, perr, sizeof(perr));
		jlen = 0;
		if (k == AC_LINE_IGNORED)
			continue;
		if (k == AC_LINE_ERROR) {
			rs->rules_seen++;
			rs->rules_unusable++;
			if (push_skip(rs, start_line, 0, "malformed: %s", perr) < 0)
				goto oom;
			continue;
		}
		r.line = start_line;
		if (take_rule(rs, &ix, filter, &r) < 0)
			goto oom;
	}
	if (ferror(f)) {
		ac_set_err(err, errlen, "error reading rules file '%s': %s", path, strerror(errno));
		goto out;
	}
	if (jlen > 0) {
		rs->rules_seen++;
		rs->rules_unusable++;
		if (push_skip(rs, start_line, 0,
			    "malformed: file ends inside a '\\' continued line") < 0)
			goto oom;
	}
	rs->lines = lineno;
	rs->keep_all = filter != NULL && filter->keep_all;
	if (filter != NULL && filter->keep_all ? rs->n_rules == 0 : rs->n_keywords == 0) {
		ac_set_err(err, errlen,
			"rules file '%s': no usable content keyword (%u rule lines, %u filtered "
			"out, %u unusable)",
			path, rs->rules_seen, rs->rules_filtered, rs->rules_unusable);
		goto out;
	}
	ret = 0;
	goto out;
oom:
	ac_set_err(err, errlen, "out of memory reading '%s'", path);
out:
	free(ix.slot);
	free(line);
	free(joined);
	fclose(f);
	if (ret < 0)
		ac_ruleset_free(rs);
	return ret;
}

void
ac_ruleset_free(struct ac_ruleset *rs)
{
	for (uint32_t i = 0; i < rs->n_rules; i++)
		ac_rule_free(&rs->rules[i]);
	for (uint32_t i = 0; i < rs->n_keywords; i++) {
		free(rs->keywords[i].bytes);
		free(rs->keywords[i].rules);
	}
	free(rs->rules);
	free(rs->keywords);
	free(rs->skipped);
	free(rs->path);
	memset(rs, 0, sizeof(*rs));
}

void
ac_ruleset_print_summary(const struct ac_ruleset *rs, const char *set_name, FILE *out)
{
	if (rs->keep_all) {
		fprintf(out,
			"rules %s (%s): %u rule lines, %u selected, %u parsed, %u malformed "
			"(listed by --list-skipped)\n",
			rs->path, set_name, rs->rules_seen, rs->rules_seen - rs->rules_filtered,
			rs->n_rules, rs->rules_unusable);
		return;
	}
	fprintf(out,
		"rules %s (%s): %u rule lines, %u selected, %u used, %u unusable "
		"(listed by --list-skipped), %u negated contents ignored; "
		"%u content strings -> %u distinct keywords\n",
		rs->path, set_name, rs->rules_seen, rs->rules_seen - rs->rules_filtered,
		rs->n_rules, rs->rules_unusable, rs->contents_negated, rs->contents_used,
		rs->n_keywords);
}

void
ac_ruleset_print_skipped(const struct ac_ruleset *rs, FILE *out)
{
	for (uint32_t i = 0; i < rs->n_skipped; i++) {
		const struct ac_skip *s = &rs->skipped[i];
		if (s->sid)
			fprintf(out, "%s:%u: sid %u: %s\n", rs->path, s->line, s->sid, s->reason);
		else
			fprintf(out, "%s:%u: %s\n", rs->path, s->line, s->reason);
	}
}
